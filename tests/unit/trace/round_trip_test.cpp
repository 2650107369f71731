#include "trace/json_io.hpp"
#include "trace_test_support.hpp"

#include <gtest/gtest.h>

using namespace ptxbench;
using namespace ptxbench::trace;
using trace::testing::fixture;
using trace::testing::read_fixture;
using trace::testing::ScratchDir;

namespace {

class PrettyRoundTrip : public ::testing::TestWithParam<std::string> {};
class JsonlRoundTrip : public ::testing::TestWithParam<std::string> {};

} // namespace

TEST_P(PrettyRoundTrip, SavingWhatWasLoadedReproducesTheFileByteForByte) {
  ScratchDir scratch;
  std::string name = GetParam();
  auto out = scratch.path() / "out.json";
  if (name.starts_with("canonical/definition")) {
    auto def = load_definition(fixture(name));
    ASSERT_TRUE(def) << def.error().message;
    ASSERT_TRUE(save_definition(out, *def));
  } else {
    auto solution = load_solution(fixture(name));
    ASSERT_TRUE(solution) << solution.error().message;
    ASSERT_TRUE(save_solution(out, *solution));
  }
  EXPECT_EQ(*util::read_file(out), read_fixture(name));
}

INSTANTIATE_TEST_SUITE_P(Files, PrettyRoundTrip,
                         ::testing::Values("canonical/definition.json",
                                           "canonical/definition_minimal.json",
                                           "canonical/solution.json",
                                           "canonical/solution_minimal.json"));

TEST_P(JsonlRoundTrip, AppendingEveryLoadedTraceReproducesTheFileByteForByte) {
  ScratchDir scratch;
  auto traces = load_traces_jsonl(fixture(GetParam()));
  ASSERT_TRUE(traces) << traces.error().message;
  auto appended = scratch.path() / "appended.jsonl";
  for (const Trace& trace : *traces)
    ASSERT_TRUE(append_trace(appended, trace));
  EXPECT_EQ(*util::read_file(appended), read_fixture(GetParam()));
  auto rewritten = scratch.path() / "rewritten.jsonl";
  ASSERT_TRUE(save_traces_jsonl(rewritten, *traces));
  EXPECT_EQ(*util::read_file(rewritten), read_fixture(GetParam()));
}

INSTANTIATE_TEST_SUITE_P(Files, JsonlRoundTrip,
                         ::testing::Values("canonical/workloads.jsonl", "canonical/traces.jsonl"));

TEST(RoundTrip, DefinitionKeepsAxisInputAndOutputOrderAndScalarVersusZeroDim) {
  auto def = load_definition(fixture("canonical/definition.json"));
  ASSERT_TRUE(def) << def.error().message;
  ASSERT_EQ(def->axes.size(), 3u);
  EXPECT_EQ(def->axes[0].name, "M");
  EXPECT_EQ(def->axes[0].kind, Axis::Kind::variable);
  EXPECT_EQ(def->axes[2].value, 8);
  ASSERT_EQ(def->inputs.size(), 4u);
  EXPECT_EQ(def->inputs[1].name, "B");
  EXPECT_EQ(def->inputs[1].dtype, DType::bfloat16);
  EXPECT_TRUE(def->inputs[2].is_scalar());
  ASSERT_TRUE(def->inputs[3].shape.has_value());
  EXPECT_TRUE(def->inputs[3].shape->empty());
  EXPECT_EQ(def->inputs[3].dtype, DType::boolean);
  EXPECT_EQ(def->outputs.at(0).name, "C");
  EXPECT_EQ(def->constraints, std::vector<std::string>{"M >= 1"});
}

