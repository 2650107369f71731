// fleet::Broker against a real PostgreSQL server on loopback (support/postgres_server.hpp):
// leasing by architecture, one result per task however late the presumed-dead worker answers,
// poisoned tasks, fairness between runs, back-pressure, NOTIFY wake-ups, a server restart, and
// the schema's version.
#include "fleet/broker.hpp"
#include "fleet/status_view.hpp"
#include "support/postgres_server.hpp"

#include <gtest/gtest.h>
#include <thread>

using namespace ptxbench;
using namespace ptxbench::fleet;
using test_support::PostgresServer;

namespace {

BrokerOptions options_for(const PostgresServer& server) {
  BrokerOptions options;
  options.url = server.url();
  options.reconnect_window = std::chrono::seconds(30);
  return options;
}

std::unique_ptr<Broker> connected(const BrokerOptions& options) {
  auto broker = Broker::connect(options);
  if (!broker)
    throw std::runtime_error(broker.error().message);
  return std::move(*broker);
}

Submission submission(const std::string& run, const std::string& key,
                      compile::Arch arch = compile::Arch::sm_90a) {
  Submission out;
  out.run = run;
  out.client_key = key;
  out.request.problem = "gemm_n7168_k5120";
  out.request.source = "__global__ void k() {} // " + key;
  out.request.options.arch = arch;
  return out;
}

WorkerInfo worker(const std::string& id, compile::Arch arch = compile::Arch::sm_90a) {
  return WorkerInfo{id, "host", "cpu", "", arch};
}

TaskOutcome completed(const std::string& by) {
  TaskOutcome outcome;
  outcome.result = {{"status", "PASSED"}, {"by", by}};
  return outcome;
}

} // namespace

TEST(Broker, AWorkerLeasesOnlyTasksOfItsArchitectureAndTheResultComesBack) {
  PostgresServer server;
  auto broker = connected(options_for(server));
  auto hopper = broker->submit(submission("run-a", "1"));
  auto blackwell = broker->submit(submission("run-a", "2", compile::Arch::sm_100a));
  ASSERT_TRUE(hopper && blackwell);
  auto leased = broker->lease(worker("b200", compile::Arch::sm_100a));
  ASSERT_TRUE(leased && *leased) << (leased ? "nothing leased" : leased.error().message);
  EXPECT_EQ((*leased)->id, *blackwell);
  EXPECT_EQ((*leased)->request.options.arch, compile::Arch::sm_100a);
  EXPECT_EQ((*leased)->request.source, "__global__ void k() {} // 2");
  auto none = broker->lease(worker("b200", compile::Arch::sm_100a));
  ASSERT_TRUE(none);
  EXPECT_FALSE(*none);
  ASSERT_TRUE(*broker->finish(**leased, completed("b200")));
  auto tasks = broker->tasks({*blackwell, *hopper});
  ASSERT_TRUE(tasks) << tasks.error().message;
  EXPECT_EQ((*tasks)[0].state, FleetState::completed);
  EXPECT_EQ((*(*tasks)[0].result)["by"], "b200");
  EXPECT_EQ((*tasks)[1].state, FleetState::queued);
  EXPECT_EQ(broker->tasks({424242}).error().kind, util::ErrorKind::not_found);
}

TEST(Broker, AResubmittedClientKeyIsTheSameTaskAndAFullRunIsPushedBack) {
  PostgresServer server;
  BrokerOptions options = options_for(server);
  options.max_queued_per_run = 2;
  auto broker = connected(options);
  const auto first = broker->submit(submission("run-a", "k1"));
  ASSERT_TRUE(first);
  EXPECT_EQ(*broker->submit(submission("run-a", "k1")), *first);
  ASSERT_TRUE(broker->submit(submission("run-a", "k2")));
  auto full = broker->submit(submission("run-a", "k3"));
  ASSERT_FALSE(full);
  EXPECT_EQ(full.error().kind, util::ErrorKind::rate_limited);
  EXPECT_NE(full.error().message.find("run-a already has 2 queued tasks"), std::string::npos);
  EXPECT_TRUE(broker->submit(submission("run-b", "k1"))) << "the bound is per run";
  EXPECT_EQ(server.psql("SELECT count(*) FROM ptxbench_tasks"), "3");
}

