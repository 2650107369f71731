// Retrieved repair notes in the agent loop: a failed turn's stored feedback — what the model
// sees next — ends with the block retrieved for its kernel; a correct turn's does not; and
// `ptxbench run --notes` wires the corpus into a real run (static executor, replayed model).
#include "adapt/notes_feedback.hpp"
#include "store/run_store.hpp"
#include "support/ptxbench_cli.hpp"
#include "support/scratch_dir.hpp"
#include "unit/agent/loop_test_support.hpp"
#include "util/fs.hpp"
#include "util/subprocess.hpp"

#include <gtest/gtest.h>

using namespace ptxbench;
using namespace ptxbench::adapt;
using namespace ptxbench::agent::testing;
using store::TurnCategory;

namespace {

const std::string kWrong = "#include <cuda_runtime.h>\n// attempt 0\n__global__ void k() {}\n"
                           "void run(cudaStream_t stream) { k<<<1, 1, 0, stream>>>(); }\n";

NotesRecord stored_notes() {
  NotesRecord r;
  r.id = "pair-1";
  r.status = "done";
  r.problem = "gemm_n7168_k5120";
  r.wrong_kernel = kWrong;
  r.fixed_kernel = "// the fixed kernel\n";
  r.speedup = 1.1;
  r.notes.summary = "Launch inside run on the given stream.";
  for (int i = 0; i < 3; ++i) {
    InstructionNote n;
    n.instruction = "NOTE-" + std::to_string(i);
    n.shape_context = "any";
    r.notes.instruction_notes.push_back(n);
  }
  return r;
}

} // namespace

TEST(NotesInTheLoop, FailedTurnFeedbackEndsWithTheRetrievedNotes) {
  ScratchDir dir;
  auto store = store::RunStore::open(dir.path(), store::RunInfo{"{}", "test", ""});
  ASSERT_TRUE(store) << store.error().message;
  model::ModelSpec spec = scripted_spec();
  agent::TrajectoryTask task;
  task.key = store::TrajectoryKey{"scripted", "gemm_n7168_k5120", "none", 0};
  task.problem = &gemm_problem();
  task.model = &spec;
  task.prompts = agent::Prompts{"SYSTEM", "TASK", "none"};
  ClientSlot client;
  client.script = std::make_shared<ScriptedClient>(
      std::vector<ScriptedClient::Step>{kernel_reply("attempt 0"), kernel_reply("attempt 1")});
  ScriptedExecutor executor({ScriptedExecutor::Verdict{TurnCategory::compile, {}}, correct(2.0)});
  agent::LoopDeps deps;
  deps.store = store->get();
  deps.executor = &executor;
  deps.make_client = client.maker();
  deps.extra_feedback =
      notes_feedback_hook(std::make_shared<const NotesIndex>(std::vector{stored_notes()}), {});
  agent::LoopOptions options;
  options.max_turns = 2;
  auto result = agent::run_trajectory(task, options, deps);
  ASSERT_TRUE(result) << result.error().message;
  auto turns = (*store)->finished_turns(result->id);
  ASSERT_TRUE(turns);
  ASSERT_EQ(turns->size(), 2u);
  const std::string& failed = *(*turns)[0].feedback;
  const auto verdict = failed.find("verdict compile");
  const auto block = failed.find("\n\n## Retrieved repair notes from fixing similar historical "
                                 "wrong kernels\n\n### Similar wrong kernel 1: bm25=");
  ASSERT_NE(verdict, std::string::npos) << failed;
  ASSERT_NE(block, std::string::npos) << failed;
  EXPECT_LT(verdict, block);
  EXPECT_NE(failed.find("1. **NOTE-0**"), std::string::npos) << failed;
  EXPECT_EQ((*turns)[1].feedback->find("Retrieved repair notes"), std::string::npos);
  // The model's second call saw the notes.
  const auto requests = client.script->requests();
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_NE(requests[1].back().content.find("NOTE-2"), std::string::npos);
}

TEST(NotesInTheLoop, RunWithNotesAppendsThemToAStaticRunsCompileFailure) {
  ScratchDir dir;
  ScratchDir cache;
  // A reply whose kernel does not compile; the replayed model repeats it.
  const std::string broken = "#include <cuda_runtime.h>\n__global__ void k() { undefined_call(); }"
                             "\nvoid run(cudaStream_t stream) { k<<<1, 1, 0, stream>>>(); }\n";
  NotesRecord notes = stored_notes();
  notes.wrong_kernel = broken;
  const auto corpus = dir.write("notes.jsonl", to_json(notes).dump() + "\n");
  const auto replay = dir.write(
      "replies.jsonl", nlohmann::json{{"text", "```cuda\n" + broken + "```\n"}}.dump() + "\n");
  const auto registry = dir.write(
      "models.json",
      nlohmann::json{
          {"models",
           {{"replayed",
             {{"provider", "replay"}, {"model", "replay"}, {"replay_file", replay.string()}}}}}}
          .dump());
  const auto run_dir = dir.path() / "run";
  auto run = test_support::run_ptxbench(
      {"run", "--model", "replayed", "--registry", registry.string(), "--static-only", "--turns",
       "1", "--variant", "none", "--notes", corpus.string(), "--out", run_dir.string(), "--quiet"},
      cache);
  ASSERT_EQ(run.exit_code, 0) << run.out << run.err;
  auto store = store::RunStore::open_existing(run_dir);
  ASSERT_TRUE(store) << store.error().message;
  auto trajectories = (*store)->trajectories();
  ASSERT_TRUE(trajectories);
  ASSERT_EQ(trajectories->size(), 1u);
  auto turns = (*store)->finished_turns(trajectories->front().id);
  ASSERT_TRUE(turns);
  ASSERT_EQ(turns->size(), 1u);
  EXPECT_EQ((*turns)[0].category, TurnCategory::compile);
  EXPECT_NE((*turns)[0].feedback->find("## Retrieved repair notes"), std::string::npos)
      << *(*turns)[0].feedback;
  EXPECT_NE((*store)->info().config_json.find("notes.jsonl"), std::string::npos);
}

TEST(NotesInTheLoop, RunRefusesAMissingNotesCorpusBeforeMakingTheRunDirectory) {
  ScratchDir dir;
  ScratchDir cache;
  const auto run_dir = dir.path() / "run";
  auto run = test_support::run_ptxbench({"run", "--model", "Qwen3.6-27B", "--static-only",
                                         "--notes", (dir.path() / "absent.jsonl").string(), "--out",
                                         run_dir.string(), "--quiet"},
                                        cache);
  EXPECT_NE(run.exit_code, 0);
  EXPECT_NE(run.err.find("absent.jsonl"), std::string::npos) << run.err;
  EXPECT_FALSE(std::filesystem::exists(run_dir));
}
