// Run plans: parsing with exact error locations, round trip through the stored JSON, and the
// expansion into trajectories (suites, the paper's variants, unknown names).
#include "agent/plan.hpp"
#include "agent/progress.hpp"
#include "loop_test_support.hpp"
#include "support/real_data.hpp"
#include "util/paths.hpp"

#include <cstdio>
#include <cstdlib>
#include <gtest/gtest.h>

using namespace ptxbench;
using namespace ptxbench::agent;
using namespace ptxbench::agent::testing;

namespace {

RunPlan parse_ok(std::string_view text) {
  auto plan = parse_plan(text, "/plans/p.json");
  if (!plan)
    throw util::Fatal(plan.error().message);
  return *plan;
}

std::string parse_error(std::string_view text) {
  auto plan = parse_plan(text, "/plans/p.json");
  EXPECT_FALSE(plan);
  return plan ? std::string() : plan.error().message;
}

} // namespace

TEST(RunPlan, ReadsEveryFieldAndFillsDefaults) {
  auto plan = parse_ok(R"({"models": ["a", "b"], "problems": "primary",
      "prompt_variants": ["paper"], "trajectories": 4, "turns": 8, "target_speedup": 1.2,
      "context": "latest-pair", "arch": "sm_100a", "jobs": 16, "registry": "models.json",
      "eval": {"sets": 2, "timeout_s": 30}, "notes": "the paper's protocol"})");
  EXPECT_EQ(plan.models, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(plan.problems, (std::vector<std::string>{"primary"}));
  EXPECT_EQ(plan.trajectories, 4);
  EXPECT_EQ(plan.loop.max_turns, 8);
  EXPECT_EQ(plan.loop.target_speedup, 1.2);
  EXPECT_EQ(plan.loop.context, ContextPolicy::latest_pair);
  EXPECT_EQ(plan.loop.arch, compile::Arch::sm_100a);
  EXPECT_EQ(plan.jobs, 16);
  EXPECT_EQ(plan.registry, std::filesystem::path("/plans/models.json"));
  EXPECT_EQ(plan.eval.sets, 2);
  EXPECT_EQ(plan.eval.trials, 3);
  EXPECT_DOUBLE_EQ(plan.eval.timeout_s, 30);
}

TEST(RunPlan, TheStoredJsonParsesBackToTheSamePlan) {
  auto plan = parse_ok(R"({"models": ["m"], "target_speedup": 0, "turns": 5})");
  EXPECT_FALSE(plan.loop.target_speedup);
  auto again = parse_ok(plan_to_json(plan).dump());
  EXPECT_EQ(plan_to_json(again), plan_to_json(plan));
  EXPECT_FALSE(again.loop.target_speedup);
  EXPECT_EQ(again.loop.max_turns, 5);
}

TEST(RunPlan, TheLanguageIsReadStoredAndGivenToEveryTrajectoryKey) {
  EXPECT_EQ(parse_ok(R"({"models": ["m"]})").loop.language, compile::Language::cuda);
  auto plan = parse_ok(R"({"models": ["m"], "language": "triton", "prompt_variants": ["none"],
      "trajectories": 2})");
  EXPECT_EQ(plan.loop.language, compile::Language::triton);
  EXPECT_EQ(plan_to_json(plan)["language"], "triton");
  EXPECT_EQ(parse_ok(plan_to_json(plan).dump()).loop.language, compile::Language::triton);
  auto planned = expand(plan, real_suite(), test_support::real_manifest());
  ASSERT_TRUE(planned) << planned.error().message;
  ASSERT_EQ(planned->size(), 2u);
  for (const auto& item : *planned)
    EXPECT_EQ(item.key.language, trace::Language::triton);
  EXPECT_NE(parse_error(R"({"models": ["m"], "language": "rust"})")
                .find("$.language: expected \"cuda\" or \"triton\""),
            std::string::npos);
}