TEST(Broker, ALateResultFromAPresumedDeadWorkerNeverOverwritesTheRecordedOne) {
  PostgresServer server;
  BrokerOptions options = options_for(server);
  options.lease = std::chrono::seconds(1);
  auto broker = connected(options);
  const auto id = broker->submit(submission("run-a", "1"));
  ASSERT_TRUE(id);
  auto first = broker->lease(worker("host-1/cpu"));
  ASSERT_TRUE(first && *first);
  EXPECT_EQ((*first)->attempt, 1);
  EXPECT_FALSE(broker->lease(worker("host-2/cpu"))->has_value())
      << "a live lease is not taken over";
  std::this_thread::sleep_for(std::chrono::milliseconds(1500)); // by the database's clock
  auto second = broker->lease(worker("host-2/cpu"));
  ASSERT_TRUE(second && *second);
  EXPECT_EQ((*second)->id, *id);
  EXPECT_EQ((*second)->attempt, 2);
  EXPECT_FALSE(*broker->heartbeat(**first));
  EXPECT_TRUE(*broker->heartbeat(**second));
  EXPECT_TRUE(*broker->finish(**second, completed("host-2")));
  EXPECT_FALSE(*broker->finish(**first, completed("host-1"))) << "the late result was written";
  auto task = broker->tasks({*id});
  ASSERT_TRUE(task);
  EXPECT_EQ((*(*task)[0].result)["by"], "host-2");
  EXPECT_EQ((*task)[0].attempts, 2);
  EXPECT_EQ((*task)[0].deaths, 1);
}

TEST(Broker, ATaskWhoseWorkersKeepDyingFailsWithTheReasonAndTheQueueGoesOn) {
  PostgresServer server;
  BrokerOptions options = options_for(server);
  options.lease = std::chrono::seconds(1);
  options.max_deaths = 2;
  auto broker = connected(options);
  const auto poisoned = broker->submit(submission("run-a", "poison"));
  ASSERT_TRUE(poisoned);
  ASSERT_TRUE(broker->lease(worker("w1"))->has_value());
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  ASSERT_TRUE(broker->lease(worker("w2"))->has_value()); // the first death: leased again
  const auto healthy = broker->submit(submission("run-a", "healthy"));
  ASSERT_TRUE(healthy);
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  auto next = broker->lease(worker("w3")); // the second death: failed, the next task leased
  ASSERT_TRUE(next && *next);
  EXPECT_EQ((*next)->id, *healthy);
  auto task = broker->tasks({*poisoned});
  ASSERT_TRUE(task);
  EXPECT_EQ((*task)[0].state, FleetState::failed);
  EXPECT_NE((*task)[0].error.find("2 workers took this task and none finished it (the last, w2"),
            std::string::npos)
      << (*task)[0].error;
}

TEST(Broker, RunsSharingTheFleetAreServedInTurnAndPriorityGoesFirst) {
  PostgresServer server;
  auto broker = connected(options_for(server));
  for (const char* key : {"1", "2", "3"})
    ASSERT_TRUE(broker->submit(submission("busy-run", key)));
  ASSERT_TRUE(broker->submit(submission("small-run", "1")));
  std::vector<std::string> order;
  for (int i = 0; i < 4; ++i) {
    auto leased = broker->lease(worker("w"));
    ASSERT_TRUE(leased && *leased);
    order.push_back((*leased)->run);
  }
  EXPECT_EQ(order, (std::vector<std::string>{"busy-run", "small-run", "busy-run", "busy-run"}));
  Submission urgent = submission("small-run", "urgent");
  urgent.priority = 5;
  ASSERT_TRUE(broker->submit(submission("busy-run", "4")));
  ASSERT_TRUE(broker->submit(urgent));
  EXPECT_EQ((*broker->lease(worker("w")))->request.source, urgent.request.source);
}

