// The repair stage: the selected failures become trajectories of the teacher in an ordinary run
// directory, mapped by tasks.jsonl, opening with the Fixit repair prompt; a second call resumes;
// report, export and run --resume work on the run. The teacher is an OpenAI-compatible server on
// loopback; a test executor stands in for the GPU.
#include "adapt/repair.hpp"
#include "adapt_test_support.hpp"
#include "agent/prompt.hpp"
#include "model/http_transport.hpp"
#include "model_stage_support.hpp"
#include "store/run_store.hpp"
#include "support/loopback_model.hpp"
#include "support/loopback_server.hpp"
#include "support/ptxbench_cli.hpp"

#include <csignal>
#include <gtest/gtest.h>
#include <mutex>
#include <regex>
#include <sys/wait.h>
#include <thread>

using namespace ptxbench;
using namespace ptxbench::adapt;
using namespace ptxbench::adapt::testing;
using test_support::chat_body;
using test_support::LoopbackServer;
using test_support::reply_json;

namespace {

// The teacher answers each repair with "fixed <n>", n read from the wrong kernel it was shown.
void teacher(const httplib::Request& request, httplib::Response& response) {
  const std::string task = nlohmann::json::parse(request.body)["messages"][1]["content"];
  std::smatch match;
  std::regex_search(task, match, std::regex("wrong kernel (\\d+)"));
  reply_json(response, chat_body("```cuda\n#include <cuda_runtime.h>\n// fixed " + match[1].str() +
                                 "\n__global__ void k() {}\nvoid run(cudaStream_t stream) { "
                                 "k<<<1, 1, 0, stream>>>(); }\n```\n"));
}

// Kernels fixing failure 0 are correct at speedup 0.2; every other kernel is wrong. Sets
// `cancel` (when given) after `before_cancel` evaluations.
class StandIn final : public agent::Executor {
public:
  explicit StandIn(std::atomic<bool>* cancel = nullptr, std::size_t before_cancel = 0)
      : m_cancel(cancel), m_before_cancel(before_cancel) {}
  util::Expected<agent::TurnResult> evaluate(const std::string& source, const suite::Problem&,
                                             compile::Arch) override {
    std::lock_guard lock(m_mutex);
    agent::TurnResult result;
    const bool fixed = source.find("fixed 0") != std::string::npos;
    result.category = fixed ? store::TurnCategory::correct : store::TurnCategory::numerical;
    if (fixed)
      result.speedup = 0.2;
    result.feedback = fixed ? "Evaluation results:\n" : "Evaluation FAILED:\n";
    result.evaluation.kernel_source = source;
    result.evaluation.speedup = result.speedup;
    if (m_cancel != nullptr && ++m_calls == m_before_cancel)
      *m_cancel = true;
    return result;
  }
  std::string_view name() const override { return "stand-in"; }

private:
  std::atomic<bool>* m_cancel;
  std::size_t m_before_cancel;
  std::size_t m_calls = 0;
  std::mutex m_mutex;
};

struct RepairFixture {
  ScratchDir dir;
  LoopbackServer server{
      [](int, const httplib::Request& q, httplib::Response& r) { teacher(q, r); }};
  model::ModelRegistry registry;
  std::unique_ptr<model::HttpTransport> transport = model::make_curl_transport();
  std::vector<FailureRecord> failures{failure(0), failure(1, "numerical")};

  RepairFixture() {
    auto loaded = model::load_registry(test_support::write_registry(dir, server.base_url()));
    if (!loaded)
      throw util::Fatal(loaded.error().message);
    registry = std::move(*loaded);
    write_records(repair_paths(dir.path()).selected, failures);
  }
  RepairOptions options() const {
    RepairOptions o;
    o.data_dir = dir.path();
    o.teacher = "loop";
    o.turns = 3;
    o.jobs = 1;
    return o;
  }
  agent::RunDeps deps(agent::Executor& executor, const std::atomic<bool>* cancel = nullptr) {
    agent::RunDeps d;
    d.executor = &executor;
    d.suite = &real_suite();
    d.manifest = &real_manifest();
    d.registry = &registry;
    d.client.transport = transport.get();
    d.cancel = cancel;
    return d;
  }
};

store::TrajectoryKey key_of(const Json& json) {
  return *trajectory_key_from_json(json);
}

} // namespace

