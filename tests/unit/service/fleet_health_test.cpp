// The fleet's health check (issue 31, docs/service.md "Health") with real fleet hosts, a real
// PostgreSQL server on loopback and the real static check: a stand-in probe plays a GPU that
// throttles or breaks (on the H200 the real probe reads NVML). A throttled GPU's evaluations are
// requeued and never recorded as results, the worker drains after three and its row says why,
// and a healthy worker evaluates every task once; a broken GPU's task is requeued, its worker
// drains and the host asks to restart, but not when the GPU is broken at start. A task the fleet
// fails is an error for the client (an infra turn), never a verdict.
#include "agent/broker_executor.hpp"
#include "fleet/status_view.hpp"
#include "service/fleet_host.hpp"
#include "service_test_support.hpp"
#include "support/postgres_server.hpp"

#include <mutex>
#include <thread>

using namespace ptxbench;
using namespace ptxbench::service::testing;
using measure::HealthEvidence;
using measure::SampleMoment;
using test_support::PostgresServer;

namespace {

constexpr std::uint64_t kPowerCapBit = 0x4, kHwThermalBit = 0x40;

measure::GpuSnapshot standin_h200(unsigned sm_clock_mhz, std::uint64_t reasons,
                                  unsigned temperature_c) {
  measure::GpuSnapshot gpu;
  gpu.device_name = "NVIDIA H200";
  gpu.sm_clock_mhz = sm_clock_mhz;
  gpu.max_sm_clock_mhz = 1980;
  gpu.temperature_c = temperature_c;
  gpu.clock_event_reasons = reasons;
  gpu.clock_event_names = measure::decode_clock_event_reasons(reasons);
  gpu.ecc_uncorrected_volatile = 0;
  gpu.slowdown_temperature_c = 87;
  return gpu;
}

// Under load at its power cap, as the H200 nearly always is: healthy.
HealthEvidence power_capped() {
  HealthEvidence evidence;
  evidence.samples = {{SampleMoment::before_evaluation, standin_h200(1980, 0, 40)},
                      {SampleMoment::after_evaluation, standin_h200(1584, kPowerCapBit, 60)}};
  return evidence;
}

HealthEvidence overheated() {
  HealthEvidence evidence = power_capped();
  evidence.samples.back().gpu = standin_h200(1400, kPowerCapBit | kHwThermalBit, 91);
  return evidence;
}

HealthEvidence illegal_address() {
  HealthEvidence evidence = power_capped();
  evidence.cuda_fault = "cudaErrorIllegalAddress: an illegal memory access was encountered";
  return evidence;
}

// A GPU as `after(n)` describes it at its n-th check (0: the check at start).
class StandInProbe final : public measure::GpuHealthProbe {
public:
  explicit StandInProbe(std::function<HealthEvidence(int)> after) : m_after(std::move(after)) {}
  void before() override {}
  HealthEvidence after() override { return m_after(m_checks++); }

private:
  std::function<HealthEvidence(int)> m_after;
  int m_checks = 0;
};

struct HostLog {
  std::mutex mutex;
  std::vector<std::string> lines;
  std::vector<std::string> restarts;
};

service::FleetHostOptions health_host_options(const PostgresServer& server, const std::string& host,
                                              std::function<HealthEvidence(int)> gpu,
                                              HostLog& log) {
  service::FleetHostOptions options;
  options.broker.url = server.url();
  options.broker.reconnect_window = std::chrono::seconds(30);
  options.host = host;
  options.reference_cache = std::filesystem::path(); // in memory
  options.health_probe = [gpu](std::optional<int>) { return std::make_unique<StandInProbe>(gpu); };
  options.log = [&log](const std::string& line) {
    std::lock_guard lock(log.mutex);
    log.lines.push_back(line);
  };
  options.restart = [&log](const std::string& why) {
    std::lock_guard lock(log.mutex);
    log.restarts.push_back(why);
  };
  return options;
}

std::unique_ptr<service::FleetHost> started_host(service::FleetHostOptions options) {
  auto host = service::FleetHost::start(*tools().checker, *tools().suite, std::move(options));
  if (!host)
    throw std::runtime_error(host.error().message);
  return std::move(*host);
}

std::unique_ptr<fleet::Broker> health_broker(const PostgresServer& server) {
  fleet::BrokerOptions options;
  options.url = server.url();
  options.reconnect_window = std::chrono::seconds(30);
  auto broker = fleet::Broker::connect(options);
  if (!broker)
    throw std::runtime_error(broker.error().message);
  return std::move(*broker);
}

std::int64_t submit_kernel(fleet::Broker& broker, const std::string& marker) {
  exec::EvalRequest request{"gemm_n7168_k5120", fill_kernel(marker), std::nullopt, {}};
  request.options.arch = compile::Arch::sm_90a;
  auto id = broker.submit(fleet::Submission{"run-health", marker, request, 0});
  if (!id)
    throw std::runtime_error(id.error().message);
  return *id;
}

// Polls `sql` until it prints `want` or `limit` passes.
bool health_eventually(const PostgresServer& server, const std::string& sql,
                       const std::string& want, std::chrono::seconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (server.psql(sql) == want)
      return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

std::string worker_row(const PostgresServer& server, const std::string& id) {
  return server.psql("SELECT state || '|' || health || '|' || finished FROM ptxbench_workers "
                     "WHERE id = '" +
                     id + "'");
}

} // namespace

TEST(FleetHealth, AThrottledGpusEvaluationsAreRequeuedNotResultsAndAHealthyWorkerDoesEachOnce) {
  PostgresServer server;
  auto broker = health_broker(server);
  std::vector<std::int64_t> ids;
  for (const char* marker : {"health a", "health b", "health c"})
    ids.push_back(submit_kernel(*broker, marker));

  HostLog hot_log, cool_log;
  auto hot = started_host(health_host_options(
      server, "hot", [](int) { return overheated(); }, hot_log));
  ASSERT_TRUE(health_eventually(server, "SELECT state FROM ptxbench_workers WHERE id = 'hot/cpu'",
                                "draining", std::chrono::seconds(240)))
      << worker_row(server, "hot/cpu");
  const std::string throttled = "throttled: hw_thermal_slowdown at 91 C after the evaluation";
  EXPECT_EQ(worker_row(server, "hot/cpu"), "draining|" + throttled + "|0");
  // Three evaluations, none recorded: every task is still queued, three requeues with the reason.
  EXPECT_EQ(server.psql("SELECT count(*) FILTER (WHERE state = 'queued'), sum(requeues), "
                        "count(result) FROM ptxbench_tasks"),
            "3|3|0");
  EXPECT_EQ(server.psql("SELECT DISTINCT requeue_reason FROM ptxbench_tasks WHERE requeues > 0"),
            throttled);

  auto cool = started_host(health_host_options(
      server, "cool", [](int) { return power_capped(); }, cool_log));
  auto done = broker->wait(ids, std::chrono::seconds(300));
  ASSERT_TRUE(done) << done.error().message;
  for (const fleet::FleetTask& task : *done) {
    EXPECT_EQ(task.state, fleet::FleetState::completed) << task.id << " " << task.error;
    EXPECT_EQ(task.worker, "cool/cpu");
    EXPECT_TRUE(task.result.has_value());
  }
  hot->stop();
  cool->stop();
  EXPECT_EQ(worker_row(server, "hot/cpu"), "stopped|" + throttled + "|0");
  EXPECT_EQ(worker_row(server, "cool/cpu"), "stopped|ok|3");
  EXPECT_TRUE(hot_log.restarts.empty());

  auto status = broker->status();
  ASSERT_TRUE(status) << status.error().message;
  const std::string metrics = fleet::status_prometheus(*status);
  EXPECT_NE(metrics.find("ptxbench_fleet_workers_by_health{health=\"throttled\"} 1\n"),
            std::string::npos)
      << metrics;
  EXPECT_NE(metrics.find("ptxbench_fleet_workers_by_health{health=\"ok\"} 1\n"), std::string::npos);
  EXPECT_NE(fleet::status_text(*status).find(throttled), std::string::npos);
}

TEST(FleetHealth, ABrokenGpuRequeuesItsTaskDrainsAndAsksOnceForARestartButNotWhenBrokenAtStart) {
  PostgresServer server;
  auto broker = health_broker(server);
  const std::int64_t id = submit_kernel(*broker, "health broken");

  HostLog sick_log;
  // Healthy at the check at start, broken after its first evaluation.
  auto sick = started_host(health_host_options(
      server, "sick", [](int check) { return check == 0 ? power_capped() : illegal_address(); },
      sick_log));
  const std::string broken =
      "broken: CUDA probe: cudaErrorIllegalAddress: an illegal memory access was encountered";
  ASSERT_TRUE(health_eventually(server, "SELECT state FROM ptxbench_workers WHERE id = 'sick/cpu'",
                                "draining", std::chrono::seconds(240)))
      << worker_row(server, "sick/cpu");
  EXPECT_EQ(worker_row(server, "sick/cpu"), "draining|" + broken + "|0");
  EXPECT_EQ(server.psql("SELECT state, requeues, requeue_reason, result IS NULL FROM "
                        "ptxbench_tasks WHERE id = " +
                        std::to_string(id)),
            "queued|1|" + broken + "|t");
  sick->stop();
  {
    std::lock_guard lock(sick_log.mutex);
    ASSERT_EQ(sick_log.restarts.size(), 1u);
    EXPECT_EQ(sick_log.restarts[0], "sick/cpu " + broken);
  }

  // After the restart the GPU is still broken: the worker drains at once, asks for no restart
  // (no restart loop) and takes nothing.
  HostLog again_log;
  auto again = started_host(health_host_options(
      server, "sick", [](int) { return illegal_address(); }, again_log));
  ASSERT_TRUE(health_eventually(server, "SELECT state FROM ptxbench_workers WHERE id = 'sick/cpu'",
                                "draining", std::chrono::seconds(60)));
  EXPECT_EQ(worker_row(server, "sick/cpu"), "draining|" + broken + "|0");
  again->stop();
  EXPECT_TRUE(again_log.restarts.empty());
  EXPECT_EQ(
      server.psql("SELECT state, attempt FROM ptxbench_tasks WHERE id = " + std::to_string(id)),
      "queued|1");

  // A healthy worker evaluates the requeued task.
  HostLog cured_log;
  auto cured = started_host(health_host_options(
      server, "cured", [](int) { return power_capped(); }, cured_log));
  auto done = broker->wait({id}, std::chrono::seconds(240));
  ASSERT_TRUE(done) << done.error().message;
  EXPECT_EQ((*done)[0].state, fleet::FleetState::completed);
  EXPECT_EQ((*done)[0].worker, "cured/cpu");
}

TEST(FleetHealth, ATaskTheFleetPoisonedOrNeverFinishedIsAnErrorForTheClientNotAVerdict) {
  PostgresServer server;
  const suite::Problem& problem = **tools().suite->find("gemm_n7168_k5120");
  agent::BrokerClientOptions client;
  client.broker.url = server.url();
  client.broker.reconnect_window = std::chrono::seconds(30);
  client.run = "run-infra";
  client.max_wait = std::chrono::seconds(240);
  agent::BrokerExecutor executor(*tools().checker, client);
  std::optional<util::Expected<agent::TurnResult>> turn;
  std::thread waiting([&] {
    turn = executor.evaluate(fill_kernel("health poisoned"), problem, compile::Arch::sm_90a);
  });
  // Workers that lease the task and die (no heartbeat): after the third expired lease the broker
  // fails it as poisoned.
  fleet::BrokerOptions dying;
  dying.url = server.url();
  dying.lease = std::chrono::seconds(1);
  dying.reconnect_window = std::chrono::seconds(30);
  auto broker = fleet::Broker::connect(dying);
  ASSERT_TRUE(broker) << broker.error().message;
  const fleet::WorkerInfo worker{"dying/cpu", "dying", "cpu", "", compile::Arch::sm_90a};
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(240);
  while (std::chrono::steady_clock::now() < deadline &&
         server.psql("SELECT count(*) FROM ptxbench_tasks WHERE state = 'failed'") != "1") {
    ASSERT_TRUE((*broker)->lease(worker));
    std::this_thread::sleep_for(std::chrono::milliseconds(1200));
  }
  waiting.join();
  ASSERT_TRUE(turn.has_value());
  ASSERT_FALSE(*turn) << "a verdict for a task no worker evaluated: "
                      << store::to_string((*turn)->category);
  EXPECT_NE(turn->error().message.find("none finished it"), std::string::npos)
      << turn->error().message;

  client.max_wait = std::chrono::milliseconds(1500); // a fleet with no worker of this arch
  auto late = agent::BrokerExecutor(*tools().checker, client)
                  .evaluate(fill_kernel("health never"), problem, compile::Arch::sm_100a);
  ASSERT_FALSE(late);
  EXPECT_EQ(late.error().kind, util::ErrorKind::timeout) << late.error().message;
}