TEST(RunPlan, RepairNotesAreReadRelativeToThePlanAndStoredWithIt) {
  auto plan = parse_ok(R"({"models": ["m"], "repair_notes": {"file": "notes.jsonl", "mode": 2,
      "top_k": 2, "definition_prefixes": ["gemm_"]}})");
  EXPECT_EQ(plan.notes.file, std::filesystem::path("/plans/notes.jsonl"));
  EXPECT_EQ(plan.notes.mode, 2);
  EXPECT_EQ(plan.notes.top_k, 2);
  EXPECT_EQ(plan.notes.max_notes, 8);
  EXPECT_EQ(plan.notes.definition_prefixes, std::vector<std::string>{"gemm_"});
  auto again = parse_ok(plan_to_json(plan).dump());
  EXPECT_EQ(plan_to_json(again), plan_to_json(plan));
  EXPECT_FALSE(plan_to_json(parse_ok(R"({"models": ["m"]})")).contains("repair_notes"));
  EXPECT_NE(parse_error(R"({"models": ["m"], "repair_notes": {"file": "n", "mode": 3}})")
                .find("$.repair_notes.mode"),
            std::string::npos);
}

TEST(RunPlan, ErrorsNameTheFileAndTheJsonPath) {
  EXPECT_NE(parse_error(R"({"models": ["m"], "turns": 8, "trajectorys": 4})")
                .find("/plans/p.json: $.trajectorys: unknown key"),
            std::string::npos);
  EXPECT_NE(parse_error(R"({"models": ["m"], "context": "everything"})").find("$.context"),
            std::string::npos);
  EXPECT_NE(parse_error(R"({"models": ["m"], "eval": {"sets": 0}})").find("$.eval.sets"),
            std::string::npos);
  EXPECT_NE(parse_error(R"({"models": []})").find("$.models"), std::string::npos);
  EXPECT_NE(parse_error(R"({"problems": ["gemm_n7168_k5120"]})").find("$.models: missing"),
            std::string::npos);
  EXPECT_NE(parse_error("[1, 2").find("not a JSON object"), std::string::npos);
}

TEST(RunPlan, ThePaperProtocolExpandsToThreeVariantsTimesFourTrajectoriesPerProblem) {
  auto plan = parse_ok(R"({"models": ["m"], "problems": ["primary"],
      "prompt_variants": ["paper"], "trajectories": 4})");
  auto planned = expand(plan, real_suite(), test_support::real_manifest());
  ASSERT_TRUE(planned) << planned.error().message;
  EXPECT_EQ(planned->size(), 5u * 3u * 4u);
  EXPECT_EQ(planned->front().key.problem, "gemm_n7168_k5120");
  EXPECT_EQ(planned->front().variant, "gemm-0");
  EXPECT_EQ((*planned)[4].variant, "gemm-1");
  EXPECT_EQ((*planned)[3].key.sample, 3);
}

TEST(RunPlan, UnknownProblemsAndVariantsAreRefusedBeforeAnythingRuns) {
  auto plan = parse_ok(R"({"models": ["m"], "problems": ["gemm_n1_k1"]})");
  auto planned = expand(plan, real_suite(), test_support::real_manifest());
  ASSERT_FALSE(planned);
  EXPECT_EQ(planned.error().kind, util::ErrorKind::not_found);
  plan = parse_ok(R"({"models": ["m"], "prompt_variants": ["no-such-variant"]})");
  EXPECT_FALSE(expand(plan, real_suite(), test_support::real_manifest()));
  plan = parse_ok(R"({"models": ["m"], "prompt_variants": ["none", "default"]})");
  auto ok = expand(plan, real_suite(), test_support::real_manifest());
  ASSERT_TRUE(ok) << ok.error().message;
  EXPECT_EQ(ok->size(), 2u);
}

TEST(Progress, ShowsCountsBestSpeedupAndTheTimeLeftAtThePaceSoFar) {
  ProgressCounts counts;
  counts.trajectories = 12;
  counts.trajectories_done = 3;
  counts.turns = 18;
  counts.counted_turns = 17;
  counts.correct = 5;
  counts.turn_budget = 34;
  counts.best_speedup = 1.2345;
  EXPECT_EQ(render_progress(counts, std::chrono::seconds(250)),
            "trajectories 3/12 · turns 18 · correct 5 · best 1.234x · 4m10s elapsed · ≤8m20s left");
  counts.trajectories_done = 12;
  EXPECT_EQ(render_progress(counts, std::chrono::seconds(3700)),
            "trajectories 12/12 · turns 18 · correct 5 · best 1.234x · 1h01m elapsed");
}