TEST(Repair, EachSelectedFailureIsATrajectoryOfTheTeacherOpeningWithTheRepairPrompt) {
  RepairFixture f;
  StandIn executor;
  auto result = run_repair(f.options(), f.deps(executor));
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ(result->start, RepairStart::fresh);
  ASSERT_EQ(result->repairs, 2u);
  EXPECT_EQ(result->summary.finished(), 2);
  EXPECT_EQ(result->summary.trajectories[0].result->exit, store::ExitReason::target_met);
  EXPECT_EQ(result->summary.trajectories[1].result->exit, store::ExitReason::turn_budget);
  EXPECT_EQ(result->summary.trajectories[1].result->counted_turns, 3);
  // tasks.jsonl maps every failure id to the key of its trajectory in the store.
  const RepairPaths paths = repair_paths(f.dir.path());
  const auto tasks = read_lines(paths.tasks);
  ASSERT_EQ(tasks.size(), 2u);
  auto store = store::RunStore::open_existing(paths.run_dir);
  ASSERT_TRUE(store) << store.error().message;
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(tasks[i]["failure_id"], f.failures[i].id);
    const store::TrajectoryKey key = key_of(tasks[i]["trajectory_key"]);
    EXPECT_EQ(key, (store::TrajectoryKey{"loop", "gemm_n7168_k5120", "none",
                                         static_cast<std::int64_t>(i)}));
    auto trajectory = (*store)->find_trajectory(key);
    ASSERT_TRUE(trajectory && *trajectory);
    auto prompts = (*store)->prompts((*trajectory)->id);
    ASSERT_TRUE(prompts && *prompts);
    const auto& problem = **real_suite().find("gemm_n7168_k5120");
    EXPECT_EQ((*prompts)->task,
              *agent::repair_prompt(frontend::of(compile::Language::cuda), problem,
                                    f.failures[i].kernel_source, f.failures[i].feedback));
    EXPECT_NE((*prompts)->task.find("Error Message\n\n" + f.failures[i].feedback),
              std::string::npos);
  }
  // What the teacher was sent: the system prompt, then the repair prompt.
  ASSERT_EQ(f.server.count(), 4u); // 1 turn for failure 0, 3 for failure 1
  auto first = f.server.requests()[0].json()["messages"];
  EXPECT_EQ(first[0]["role"], "system");
  EXPECT_EQ(first[1]["content"].get<std::string>().rfind("Task:\n```json\n", 0), 0u);
  EXPECT_NE(first[1]["content"].get<std::string>().find("Your task is to fix the CUDA kernel "
                                                        "with the minimal change."),
            std::string::npos);
}

TEST(Repair, ASecondCallResumesTheRunWithoutRepeatingFinishedTurns) {
  RepairFixture f;
  std::atomic<bool> cancel{false};
  StandIn stopping(&cancel, 2); // stops after failure 0 is fixed and failure 1's first turn
  auto first = run_repair(f.options(), f.deps(stopping, &cancel));
  ASSERT_TRUE(first) << first.error().message;
  EXPECT_EQ(first->summary.finished(), 1);
  EXPECT_EQ(f.server.count(), 2u);
  StandIn executor;
  auto second = run_repair(f.options(), f.deps(executor));
  ASSERT_TRUE(second) << second.error().message;
  EXPECT_EQ(second->start, RepairStart::resumed);
  EXPECT_EQ(second->summary.finished(), 2);
  EXPECT_EQ(second->summary.trajectories[1].result->counted_turns, 3);
  EXPECT_EQ(f.server.count(), 4u); // two more turns of failure 1, nothing of failure 0
  // The resumed turns still open with the repair prompt and carry the earlier turn.
  auto last = f.server.requests()[3].json()["messages"];
  EXPECT_NE(last[1]["content"].get<std::string>().find("wrong kernel 1"), std::string::npos);
  EXPECT_EQ(last.size(), 6u); // system, repair prompt, 2 × (reply, feedback)
  EXPECT_EQ(read_lines(repair_paths(f.dir.path()).tasks).size(), 2u);
}

TEST(Repair, AnExistingRunContinuesOnlyWithItsFailuresAndTeacher) {
  RepairFixture f;
  StandIn executor;
  ASSERT_TRUE(run_repair(f.options(), f.deps(executor)));
  write_records(repair_paths(f.dir.path()).selected, std::vector{failure(0), failure(2)});
  auto changed = run_repair(f.options(), f.deps(executor));
  ASSERT_FALSE(changed);
  EXPECT_NE(changed.error().message.find("other selected failures"), std::string::npos);
  write_records(repair_paths(f.dir.path()).selected, f.failures);
  RepairOptions other = f.options();
  other.teacher = "someone-else";
  auto teacher_changed = run_repair(other, f.deps(executor));
  ASSERT_FALSE(teacher_changed);
  EXPECT_NE(teacher_changed.error().message.find("teacher loop"), std::string::npos);
}

TEST(Repair, NoSelectedFailuresIsAnErrorThatNamesTheBalanceStage) {
  ScratchDir dir;
  RepairOptions options;
  options.data_dir = dir.path();
  options.teacher = "loop";
  auto plan = repair_plan(options);
  ASSERT_FALSE(plan);
  EXPECT_NE(plan.error().message.find("run the balance stage first"), std::string::npos);
}

