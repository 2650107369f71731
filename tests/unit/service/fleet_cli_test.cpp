// A run through a fleet (issue 31's "Done when"), end to end with the real binaries: a real
// PostgreSQL server on loopback, `ptxbench serve --broker` workers on two simulated hosts (CPU
// workers: static-check evaluations), `ptxbench run --broker` against a model on loopback. One
// worker is killed while it holds a task and the database restarts mid-run; every turn is still
// evaluated exactly once, and `fleet status` shows what happened.
#include "service_test_support.hpp"
#include "store/run_store.hpp"
#include "support/fleet_worker_process.hpp"
#include "support/loopback_model.hpp"
#include "support/loopback_server.hpp"

#include <thread>

using namespace ptxbench;
using namespace ptxbench::service::testing;
using test_support::chat_body;
using test_support::eventually;
using test_support::FleetWorkerProcess;
using test_support::LoopbackServer;
using test_support::PostgresServer;
using test_support::reply_json;
using test_support::run_ptxbench;
using test_support::write_registry;

TEST(FleetCli, ARunThroughTheFleetSurvivesAKilledWorkerAndABrokerRestart) {
  PostgresServer server;
  ScratchDir dir, client_cache, cache_a, cache_b;
  std::atomic<int> replies{0};
  LoopbackServer model([&](int, const httplib::Request&, httplib::Response& response) {
    // A different kernel every turn: each worker builds it (its own compile cache), which is
    // what keeps it busy long enough to be killed.
    reply_json(response, chat_body("```cuda\n" + fill_kernel("fleet " + std::to_string(++replies)) +
                                   "```\n"));
  });
  auto registry = write_registry(dir, model.base_url());
  auto run_dir = dir.path() / "run";

  auto host_a = std::make_unique<FleetWorkerProcess>(server.url(), "host-a", cache_a,
                                                     dir.path() / "host-a.log");
  std::optional<util::ProcessResult> run;
  std::thread runner([&] {
    run = run_ptxbench({"run", "--registry", registry.string(), "--model", "loop", "--variant",
                        "none", "--turns", "4", "--target-speedup", "0", "--quiet", "--broker",
                        server.url(), "--out", run_dir.string()},
                       client_cache);
  });
  // host-a dies holding the first task; host-b, started after, takes it over once the lease
  // expires by the database's clock.
  const bool busy = eventually(server, "SELECT state FROM ptxbench_workers WHERE id = 'host-a/cpu'",
                               "busy", std::chrono::seconds(120));
  host_a->kill(SIGKILL);
  FleetWorkerProcess host_b(server.url(), "host-b", cache_b, dir.path() / "host-b.log");
  const bool one_done =
      eventually(server, "SELECT count(*) >= 2 FROM ptxbench_tasks WHERE state = 'completed'", "t",
                 std::chrono::seconds(120));
  server.restart();
  runner.join();
  ASSERT_TRUE(busy) << "host-a never took a task";
  ASSERT_TRUE(one_done);
  ASSERT_TRUE(run.has_value());
  EXPECT_EQ(run->exit_code, 0) << run->err << run->out;

  auto store = store::RunStore::open_existing(run_dir);
  ASSERT_TRUE(store);
  auto trajectories = *(*store)->trajectories();
  ASSERT_EQ(trajectories.size(), 1u);
  auto turns = *(*store)->finished_turns(trajectories[0].id);
  int evaluated = 0;
  for (const auto& turn : turns) {
    EXPECT_NE(turn.category, store::TurnCategory::infra) << turn.infra_reason.value_or("");
    if (turn.category == store::TurnCategory::static_only) {
      ++evaluated;
      EXPECT_EQ(turn.evaluations.size(), 1u);
    }
  }
  EXPECT_EQ(evaluated, 4);
  // One task per evaluated turn, each completed once; the killed worker's was taken over.
  EXPECT_EQ(server.psql("SELECT count(*), count(*) FILTER (WHERE state = 'completed') FROM "
                        "ptxbench_tasks"),
            "4|4");
  EXPECT_EQ(server.psql("SELECT worker, attempt, deaths FROM ptxbench_tasks ORDER BY id LIMIT 1"),
            "host-b/cpu|2|1");

  auto status =
      run_ptxbench({"fleet", "status", "--broker", server.url(), "--format", "json"}, client_cache);
  ASSERT_EQ(status.exit_code, 0) << status.err;
  const auto json = nlohmann::json::parse(status.out);
  EXPECT_EQ(json["leases_expired"], 1);
  EXPECT_EQ(json["runs"][0]["completed"], 4);
  EXPECT_EQ(json["workers"].size(), 2u);
}

TEST(FleetCli, ABrokerUrlWithAPasswordOrOfAnotherSchemeIsAUsageError) {
  ScratchDir cache;
  auto password = run_ptxbench(
      {"run", "--model", "demo", "--broker", "postgresql://u:secret@127.0.0.1:1/db"}, cache);
  EXPECT_EQ(password.exit_code, 2);
  EXPECT_EQ(password.err.find("secret"), std::string::npos) << password.err;
  EXPECT_NE(password.err.find("$PGPASSWORD"), std::string::npos) << password.err;
  auto scheme = run_ptxbench({"serve", "--broker", "http://127.0.0.1:1"}, cache);
  EXPECT_EQ(scheme.exit_code, 2);
  EXPECT_NE(scheme.err.find("expected a PostgreSQL URL"), std::string::npos) << scheme.err;
  auto both = run_ptxbench({"run", "--model", "demo", "--broker", "postgresql://127.0.0.1:1/db",
                            "--eval-service", "http://127.0.0.1:1"},
                           cache);
  EXPECT_EQ(both.exit_code, 2);
  EXPECT_NE(both.err.find("exclude each other"), std::string::npos) << both.err;
}

TEST(FleetCli, NoWorkersNeedsABrokerAndAnHttpFront) {
  ScratchDir cache;
  auto local = run_ptxbench({"serve", "--no-workers"}, cache);
  EXPECT_EQ(local.exit_code, 2);
  EXPECT_NE(local.err.find("--no-workers belongs with --broker"), std::string::npos) << local.err;
  auto no_front =
      run_ptxbench({"serve", "--broker", "postgresql://127.0.0.1:1/db", "--no-workers"}, cache);
  EXPECT_EQ(no_front.exit_code, 2);
  EXPECT_NE(no_front.err.find("without --port"), std::string::npos) << no_front.err;
  auto open_front = run_ptxbench({"serve", "--broker", "postgresql://127.0.0.1:1/db", "--port", "0",
                                  "--host", "0.0.0.0", "--no-workers"},
                                 cache);
  EXPECT_EQ(open_front.exit_code, 2) << "a front runs code from anyone who reaches it";
  EXPECT_NE(open_front.err.find("--insecure-no-auth"), std::string::npos) << open_front.err;
}
