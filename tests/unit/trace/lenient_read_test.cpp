#include "trace/json_io.hpp"
#include "trace_test_support.hpp"

#include <cmath>
#include <gtest/gtest.h>

using namespace ptxbench;
using namespace ptxbench::trace;
using trace::testing::fixture;
using trace::testing::read_fixture;
using trace::testing::ScratchDir;

TEST(LenientRead, DatasetKeyOrderExtraKeysAndLegacyParentReadAsTheCanonicalDefinition) {
  auto odd = load_definition(fixture("odd/definition_dataset_order.json"));
  ASSERT_TRUE(odd) << odd.error().message;
  EXPECT_EQ(odd->axes[1].kind, Axis::Kind::constant); // "type" defaults to const
  EXPECT_EQ(odd->axes[1].value, 8);
  EXPECT_EQ(dump_pretty(to_json(*odd)) + "\n", read_fixture("canonical/definition.json"));
}

TEST(LenientRead, SolutionWithoutDpsKeyIsDpsAndLegacyBuildCommandsAreIgnored) {
  auto solution = load_solution(fixture("odd/solution_legacy.json"));
  ASSERT_TRUE(solution) << solution.error().message;
  EXPECT_TRUE(solution->spec.destination_passing_style);
  EXPECT_EQ(solution->spec.binding, Binding::none);
  EXPECT_EQ(solution->spec.language, Language::python);
  EXPECT_TRUE(solution->spec.dependencies.empty());
  EXPECT_FALSE(solution->description.has_value());
  EXPECT_FALSE(to_json(*solution)["spec"].contains("binding"));
  EXPECT_FALSE(to_json(*solution)["spec"].contains("build_commands"));
}

TEST(LenientRead, WorkloadLinesWithSpacesBlankLinesSeedAndMissingTypeParse) {
  auto traces = load_traces_jsonl(fixture("odd/workloads_odd.jsonl"));
  ASSERT_TRUE(traces) << traces.error().message;
  ASSERT_EQ(traces->size(), 2u);
  const Workload& first = (*traces)[0].workload;
  EXPECT_TRUE(std::holds_alternative<RandomInput>(first.inputs[0].second)); // with legacy seed
  EXPECT_TRUE(std::holds_alternative<RandomInput>(first.inputs[1].second)); // {}
  const auto& alpha = std::get<ScalarInput>(first.inputs[2].second);        // {"value": 3}
  EXPECT_EQ(std::get<std::int64_t>(alpha.value), 3);
  const Workload& second = (*traces)[1].workload;
  EXPECT_EQ(std::get<SafetensorsInput>(second.inputs[0].second).path, "./blob/a.safetensors");
  EXPECT_EQ(second.uuid, "u-2");
  EXPECT_TRUE((*traces)[1].is_workload_trace());
}

TEST(LenientRead, WrittenInputSpecsAlwaysCarryType) {
  auto traces = load_traces_jsonl(fixture("odd/workloads_odd.jsonl"));
  ASSERT_TRUE(traces);
  std::string line = dump_compact(to_json((*traces)[0]));
  EXPECT_NE(line.find(R"("B":{"type":"random"})"), std::string::npos);
  EXPECT_NE(line.find(R"("alpha":{"type":"scalar","value":3})"), std::string::npos);
  EXPECT_EQ(line.find("seed"), std::string::npos);
}

TEST(LenientRead, BareNanInfinityAndLowercaseStringsReadAsNonFinite) {
  auto traces = load_traces_jsonl(fixture("odd/traces_odd.jsonl"));
  ASSERT_TRUE(traces) << traces.error().message;
  const Correctness& bare = *(*traces)[0].evaluation->correctness;
  EXPECT_TRUE(std::isnan(bare.max_relative_error));
  EXPECT_TRUE(std::isinf(bare.max_absolute_error));
  EXPECT_EQ((*bare.extra)["tvds"], Json::parse(R"(["NaN","-Infinity"])"));
  const Evaluation& strings = *(*traces)[1].evaluation;
  EXPECT_TRUE(std::isinf(strings.correctness->max_relative_error));
  EXPECT_TRUE(std::isnan(strings.correctness->max_absolute_error));
  EXPECT_EQ(strings.log, R"(NaN Infinity "NaN")"); // tokens inside strings are untouched
  EXPECT_TRUE(strings.environment.libs.empty());
}

TEST(LenientRead, IntegersAreAcceptedWhereFloatsAreExpected) {
  auto traces = load_traces_jsonl(fixture("odd/traces_odd.jsonl"));
  ASSERT_TRUE(traces);
  const Evaluation& passed = *(*traces)[2].evaluation;
  EXPECT_DOUBLE_EQ(passed.performance->speedup_factor, 100.0);
  EXPECT_DOUBLE_EQ(passed.correctness->max_absolute_error, 1.0);
  std::string line = dump_compact(to_json(passed));
  EXPECT_NE(line.find(R"("speedup_factor":100.0)"), std::string::npos);
  EXPECT_NE(line.find(R"("extra":null)"), std::string::npos);
}

TEST(LenientRead, NonFiniteCorrectnessIsWrittenAsStrings) {
  auto traces = load_traces_jsonl(fixture("odd/traces_odd.jsonl"));
  ASSERT_TRUE(traces);
  std::string line = dump_compact(to_json(*(*traces)[0].evaluation));
  EXPECT_NE(line.find(R"("max_relative_error":"NaN","max_absolute_error":"Infinity")"),
            std::string::npos);
}

TEST(LenientRead, ScalarAndZeroDimShapesAreDistinguished) {
  Json json = Json::parse(read_fixture("canonical/definition.json"));
  auto def = definition_from_json(json, "mem");
  ASSERT_TRUE(def);
  Json written = to_json(*def);
  EXPECT_TRUE(written["inputs"]["alpha"]["shape"].is_null());
  EXPECT_TRUE(written["inputs"]["flag"]["shape"].is_array());
  EXPECT_TRUE(written["inputs"]["flag"]["shape"].empty());
}