// The command end to end: a teacher that never writes code (extraction turns need no nvcc),
// then report, export and run --resume on the repair run.
TEST(RepairCli, TheRepairRunIsAnOrdinaryRunDirectory) {
  ScratchDir dir;
  ScratchDir cache;
  LoopbackServer server([](int, const httplib::Request&, httplib::Response& response) {
    reply_json(response, chat_body("I would change the fence, but here is no code."));
  });
  const auto registry = test_support::write_registry(dir, server.base_url());
  write_records(repair_paths(dir.path()).selected, std::vector{failure(0), failure(1)});
  const std::string data = dir.path().string();
  auto repaired =
      test_support::run_ptxbench({"fixit", "repair", data, "--teacher", "loop", "--registry",
                                  registry.string(), "--turns", "2", "--static-only", "--quiet"},
                                 cache);
  EXPECT_EQ(repaired.exit_code, 0) << repaired.out << repaired.err;
  EXPECT_NE(repaired.out.find("2 of 2 trajectories finished"), std::string::npos) << repaired.out;
  EXPECT_EQ(server.count(), 4u);
  const std::string run = repair_paths(dir.path()).run_dir.string();
  EXPECT_TRUE(std::filesystem::exists(repair_paths(dir.path()).run_dir / "exports"));
  auto report = test_support::run_ptxbench({"report", run}, cache);
  EXPECT_EQ(report.exit_code, 0) << report.err;
  auto resumed = test_support::run_ptxbench({"run", "--resume", run, "--quiet"}, cache);
  EXPECT_EQ(resumed.exit_code, 0) << resumed.out << resumed.err;
  EXPECT_EQ(server.count(), 4u);
  auto again =
      test_support::run_ptxbench({"fixit", "repair", data, "--teacher", "loop", "--registry",
                                  registry.string(), "--static-only", "--quiet"},
                                 cache);
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.out.find("(resumed)"), std::string::npos) << again.out;
}

namespace {

// The `fixit repair` command line over the data directory `dir` (whose selected failures are
// written), with the teacher at `registry`.
std::vector<std::string> repair_command(const ScratchDir& dir,
                                        const std::filesystem::path& registry) {
  write_records(repair_paths(dir.path()).selected, std::vector{failure(0), failure(1)});
  return {"fixit",           "repair",  dir.path().string(),
          "--teacher",       "loop",    "--registry",
          registry.string(), "--turns", "2",
          "--jobs",          "1",       "--static-only",
          "--quiet"};
}

// The `fixit all` command line of a recipe that collects two failures from a run in `dir`,
// balances them and repairs them with the teacher at `registry`.
std::vector<std::string> recipe_command(const ScratchDir& dir,
                                        const std::filesystem::path& registry) {
  {
    auto run = test::open_run(dir.path() / "run");
    test::add_trajectory(*run, test::key("gemm_n7168_k5120", 0, "none"),
                         {test::failed(store::TurnCategory::compile, "a"),
                          test::failed(store::TurnCategory::numerical, "b")});
  }
  const nlohmann::json recipe{{"name", "t"},
                              {"kind", "fixit"},
                              {"sources", {(dir.path() / "run").string()}},
                              {"balance", {{"cap", 33}}},
                              {"repair", {{"teacher", "loop"}, {"turns", 2}}}};
  const auto recipe_file = dir.path() / "recipe.json";
  EXPECT_TRUE(util::write_file_atomic(recipe_file, recipe.dump()));
  return {"fixit",         "all",
          "--recipe",      recipe_file.string(),
          "--out",         (dir.path() / "data").string(),
          "--registry",    registry.string(),
          "--static-only", "--quiet"};
}

using CommandFor = std::vector<std::string> (*)(const ScratchDir&, const std::filesystem::path&);

// Ctrl-C stops `fixit repair` (and the recipe's repair stage) as it stops `run`: the turn in
// flight finishes, the repair run stays resumable, and the exit code is 130 (143 for SIGTERM),
// not 1 (a negative verdict).
void expect_stop_code(int signal, int code, CommandFor command = repair_command) {
  ScratchDir dir;
  ScratchDir cache;
  std::atomic<int> requests{0};
  LoopbackServer* self = nullptr;
  LoopbackServer server([&](int, const httplib::Request&, httplib::Response& response) {
    if (requests.fetch_add(1) == 0)
      self->hold(std::chrono::seconds(60));
    reply_json(response, chat_body("I would change the fence, but here is no code."));
  });
  self = &server;
  const auto registry = test_support::write_registry(dir, server.base_url());
  pid_t pid = test_support::spawn_ptxbench(command(dir, registry), cache);
  ASSERT_GT(pid, 0);
  for (int i = 0; i < 3000 && requests.load() == 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  // The first request is held; a recipe's repair runs trajectories in parallel, whose other
  // requests are answered at once.
  ASSERT_GE(requests.load(), 1) << "the repair never called the teacher";
  ASSERT_EQ(kill(pid, signal), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  server.release();
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(WEXITSTATUS(status), code);
  EXPECT_LT(server.count(), 4u) << "the repair stopped before every turn was asked";
}

} // namespace

TEST(RepairCli, CtrlCExits130AndSigtermExits143) {
  expect_stop_code(SIGINT, 130);
  expect_stop_code(SIGTERM, 143);
}

TEST(RepairCli, ARecipeStoppedInItsRepairStageExits130AndSigtermExits143) {
  expect_stop_code(SIGINT, 130, recipe_command);
  expect_stop_code(SIGTERM, 143, recipe_command);
}
