// `ptxbench run`, `export` and `demo` end to end: the real binary against a model server on
// loopback, the real nvcc and SASS scan (static-only: no GPU here), and a SIGKILL in the middle
// of a turn followed by `--resume`.
#include "store/run_store.hpp"
#include "support/loopback_model.hpp"
#include "support/loopback_server.hpp"
#include "support/ptxbench_cli.hpp"
#include "support/scratch_dir.hpp"
#include "util/fs.hpp"
#include "util/subprocess.hpp"

#include <csignal>
#include <cstdlib>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace ptxbench;
using test_support::cache_env;
using test_support::chat_body;
using test_support::LoopbackServer;
using test_support::reply_json;
using test_support::run_ptxbench;
using test_support::ScratchDir;
using test_support::spawn_ptxbench;
using test_support::write_registry;

namespace {

const char* kKernelReply = R"(Here it is.
```cuda
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <cstdint>
__global__ void fill(__nv_bfloat16* C, int64_t n) {
  int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
  if (i < n) C[i] = __float2bfloat16(0.0f);
}
void run(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int64_t M,
         cudaStream_t stream) {
  fill<<<unsigned((M * 7168 + 255) / 256), 256, 0, stream>>>(C, M * 7168);
}
```
)";

} // namespace

TEST(RunCli, ASigkillMidTurnThenResumeNeitherRepeatsNorLosesATurn) {
  ScratchDir dir, cache;
  std::atomic<int> turn_two_requests{0};
  std::vector<std::size_t> message_counts;
  std::mutex mutex;
  LoopbackServer* self = nullptr;
  LoopbackServer server([&](int, const httplib::Request& request, httplib::Response& response) {
    std::size_t count = nlohmann::json::parse(request.body)["messages"].size();
    {
      std::lock_guard lock(mutex);
      message_counts.push_back(count);
    }
    if (count == 6 && turn_two_requests.fetch_add(1) == 0)
      self->hold(std::chrono::seconds(60)); // the first run dies waiting for this reply
    reply_json(response, chat_body(kKernelReply));
  });
  self = &server;
  auto registry = write_registry(dir, server.base_url());
  auto run_dir = dir.path() / "run";
  pid_t pid = spawn_ptxbench({"run", "--registry", registry.string(), "--model", "loop",
                              "--variant", "none", "--turns", "4", "--target-speedup", "0",
                              "--static-only", "--quiet", "--out", run_dir.string()},
                             cache);
  ASSERT_GT(pid, 0);
  for (int i = 0; i < 3000 && turn_two_requests.load() == 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ASSERT_EQ(turn_two_requests.load(), 1) << "the run never reached its third turn";
  ASSERT_EQ(kill(pid, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFSIGNALED(status));
  server.release();

  auto resumed = run_ptxbench({"run", "--resume", run_dir.string(), "--quiet"}, cache);
  EXPECT_EQ(resumed.exit_code, 0) << resumed.err << resumed.out;
  EXPECT_NE(resumed.out.find("turn_budget, 4 counted turns"), std::string::npos) << resumed.out;

  auto store = store::RunStore::open_existing(run_dir);
  ASSERT_TRUE(store);
  auto trajectories = *(*store)->trajectories();
  ASSERT_EQ(trajectories.size(), 1u);
  EXPECT_EQ(trajectories[0].exit_reason, store::ExitReason::turn_budget);
  auto turns = *(*store)->finished_turns(trajectories[0].id);
  ASSERT_EQ(turns.size(), 4u);
  for (std::size_t i = 0; i < turns.size(); ++i) {
    EXPECT_EQ(turns[i].index, static_cast<std::int64_t>(i));
    EXPECT_EQ(turns[i].category, store::TurnCategory::static_only);
  }
  EXPECT_EQ(*(*store)->count_turns(trajectories[0].id, store::TurnState::abandoned), 1);
  // Requests: turns 1 and 2, the killed turn 3, turn 3 again with the same history, turn 4.
  std::lock_guard lock(mutex);
  EXPECT_EQ(message_counts, (std::vector<std::size_t>{2, 4, 6, 6, 8}));
  auto csv = util::read_file(run_dir / "exports" / "turns.csv");
  ASSERT_TRUE(csv);
  EXPECT_EQ(std::count(csv->begin(), csv->end(), '\n'), 5); // header + 4 turns
}

TEST(RunCli, ANewRunRefusesAFolderThatHoldsOneAndPointsToResume) {
  ScratchDir dir, cache;
  LoopbackServer server([](int, const httplib::Request&, httplib::Response& response) {
    reply_json(response, chat_body("no code today"));
  });
  auto registry = write_registry(dir, server.base_url());
  std::vector<std::string> args{"run",
                                "--registry",
                                registry.string(),
                                "--model",
                                "loop",
                                "--variant",
                                "none",
                                "--turns",
                                "1",
                                "--quiet",
                                "--static-only",
                                "--out",
                                (dir.path() / "run").string()};
  auto first = run_ptxbench(args, cache);
  EXPECT_EQ(first.exit_code, 0) << first.err;
  auto second = run_ptxbench(args, cache);
  EXPECT_EQ(second.exit_code, 2);
  EXPECT_NE(second.err.find("already holds a run"), std::string::npos) << second.err;
  EXPECT_NE(second.err.find("--resume"), std::string::npos);
  auto exported = run_ptxbench(
      {"export", (dir.path() / "run").string(), "--out", (dir.path() / "again").string()}, cache);
  EXPECT_EQ(exported.exit_code, 0) << exported.err;
  EXPECT_TRUE(std::filesystem::exists(dir.path() / "again" / "traces.jsonl"));
}

TEST(RunCli, BadPlansAndUnknownModelsGetClearMessagesAndLeaveNoRunBehind) {
  ScratchDir dir, cache;
  auto plan = dir.path() / "plan.json";
  ASSERT_TRUE(util::write_file_atomic(plan, R"({"models": ["demo"], "turns": "eight"})"));
  auto bad =
      run_ptxbench({"run", "--plan", plan.string(), "--out", (dir.path() / "r").string()}, cache);
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("plan.json: $.turns: expected an integer"), std::string::npos) << bad.err;
  auto unknown = run_ptxbench(
      {"run", "--model", "no-such-model", "--out", (dir.path() / "u").string()}, cache);
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("\"no-such-model\" is not in the registry"), std::string::npos)
      << unknown.err;
  // Nothing is left behind that the corrected command would refuse as an existing run.
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "u" / "run.sqlite"));
  auto problem = run_ptxbench({"run", "--model", "demo", "--problem", "no-such-problem", "--out",
                               (dir.path() / "u").string()},
                              cache);
  EXPECT_EQ(problem.exit_code, 2);
  EXPECT_NE(problem.err.find("no-such-problem"), std::string::npos) << problem.err;
  EXPECT_EQ(problem.err.find("already holds a run"), std::string::npos) << problem.err;
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "u" / "run.sqlite"));
  // Counts of 0 or below are usage errors, not a silent fall-back to the plan's numbers.
  for (const char* flag : {"--turns", "--trajectories", "--jobs"}) {
    auto zero = run_ptxbench(
        {"run", "--model", "demo", flag, "0", "--out", (dir.path() / "z").string()}, cache);
    EXPECT_EQ(zero.exit_code, 2) << flag << ": " << zero.err;
    EXPECT_NE(zero.err.find(flag), std::string::npos) << zero.err;
  }
  EXPECT_EQ(run_ptxbench({"run", "--model", "demo", "--target-speedup", "-2", "--out",
                          (dir.path() / "z").string()},
                         cache)
                .exit_code,
            2);
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "z" / "run.sqlite"));
  auto none = run_ptxbench({"run", "--out", (dir.path() / "n").string()}, cache);
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_NE(none.err.find("name a model"), std::string::npos) << none.err;
}