TEST(RoundTrip, WorkloadInputKindsAndScalarTypesSurvive) {
  auto traces = load_traces_jsonl(fixture("canonical/workloads.jsonl"));
  ASSERT_TRUE(traces) << traces.error().message;
  ASSERT_EQ(traces->size(), 3u);
  const Workload& first = (*traces)[0].workload;
  EXPECT_TRUE((*traces)[0].is_workload_trace());
  EXPECT_EQ(first.axis_value("M"), 256);
  EXPECT_TRUE(std::holds_alternative<RandomInput>(first.inputs[0].second));
  const auto& alpha = std::get<ScalarInput>(first.inputs[2].second);
  EXPECT_DOUBLE_EQ(std::get<double>(alpha.value), 0.08838834764831843);
  EXPECT_TRUE(std::get<bool>(std::get<ScalarInput>(first.inputs[3].second).value));
  const Workload& second = (*traces)[1].workload;
  EXPECT_EQ(std::get<SafetensorsInput>(second.inputs[0].second).tensor_key, "A");
  EXPECT_EQ(std::get<std::int64_t>(std::get<ScalarInput>(second.inputs[2].second).value), 2);
  ASSERT_TRUE((*traces)[2].workload.outputs.has_value());
  EXPECT_EQ((*traces)[2].workload.outputs->at(0).second.path, "/abs/out.safetensors");
}

TEST(RoundTrip, EvaluationsKeepNonFiniteErrorsExtrasAndPtxbenchObject) {
  auto traces = load_traces_jsonl(fixture("canonical/traces.jsonl"));
  ASSERT_TRUE(traces) << traces.error().message;
  const Evaluation& passed = *(*traces)[0].evaluation;
  EXPECT_EQ(passed.status, EvaluationStatus::passed);
  EXPECT_DOUBLE_EQ(passed.performance->speedup_factor, 1.14);
  EXPECT_EQ(passed.environment.libs.at(1).first, "ptxbench");
  ASSERT_TRUE(passed.ptxbench.has_value());
  EXPECT_EQ((*passed.ptxbench)["seed"], 12345);
  const Evaluation& numerical = *(*traces)[1].evaluation;
  EXPECT_TRUE(std::isnan(numerical.correctness->max_relative_error));
  EXPECT_TRUE(std::isinf(numerical.correctness->max_absolute_error));
  EXPECT_EQ((*numerical.correctness->extra)["matched_ratio"], 0.5);
  EXPECT_FALSE(numerical.performance.has_value());
  EXPECT_EQ((*traces)[2].evaluation->status, EvaluationStatus::timeout);
}

TEST(RoundTrip, ToJsonOfEveryObjectMatchesTheFixtureObjects) {
  auto def = load_definition(fixture("canonical/definition.json"));
  auto solution = load_solution(fixture("canonical/solution.json"));
  auto traces = load_traces_jsonl(fixture("canonical/traces.jsonl"));
  ASSERT_TRUE(def && solution && traces);
  EXPECT_EQ(to_json(*def), Json::parse(read_fixture("canonical/definition.json")));
  EXPECT_EQ(to_json(*solution), Json::parse(read_fixture("canonical/solution.json")));
  std::string first_line = read_fixture("canonical/traces.jsonl");
  first_line = first_line.substr(0, first_line.find('\n'));
  Json expected = Json::parse(first_line);
  EXPECT_EQ(to_json((*traces)[0]), expected);
  EXPECT_EQ(to_json((*traces)[0].workload), expected["workload"]);
  EXPECT_EQ(to_json(*(*traces)[0].evaluation), expected["evaluation"]);
}

TEST(RoundTrip, FailingSaveLeavesTheOldFileIntact) {
  ScratchDir scratch;
  auto out = scratch.path() / "def.json";
  auto def = load_definition(fixture("canonical/definition.json"));
  ASSERT_TRUE(def);
  ASSERT_TRUE(save_definition(out, *def));
  Definition broken = *def;
  broken.inputs[0].shape = std::vector<std::string>{"nope"};
  auto saved = save_definition(out, broken);
  ASSERT_FALSE(saved);
  EXPECT_NE(saved.error().message.find("$.inputs.A.shape[0]"), std::string::npos);
  EXPECT_EQ(*util::read_file(out), read_fixture("canonical/definition.json"));
}