// On main a trajectory that could not run was counted done: "trajectories 1/1" beside the
// summary's "0 of 1 trajectories finished".
TEST(Progress, ATrajectoryThatEndsUnfinishedIsCountedStoppedNotDone) {
  char* buffer = nullptr;
  std::size_t size = 0;
  std::FILE* out = open_memstream(&buffer, &size);
  ASSERT_NE(out, nullptr);
  {
    Progress progress(2, 2, out, Display::lines);
    progress.on_trajectory_end(TrajectoryResult{}, 1);
    TrajectoryResult finished;
    finished.exit = store::ExitReason::turn_budget;
    finished.counted_turns = 1;
    progress.on_trajectory_end(finished, 1);
    EXPECT_EQ(progress.counts().trajectories_done, 1);
    EXPECT_EQ(progress.counts().trajectories_stopped, 1);
  }
  std::fclose(out);
  const std::string text(buffer, size);
  std::free(buffer);
  EXPECT_NE(text.find("trajectories 0/2 (1 stopped) · turns 0"), std::string::npos) << text;
  EXPECT_NE(text.find("trajectories 1/2 (1 stopped) · turns 0 · correct 0 · 0s elapsed\n"),
            std::string::npos)
      << text;
}

TEST(RunPlan, TheShippedPlansParseAndExpand) {
  int seen = 0;
  for (const auto& entry :
       std::filesystem::directory_iterator(util::data_root() / "config" / "plans")) {
    auto plan = load_plan(entry.path());
    ASSERT_TRUE(plan) << plan.error().message;
    // A plan whose conditions retrieve names no corpus: the user's comes with run --notes.
    if (plan->notes.file.empty())
      plan->notes.file = "notes.jsonl";
    auto planned = expand(*plan, real_suite(), test_support::real_manifest());
    ASSERT_TRUE(planned) << entry.path() << ": " << planned.error().message;
    EXPECT_FALSE(planned->empty());
    ++seen;
  }
  EXPECT_GE(seen, 2);
}

TEST(RunPlan, EvaluationServicesAreStoredWithThePlanAndMustBeHttpUrls) {
  RunPlan plan = parse_ok(R"({"models": ["demo"],
                              "eval": {"service": ["http://gpu-a:8000", "http://gpu-b:8000/"]}})");
  EXPECT_EQ(plan.eval.service,
            (std::vector<std::string>{"http://gpu-a:8000", "http://gpu-b:8000/"}));
  EXPECT_EQ(parse_ok(plan_to_json(plan).dump()).eval.service, plan.eval.service);
  EXPECT_FALSE(plan_to_json(parse_ok(R"({"models": ["demo"]})"))["eval"].contains("service"));
  EXPECT_NE(parse_error(R"({"models": ["demo"], "eval": {"service": ["gpu-a:8000"]}})")
                .find("$.eval.service: evaluation service \"gpu-a:8000\": expected an http://"),
            std::string::npos);
}

TEST(RunPlan, EveryEvaluatedTurnIsMemoryCheckedUnlessThePlanSaysOtherwise) {
  const RunPlan plain = parse_ok(R"({"models": ["demo"]})");
  EXPECT_TRUE(plain.eval.memcheck);
  EXPECT_EQ(eval_options(plain).sanitize, exec::Sanitize::memcheck);
  EXPECT_EQ(plan_to_json(plain)["eval"]["memcheck"], true);
  const RunPlan off = parse_ok(R"({"models": ["demo"], "eval": {"memcheck": false}})");
  EXPECT_FALSE(off.eval.memcheck);
  EXPECT_EQ(eval_options(off).sanitize, exec::Sanitize::off);
  EXPECT_FALSE(parse_ok(plan_to_json(off).dump()).eval.memcheck);
}

TEST(RunPlan, ARepairPlanRunsOneTrajectoryPerModelAndRepairKeyedByItsIndex) {
  auto plan = parse_ok(R"({"models": ["teacher"], "turns": 5, "target_speedup": 0.15,
      "repairs": [{"id": "f1", "problem": "gemm_n7168_k5120", "variant": "none",
                   "kernel": "bad kernel 1", "error": "compile error 1"},
                  {"id": "f2", "problem": "gemm_n7168_k5120", "variant": "gemm-0",
                   "kernel": "bad kernel 2", "error": "INCORRECT_NUMERICAL"}]})");
  ASSERT_EQ(plan.repairs.size(), 2u);
  EXPECT_EQ(plan.repairs[1].kernel, "bad kernel 2");
  auto again = parse_ok(plan_to_json(plan).dump());
  EXPECT_EQ(again.repairs, plan.repairs);
  auto planned = expand(plan, real_suite(), test_support::real_manifest());
  ASSERT_TRUE(planned) << planned.error().message;
  ASSERT_EQ(planned->size(), 2u);
  EXPECT_EQ((*planned)[0].key, (store::TrajectoryKey{"teacher", "gemm_n7168_k5120", "none", 0}));
  EXPECT_EQ((*planned)[1].key, (store::TrajectoryKey{"teacher", "gemm_n7168_k5120", "gemm-0", 1}));
  EXPECT_EQ((*planned)[1].repair, &plan.repairs[1]);
}