TEST(RunCli, TheDemoRunsTheReplayedTrajectoryUpToTheGpuStep) {
  ScratchDir dir, cache;
  auto demo = run_ptxbench({"demo", "--out", (dir.path() / "demo").string()}, cache);
  EXPECT_EQ(demo.exit_code, 0) << demo.err;
  EXPECT_NE(demo.out.find("turn 1: compile"), std::string::npos) << demo.out;
  EXPECT_NE(demo.out.find("identifier \"wgmma_m64n256k16\" is undefined"), std::string::npos);
  EXPECT_NE(demo.out.find("turn 3: static_only"), std::string::npos);
  EXPECT_NE(demo.err.find("no CUDA device here"), std::string::npos) << demo.err;
  EXPECT_TRUE(std::filesystem::exists(dir.path() / "demo" / "exports" / "turns.csv"));
}

// Issue 17 item 14: one Ctrl-C stops the run resumable and exits 130, as a shell reports a job
// stopped by SIGINT, not 1 (a negative verdict).
TEST(RunCli, OneCtrlCStopsTheRunWithExitCode130) {
  ScratchDir dir, cache;
  std::atomic<int> requests{0};
  LoopbackServer* self = nullptr;
  LoopbackServer server([&](int, const httplib::Request&, httplib::Response& response) {
    if (requests.fetch_add(1) == 0)
      self->hold(std::chrono::seconds(60));
    reply_json(response, chat_body(kKernelReply));
  });
  self = &server;
  auto registry = write_registry(dir, server.base_url());
  auto run_dir = dir.path() / "run";
  pid_t pid = spawn_ptxbench({"run", "--registry", registry.string(), "--model", "loop",
                              "--variant", "none", "--turns", "4", "--static-only", "--quiet",
                              "--out", run_dir.string()},
                             cache);
  ASSERT_GT(pid, 0);
  for (int i = 0; i < 3000 && requests.load() == 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ASSERT_EQ(requests.load(), 1) << "the run never called the model";
  ASSERT_EQ(kill(pid, SIGINT), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  server.release();
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 130);
}

// Issue 17 item 14: a run in which every trajectory ran out of context measured nothing.
TEST(RunCli, ARunWhoseEveryTrajectoryOverflowedTheContextExitsOne) {
  ScratchDir dir, cache;
  LoopbackServer server([&](int, const httplib::Request&, httplib::Response& response) {
    response.status = 400;
    response.set_content(R"({"error": {"message": "This model's maximum context length is 2048 )"
                         R"(tokens. However, you requested 31475 tokens.", "code": 400}})",
                         "application/json");
  });
  auto registry = write_registry(dir, server.base_url());
  auto run = run_ptxbench({"run", "--registry", registry.string(), "--model", "loop", "--variant",
                           "none", "--turns", "2", "--static-only", "--quiet", "--out",
                           (dir.path() / "run").string()},
                          cache);
  EXPECT_NE(run.out.find("context_overflow"), std::string::npos) << run.out << run.err;
  EXPECT_EQ(run.exit_code, 1) << run.out << run.err;
  EXPECT_NE(run.err.find("every trajectory ended context_overflow"), std::string::npos) << run.err;
}

TEST(RunCli, ExportOfAFolderWithoutARunSaysSoWithoutSpeakingOfResume) {
  ScratchDir dir, cache;
  auto exported = run_ptxbench({"export", (dir.path() / "nothing").string()}, cache);
  EXPECT_EQ(exported.exit_code, 2);
  EXPECT_NE(exported.err.find("no run store at " + (dir.path() / "nothing").string()),
            std::string::npos)
      << exported.err;
  EXPECT_EQ(exported.err.find("resume"), std::string::npos) << exported.err;
}
