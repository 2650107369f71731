// Issue 31's partitioned worker host, end to end with the real binaries: a real PostgreSQL
// server; host-a, a `ptxbench serve --broker` CPU worker inside a network namespace whose only
// way to the server is a veth link; host-b, a healthy worker on this host. host-a leases a task
// and the link goes down, dropping every packet without a reset, as a failed switch does.
// host-a must notice within a bounded time (its blocked statements fail instead of waiting out
// TCP's retransmissions for a quarter of an hour) while host-b takes the task once the lease
// expires by the database's clock and records it. Once the link is back host-a reconnects, its
// late result for the first attempt is not recorded, and it takes new work.
#include "fleet/broker.hpp"
#include "service_test_support.hpp"
#include "support/fleet_worker_process.hpp"
#include "support/network_namespace.hpp"

#include <fmt/format.h>

using namespace ptxbench;
using namespace ptxbench::service::testing;
using namespace std::chrono_literals;
using test_support::eventually;
using test_support::file_text;
using test_support::FleetWorkerProcess;
using test_support::NetworkNamespace;
using test_support::PostgresNetwork;
using test_support::PostgresServer;
using test_support::run_ptxbench;
using test_support::wait_until;

namespace {

// A task whose source a CPU worker builds and checks in seconds (a new source per key).
std::int64_t submit_fill_task(fleet::Broker& broker, const std::string& key) {
  fleet::Submission task;
  task.run = "partition";
  task.client_key = key;
  task.request.problem = "gemm_n7168_k5120";
  task.request.source = fill_kernel("partition " + key);
  auto id = broker.submit(task);
  if (!id)
    throw std::runtime_error(id.error().message);
  return *id;
}

// "worker|attempt|state" of the task, as psql prints it.
std::string task_row_sql(std::int64_t id) {
  return fmt::format(
      "SELECT worker || '|' || attempt || '|' || state FROM ptxbench_tasks WHERE id = {}", id);
}

bool log_says(const std::filesystem::path& log, const std::string& text) {
  return wait_until([&] { return file_text(log).find(text) != std::string::npos; }, 60s);
}

} // namespace

TEST(FleetPartition, APartitionedWorkerLosesItsLeaseRecordsNothingLateAndTakesWorkOnceHealed) {
  if (const std::string why = NetworkNamespace::may_create(); !why.empty())
    GTEST_SKIP() << "needs a network namespace: " << why;
  NetworkNamespace link;
  PostgresServer server(PostgresNetwork{{link.host_address()}, {link.subnet()}});
  ScratchDir dir, cache_a, cache_b, client_cache;
  const auto log_a = dir.path() / "host-a.log";
  fleet::BrokerOptions client_options;
  client_options.url = server.url();
  auto client = fleet::Broker::connect(client_options);
  ASSERT_TRUE(client) << client.error().message;

  const std::int64_t first = submit_fill_task(**client, "1");
  FleetWorkerProcess host_a(server.url_at(link.host_address()), "host-a", cache_a, log_a,
                            link.exec_prefix());
  // host-a has renewed its lease once: its heartbeat's connection is up when the link fails.
  ASSERT_TRUE(eventually(server,
                         task_row_sql(first) + " AND lease_until - started_at > interval '3.5 s'",
                         "host-a/cpu|1|running", 120s))
      << server.psql(task_row_sql(first)) << "\n"
      << file_text(log_a);
  link.partition();
  ASSERT_EQ(server.psql(task_row_sql(first)), "host-a/cpu|1|running")
      << "host-a recorded its result before the link went down";

  auto host_b = std::make_unique<FleetWorkerProcess>(server.url(), "host-b", cache_b,
                                                     dir.path() / "host-b.log");
  EXPECT_TRUE(eventually(server, task_row_sql(first), "host-b/cpu|2|completed", 60s))
      << server.psql(task_row_sql(first));
  EXPECT_TRUE(log_says(log_a, "reconnecting for up to"))
      << "host-a never noticed that its broker was gone:\n"
      << file_text(log_a);

  link.heal();
  EXPECT_TRUE(log_says(
      log_a, fmt::format("task {} attempt 1: not recorded, the lease was taken over", first)))
      << file_text(log_a);
  host_b->kill(SIGTERM);
  const std::int64_t second = submit_fill_task(**client, "2");
  EXPECT_TRUE(eventually(server, task_row_sql(second), "host-a/cpu|1|completed", 60s))
      << server.psql(task_row_sql(second)) << "\n"
      << file_text(log_a);

  // One result each: host-a's late one for the first task was not written, nor counted.
  EXPECT_EQ(server.psql(fmt::format(
                "SELECT deaths, result IS NOT NULL FROM ptxbench_tasks WHERE id = {}", first)),
            "1|t");
  EXPECT_TRUE(eventually(server, "SELECT id, state, finished FROM ptxbench_workers ORDER BY id",
                         "host-a/cpu|idle|1\nhost-b/cpu|stopped|1", 10s))
      << server.psql("SELECT * FROM ptxbench_workers");
  auto status =
      run_ptxbench({"fleet", "status", "--broker", server.url(), "--format", "json"}, client_cache);
  ASSERT_EQ(status.exit_code, 0) << status.err;
  const auto json = nlohmann::json::parse(status.out);
  ASSERT_EQ(json["workers"].size(), 2u) << status.out;
  EXPECT_EQ(json["workers"][0]["id"], "host-a/cpu");
  EXPECT_LT(json["workers"][0]["seen_s_ago"].get<double>(), 10.0) << status.out;
  EXPECT_EQ(json["workers"][1]["id"], "host-b/cpu");
  EXPECT_EQ(json["leases_expired"], 1);
  EXPECT_EQ(json["runs"][0]["completed"], 2);
}