TEST(RunPlan, RepairsNeedEveryFieldADistinctIdAndAKnownProblem) {
  EXPECT_NE(parse_error(R"({"models": ["m"], "repairs": [{"id": "f", "problem": "p",
      "variant": "none", "kernel": "k"}]})")
                .find("$.repairs[0]: missing required key \"error\""),
            std::string::npos);
  auto twice = parse_ok(R"({"models": ["m"], "repairs": [
      {"id": "f", "problem": "gemm_n7168_k5120", "variant": "none", "kernel": "k", "error": "e"},
      {"id": "f", "problem": "gemm_n7168_k5120", "variant": "none", "kernel": "k", "error": "e"}]})");
  auto planned = expand(twice, real_suite(), test_support::real_manifest());
  ASSERT_FALSE(planned);
  EXPECT_NE(planned.error().message.find("twice"), std::string::npos);
  auto unknown = parse_ok(R"({"models": ["m"], "repairs": [
      {"id": "f", "problem": "no_such_problem", "variant": "none", "kernel": "k", "error": "e"}]})");
  EXPECT_FALSE(expand(unknown, real_suite(), test_support::real_manifest()));
}

// Table 4's conditions (plan.hpp): models × problems × variants × conditions × trajectories,
// samples running on across the conditions of a (model, problem, variant).
TEST(RunPlanConditions, ExpandPerModelWithSamplesRunningOnAcrossConditions) {
  RunPlan plan = parse_ok(R"({"parameters": {"student": "Qwen3.6-27B", "tuned": "demo"},
      "models": ["${student}", "${tuned}"], "problems": ["mha_with_lse_d128", "gemm_n7168_k5120"],
      "prompt_variants": ["none"], "trajectories": 2,
      "guidance": {"file": "g.md", "problems": ["mha_"]}, "repair_notes": {"file": "n.jsonl"},
      "conditions": [{"name": "plain", "guidance": false, "retrieval": "none"},
                     {"name": "guided", "guidance": true, "retrieval": "none"},
                     {"name": "kernel", "guidance": true, "retrieval": "notes+kernel",
                      "models": ["${student}"]}]})");
  EXPECT_EQ(plan.models, (std::vector<std::string>{"Qwen3.6-27B", "demo"}));
  auto planned = expand(plan, real_suite(), test_support::real_manifest());
  ASSERT_TRUE(planned) << planned.error().message;
  ASSERT_EQ(planned->size(), 2u * 3 * 2 + 2u * 2 * 2);
  std::vector<std::string> first;
  for (std::size_t i = 0; i < 6; ++i)
    first.push_back((*planned)[i].key.condition + "#" + std::to_string((*planned)[i].key.sample));
  EXPECT_EQ(first, (std::vector<std::string>{"plain#0", "plain#1", "guided#2", "guided#3",
                                             "kernel#4", "kernel#5"}));
  for (const PlannedTrajectory& item : *planned) {
    EXPECT_EQ(item.guidance, item.key.condition != "plain" && item.key.problem.starts_with("mha_"))
        << to_string(item.key);
    EXPECT_EQ(item.condition.retrieval == Retrieval::notes_and_kernel,
              item.key.condition == "kernel");
    EXPECT_TRUE(item.key.condition != "kernel" || item.key.model == "Qwen3.6-27B");
  }
  // The stored plan holds the substituted names and every condition, and reads back the same.
  plan.guidance.sha256 = std::string(64, 'a');
  const RunPlan again = parse_ok(plan_to_json(plan).dump());
  EXPECT_EQ(again.conditions, plan.conditions);
  EXPECT_EQ(again.models, plan.models);
  EXPECT_EQ(again.guidance.sha256, plan.guidance.sha256);
  EXPECT_EQ(again.guidance.problems, plan.guidance.problems);
}

