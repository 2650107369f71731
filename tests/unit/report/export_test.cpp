// Run exports: the mini-swe-agent trajectory JSON, traces JSONL and per-turn CSV from a store
// written through the store's own API.
#include "report/export.hpp"
#include "support/scratch_dir.hpp"
#include "util/fs.hpp"
#include "util/strings.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

using namespace ptxbench;
using test_support::ScratchDir;

namespace {

trace::Trace passed(double speedup) {
  trace::Trace t;
  t.definition = "gemm_n7168_k5120";
  t.workload.axes = {{"M", 8192}};
  t.workload.uuid = "u-1";
  t.solution = "s";
  trace::Evaluation e;
  e.status = trace::EvaluationStatus::passed;
  e.environment.hardware = "NVIDIA H200";
  e.timestamp = "2026-11-30T00:00:00Z";
  e.correctness = trace::Correctness{0.001, 0.002, std::nullopt};
  e.performance = trace::Performance{2.0, 2.0 * speedup, speedup};
  t.evaluation = e;
  return t;
}

void finish(store::RunStore& s, store::TrajectoryId id, store::TurnCategory category,
            std::optional<std::string> reply, std::optional<double> speedup = {},
            std::optional<store::ReplyEnd> reply_end = {}) {
  auto turn = *s.begin_turn(id);
  store::ModelCallRecord call;
  call.provider = "openai";
  call.model = "m";
  call.request_sha256 = std::string(64, 'a');
  call.input_tokens = 100;
  call.output_tokens = 40;
  call.reasoning_tokens = 10;
  call.cost_usd = 0.5;
  call.reply = reply;
  ASSERT_TRUE(s.record_model_call(turn.id, call));
  store::TurnOutcome outcome;
  outcome.category = category;
  outcome.counting = category == store::TurnCategory::infra ? store::Counting::not_counted
                                                            : store::Counting::counted;
  outcome.reply = reply;
  outcome.reply_end = reply_end;
  if (category != store::TurnCategory::infra) {
    outcome.kernel_source = "kernel of " + reply.value_or("");
    outcome.feedback = "feedback " + std::to_string(turn.index);
    store::EvaluationRecord evaluation;
    evaluation.kernel_source = *outcome.kernel_source;
    if (speedup) {
      evaluation.traces = {passed(*speedup)};
      evaluation.speedup = speedup;
    }
    evaluation.static_verdict = "present";
    evaluation.dynamic_verdict = speedup ? "present" : "unknown";
    ASSERT_TRUE(s.record_evaluation(turn.id, evaluation));
  }
  ASSERT_TRUE(s.finish_turn(turn.id, outcome));
}

} // namespace

TEST(RunExport, WritesTrajectoryJsonTracesAndTheTurnTable) {
  ScratchDir dir;
  auto opened = store::RunStore::open(dir.path() / "run", {R"({"turns": 3})", "0.1.0", ""});
  ASSERT_TRUE(opened);
  auto& s = *opened;
  auto id = *s->open_trajectory({"m", "gemm_n7168_k5120", "gemm-0", 0});
  ASSERT_TRUE(s->set_prompts(id, {"SYS", "TASK"}));
  finish(*s, id, store::TurnCategory::compile, "first");
  finish(*s, id, store::TurnCategory::infra, std::nullopt);
  finish(*s, id, store::TurnCategory::correct, "second", 0.8);
  finish(*s, id, store::TurnCategory::correct, "third", 1.3);
  ASSERT_TRUE(s->finish_trajectory(id, store::ExitReason::target_met));

  auto files = report::export_run(*s, dir.path() / "out");
  ASSERT_TRUE(files) << files.error().message;
  ASSERT_EQ(files->trajectories.size(), 1u);
  EXPECT_EQ(files->trajectories[0].filename(), "m__gemm_n7168_k5120__gemm-0__0.json");

  auto json = nlohmann::json::parse(*util::read_file(files->trajectories[0]));
  EXPECT_EQ(json["trajectory_format"], "mini-swe-agent-1.1");
  EXPECT_EQ(json["info"]["exit_status"], "target_met");
  EXPECT_EQ(json["info"]["submission"], "kernel of third");
  EXPECT_EQ(json["info"]["model_stats"]["api_calls"], 4);
  EXPECT_DOUBLE_EQ(json["info"]["model_stats"]["instance_cost"].get<double>(), 2.0);
  EXPECT_EQ(json["info"]["config"]["plan"]["turns"], 3);
  std::vector<std::string> roles;
  for (const auto& message : json["messages"])
    roles.push_back(message["role"]);
  // The infra turn never reached the conversation, so it is not in the messages either.
  EXPECT_EQ(roles, (std::vector<std::string>{"system", "user", "assistant", "user", "assistant",
                                             "user", "assistant", "user", "exit"}));
  EXPECT_EQ(json["messages"][6]["content"], "third");
  EXPECT_EQ(json["messages"][7]["extra"]["category"], "correct");
  EXPECT_DOUBLE_EQ(json["messages"][7]["extra"]["speedup"].get<double>(), 1.3);

  auto traces = *util::read_file(files->traces);
  EXPECT_EQ(std::count(traces.begin(), traces.end(), '\n'), 2);
  EXPECT_EQ(nlohmann::json::parse(traces.substr(0, traces.find('\n')))["definition"],
            "gemm_n7168_k5120");

  auto csv = *util::read_file(files->turns_csv);
  auto lines = util::split_lines(csv);
  ASSERT_EQ(lines.size(), 5u);
  EXPECT_EQ(lines[0].substr(0, 46), "model,problem,prompt_variant,trajectory,turn,c");
  EXPECT_EQ(lines[1].substr(0, 48), "m,gemm_n7168_k5120,gemm-0,0,0,1,compile,1,,prese");
  EXPECT_EQ(lines[2].substr(0, 39), "m,gemm_n7168_k5120,gemm-0,0,1,,infra,0,");
  EXPECT_EQ(lines[4].substr(0, 64),
            "m,gemm_n7168_k5120,gemm-0,0,3,3,correct,1,1.3,present,present,10");
}