TEST(Broker, AWaitingClientIsWokenByTheFinishAndARequeuedTaskIsLeasedAgain) {
  PostgresServer server;
  auto client = connected(options_for(server));
  auto worker_side = connected(options_for(server));
  const auto id = client->submit(submission("run-a", "1"));
  ASSERT_TRUE(id);
  auto leased = worker_side->lease(worker("w"));
  ASSERT_TRUE(leased && *leased);
  ASSERT_TRUE(*worker_side->finish(
      **leased, TaskOutcome{OutcomeKind::requeue, {}, {}, "the GPU throttled (sw power cap)"}));
  auto again = worker_side->lease(worker("w"));
  ASSERT_TRUE(again && *again);
  EXPECT_EQ((*again)->attempt, 2);
  std::thread finisher([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    (void)worker_side->finish(**again, completed("w"));
  });
  const auto start = std::chrono::steady_clock::now();
  auto done = client->wait({*id}, std::chrono::seconds(20));
  finisher.join();
  ASSERT_TRUE(done) << done.error().message;
  EXPECT_EQ((*done)[0].state, FleetState::completed);
  EXPECT_EQ((*done)[0].requeues, 1);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

TEST(Broker, AServerRestartIsRiddenOutByReconnectingWithBackoff) {
  PostgresServer server;
  auto broker = connected(options_for(server));
  ASSERT_TRUE(broker->submit(submission("run-a", "before")));
  server.restart();
  auto after = broker->submit(submission("run-a", "after"));
  ASSERT_TRUE(after) << after.error().message;
  std::thread later([&] {
    std::this_thread::sleep_for(std::chrono::seconds(2));
    server.start();
  });
  server.kill();
  auto leased = broker->lease(worker("w")); // the server is down for two seconds
  later.join();
  ASSERT_TRUE(leased && *leased) << (leased ? "nothing" : leased.error().message);
  EXPECT_EQ(server.psql("SELECT count(*) FROM ptxbench_tasks"), "2");
}

TEST(Broker, ANewerSchemaThanThisBuildKnowsIsRefusedAndAPasswordInTheUrlToo) {
  PostgresServer server;
  connected(options_for(server));
  server.psql("UPDATE ptxbench_meta SET value = '99' WHERE key = 'schema_version'");
  auto newer = Broker::connect(options_for(server));
  ASSERT_FALSE(newer);
  EXPECT_NE(newer.error().message.find("schema version 99, newer than this build's 1"),
            std::string::npos)
      << newer.error().message;
  BrokerOptions with_password = options_for(server);
  with_password.url = "postgresql://ptxbench:hunter2@127.0.0.1:1/postgres";
  auto refused = Broker::connect(with_password);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().kind, util::ErrorKind::invalid_input);
  EXPECT_EQ(refused.error().message.find("hunter2"), std::string::npos);
  EXPECT_NE(refused.error().message.find("$PGPASSWORD"), std::string::npos);
  EXPECT_EQ(pg::redact("host=db password=hunter2 user=x"), "host=db password=*** user=x");
}

TEST(Broker, TheStatusCountsWorkersQueuesAndExpiredLeasesInEveryFormat) {
  PostgresServer server;
  auto broker = connected(options_for(server));
  ASSERT_TRUE(broker->submit(submission("run-a", "1")));
  ASSERT_TRUE(broker->submit(submission("run-a", "2")));
  const WorkerInfo w = worker("host-1/cpu");
  ASSERT_TRUE(broker->report_worker(w, "busy", "", 1));
  auto leased = broker->lease(w);
  ASSERT_TRUE(leased && *leased);
  ASSERT_TRUE(*broker->finish(**leased, completed("host-1")));
  auto status = broker->status();
  ASSERT_TRUE(status) << status.error().message;
  ASSERT_EQ(status->workers.size(), 1u);
  EXPECT_EQ(status->workers[0].finished, 1);
  ASSERT_EQ(status->runs.size(), 1u);
  EXPECT_EQ(status->runs[0].queued, 1);
  EXPECT_EQ(status->runs[0].completed, 1);
  EXPECT_EQ(status->finished_last_minute, 1);
  EXPECT_NE(status_text(*status).find("host-1/cpu"), std::string::npos) << status_text(*status);
  EXPECT_EQ(status_json(*status)["runs"][0]["queued"], 1);
  const std::string metrics = status_prometheus(*status);
  EXPECT_NE(metrics.find("ptxbench_fleet_tasks{run=\"run-a\",state=\"queued\"} 1\n"),
            std::string::npos)
      << metrics;
  EXPECT_NE(metrics.find("ptxbench_fleet_worker_finished_total{worker=\"host-1/cpu\"} 1\n"),
            std::string::npos);
}