TEST(RunPlanConditions, APlanWithoutConditionsKeepsItsKeysAndRetrievesInItsNotesMode) {
  RunPlan plan = parse_ok(R"({"models": ["demo"], "problems": ["gemm_n7168_k5120"],
      "prompt_variants": ["none"], "repair_notes": {"file": "n.jsonl", "mode": 2}})");
  auto planned = expand(plan, real_suite(), test_support::real_manifest());
  ASSERT_TRUE(planned);
  ASSERT_EQ(planned->size(), 1u);
  EXPECT_EQ(planned->front().key.condition, "");
  EXPECT_EQ(planned->front().condition.retrieval, Retrieval::notes_and_kernel);
  EXPECT_FALSE(planned->front().guidance);
}

TEST(RunPlanConditions, BadConditionsAndParametersNameTheirJsonPath) {
  EXPECT_NE(parse_error(R"({"models": ["m"], "conditions": [{"name": "a", "guidance": false,
                            "retrieval": "notes+fixed"}]})")
                .find("$.conditions[0].retrieval: unknown retrieval \"notes+fixed\""),
            std::string::npos);
  EXPECT_NE(parse_error(R"({"models": ["m"], "conditions": [{"name": "a", "guidance": "yes",
                            "retrieval": "none"}]})")
                .find("$.conditions[0].guidance"),
            std::string::npos);
  EXPECT_NE(parse_error(R"({"models": ["m"], "conditions": [
                            {"name": "a", "guidance": false, "retrieval": "none"},
                            {"name": "a", "guidance": true, "retrieval": "none"}]})")
                .find("$.conditions[1].name: \"a\" names two conditions"),
            std::string::npos);
  EXPECT_NE(parse_error(R"({"models": ["m"], "conditions": [{"name": "a", "guidance": false,
                            "retrieval": "none", "models": ["other"]}]})")
                .find("$.conditions[0].models[0]: \"other\" is not one of the plan's models"),
            std::string::npos);
  EXPECT_NE(parse_error(R"({"models": ["${who}"]})")
                .find("$.models[0]: \"${who}\" names no parameter of $.parameters"),
            std::string::npos);
  EXPECT_NE(parse_error(R"({"models": ["m"], "conditions": []})")
                .find("$.conditions: expected a non-empty list"),
            std::string::npos);
  EXPECT_NE(parse_error(R"({"models": ["m"], "guidance": {"file": 3}})").find("$.guidance.file"),
            std::string::npos);
}

TEST(RunPlanConditions, ARetrievingOrGuidedConditionNeedsItsFileBeforeAnythingRuns) {
  RunPlan plan = parse_ok(R"({"models": ["demo"], "problems": ["gemm_n7168_k5120"],
      "conditions": [{"name": "notes", "guidance": false, "retrieval": "notes"}]})");
  auto planned = expand(plan, real_suite(), test_support::real_manifest());
  ASSERT_FALSE(planned);
  EXPECT_NE(planned.error().message.find("condition \"notes\" retrieves repair notes"),
            std::string::npos);
  plan = parse_ok(R"({"models": ["demo"], "problems": ["gemm_n7168_k5120"],
      "conditions": [{"name": "g", "guidance": true, "retrieval": "none"}]})");
  planned = expand(plan, real_suite(), test_support::real_manifest());
  ASSERT_FALSE(planned);
  EXPECT_NE(planned.error().message.find("condition \"g\" gives guidance"), std::string::npos);
}

TEST(RunPlanConditions, RelativeFilesAreReadBesideThePlanAndStoredAbsolute) {
  const RunPlan plan = parse_ok(R"({"models": ["m"], "guidance": {"file": "../k/g.md"},
      "repair_notes": {"file": "n.jsonl", "held_out": ["../runs/h", "/abs/run"]}})");
  EXPECT_EQ(plan.guidance.file, "/k/g.md");
  EXPECT_EQ(plan.notes.file, "/plans/n.jsonl");
  EXPECT_EQ(plan.notes.held_out, (std::vector<std::filesystem::path>{"/runs/h", "/abs/run"}));
  // A resume parses the stored plan from the run folder: the same files.
  auto stored = parse_plan(plan_to_json(plan).dump(), "/elsewhere/run/run.sqlite");
  ASSERT_TRUE(stored);
  EXPECT_EQ(stored->guidance.file, plan.guidance.file);
  EXPECT_EQ(stored->notes.held_out, plan.notes.held_out);
}