TEST(RunExport, AnEmptyRunExportsEmptyFiles) {
  ScratchDir dir;
  auto opened = store::RunStore::open(dir.path() / "run", {"{}", "0", ""});
  ASSERT_TRUE(opened);
  auto& s = *opened;
  auto files = report::export_run(*s, dir.path() / "out");
  ASSERT_TRUE(files) << files.error().message;
  EXPECT_TRUE(files->trajectories.empty());
  EXPECT_EQ(*util::read_file(files->traces), "");
}

TEST(RunExport, TheCandidateLanguageIsATurnTableColumnBeforeTheConditionAndInTheTrajectoryConfig) {
  ScratchDir dir;
  auto opened = store::RunStore::open(dir.path() / "run", {"{}", "0.1.0", ""});
  ASSERT_TRUE(opened);
  auto& s = *opened;
  store::TrajectoryKey key{"m", "gemm_n7168_k5120", "triton-hopper", 0};
  key.language = trace::Language::triton;
  auto id = *s->open_trajectory(key);
  finish(*s, id, store::TurnCategory::compile, "first");
  auto cuda = *s->open_trajectory({"m", "gemm_n7168_k5120", "gemm-0", 0});
  finish(*s, cuda, store::TurnCategory::compile, "first");
  auto files = report::export_run(*s, dir.path() / "out");
  ASSERT_TRUE(files) << files.error().message;
  auto lines = util::split_lines(*util::read_file(files->turns_csv));
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_TRUE(lines[0].ends_with(",language,condition")) << lines[0];
  EXPECT_TRUE(lines[1].ends_with(",triton,")) << lines[1];
  EXPECT_TRUE(lines[2].ends_with(",cuda,")) << lines[2];
  ASSERT_EQ(files->trajectories.size(), 2u);
  auto json = nlohmann::json::parse(*util::read_file(files->trajectories[0]));
  EXPECT_EQ(json["info"]["config"]["language"], "triton");
}

TEST(RunExport, TheTurnTableSaysHowEachReplyEnded) {
  ScratchDir dir;
  auto opened = store::RunStore::open(dir.path() / "run", {"{}", "0.1.0", ""});
  ASSERT_TRUE(opened);
  auto& s = *opened;
  auto id = *s->open_trajectory({"m", "gemm_n7168_k5120", "gemm-0", 0});
  finish(*s, id, store::TurnCategory::compile, "cut", {}, store::ReplyEnd::truncated);
  finish(*s, id, store::TurnCategory::compile, "", {}, store::ReplyEnd::empty);
  finish(*s, id, store::TurnCategory::compile, "whole", {}, store::ReplyEnd::complete);
  finish(*s, id, store::TurnCategory::infra, std::nullopt);
  auto files = report::export_run(*s, dir.path() / "out");
  ASSERT_TRUE(files) << files.error().message;
  auto lines = util::split_lines(*util::read_file(files->turns_csv));
  ASSERT_EQ(lines.size(), 5u);
  EXPECT_TRUE(lines[0].ends_with(",memcheck_ms,reply_end,language,condition")) << lines[0];
  EXPECT_TRUE(lines[1].ends_with(",truncated,cuda,")) << lines[1];
  EXPECT_TRUE(lines[2].ends_with(",empty,cuda,")) << lines[2];
  EXPECT_TRUE(lines[3].ends_with(",complete,cuda,")) << lines[3];
  EXPECT_TRUE(lines[4].ends_with(",,cuda,")) << lines[4];
}
