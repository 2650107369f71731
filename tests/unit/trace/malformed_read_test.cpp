#include "trace/json_io.hpp"
#include "trace_test_support.hpp"

#include <gtest/gtest.h>

using namespace ptxbench;
using namespace ptxbench::trace;
using trace::testing::ScratchDir;

namespace {

enum class Kind { definition, solution, traces };

struct Malformed {
  std::string label;
  Kind kind;
  std::string text;
  std::string expected; // must appear in the message after "<file>: "
};

constexpr const char* kRef = R"("reference":"def run(A):\n    return A\n")";

std::string definition_with(const std::string& inputs, const std::string& outputs,
                            const std::string& extra = "") {
  return std::string(R"({"name":"d","op_type":"gemm","axes":{"M":{"type":"var"}},)") +
         R"("inputs":)" + inputs + R"(,"outputs":)" + outputs + "," + kRef + extra + "}";
}

std::string solution_with(const std::string& entry, const std::string& path) {
  return R"({"name":"s","definition":"d","author":"a","spec":{"language":"cuda",)"
         R"("target_hardware":["H100"],"entry_point":")" +
         entry + R"("},"sources":[{"path":")" + path + R"(","content":"x"}]})";
}

std::string trace_with(const std::string& evaluation) {
  return "\n"
         R"({"definition":"d","workload":{"axes":{},"inputs":{},"uuid":"u"},)"
         R"("solution":"s","evaluation":)" +
         evaluation + "}\n";
}

std::string evaluation(const std::string& status, const std::string& rest) {
  return R"({"status":")" + status + R"(","environment":{"hardware":"h"},"timestamp":"t")" + rest +
         "}";
}

const char* kGoodIn = R"({"A":{"shape":["M"],"dtype":"float32"}})";
const char* kGoodOut = R"({"C":{"shape":["M"],"dtype":"float32"}})";
const char* kCorrect = R"(,"correctness":{"max_relative_error":0.1,"max_absolute_error":0.1})";
const char* kPerf =
    R"(,"performance":{"latency_ms":1.0,"reference_latency_ms":1.0,"speedup_factor":1.0})";

std::vector<Malformed> cases() {
  return {
      {"unknown_dtype", Kind::definition,
       definition_with(R"({"A":{"shape":["M"],"dtype":"bf16"}})", kGoodOut),
       R"($.inputs.A.dtype: unknown dtype "bf16")"},
      {"shape_axis_not_in_axes", Kind::definition,
       definition_with(R"({"A":{"shape":["M","Q"],"dtype":"float32"}})", kGoodOut),
       R"($.inputs.A.shape[1]: "Q" is not an axis)"},
      {"empty_name", Kind::definition,
       R"({"name":"","op_type":"g","axes":{},"inputs":{},"outputs":{},)" + std::string(kRef) + "}",
       "$.name: must not be empty"},
      {"missing_required_key", Kind::definition,
       R"({"name":"d","op_type":"g","axes":{},"outputs":{},)" + std::string(kRef) + "}",
       R"($: missing required key "inputs")"},
      {"missing_shape", Kind::definition, definition_with(R"({"A":{"dtype":"float32"}})", kGoodOut),
       R"($.inputs.A: missing required key "shape")"},
      {"wrong_type", Kind::definition,
       R"({"name":"d","op_type":"g","axes":{"M":{"type":"const","value":"8"}},"inputs":{},)"
       R"("outputs":{},)" +
           std::string(kRef) + "}",
       "$.axes.M.value: expected an integer, got string"},
      {"output_named_like_input", Kind::definition, definition_with(kGoodIn, kGoodIn),
       R"($.outputs.A: output name "A" is also an input name)"},
      {"no_def_run", Kind::definition,
       R"({"name":"d","op_type":"g","axes":{},"inputs":{},"outputs":{},)"
       R"("reference":"  def run(x): pass"})",
       R"($.reference: has no top-level "def run(")"},
      {"bad_entry_point", Kind::solution, solution_with("kernel.cu:run", "kernel.cu"),
       R"($.spec.entry_point: "kernel.cu:run" is not)"},
      {"double_separator", Kind::solution, solution_with("a::b::c", "a"), "$.spec.entry_point:"},
      {"dotdot_in_source_path", Kind::solution, solution_with("../k.cu::run", "../k.cu"),
       R"($.sources[0].path: "../k.cu" must be a relative path without "..")"},
      {"absolute_source_path", Kind::solution, solution_with("/k.cu::run", "/k.cu"),
       "$.sources[0].path:"},
      {"entry_file_not_a_source", Kind::solution, solution_with("other.cu::run", "kernel.cu"),
       R"($.spec.entry_point: entry file "other.cu" is not among the sources)"},
      {"passed_without_performance", Kind::traces, trace_with(evaluation("PASSED", kCorrect)),
       "$.evaluation: status PASSED requires performance"},
      {"numerical_with_performance", Kind::traces,
       trace_with(evaluation("INCORRECT_NUMERICAL", std::string(kCorrect) + kPerf)),
       "$.evaluation: status INCORRECT_NUMERICAL must have null performance"},
      {"timeout_with_correctness", Kind::traces, trace_with(evaluation("TIMEOUT", kCorrect)),
       "$.evaluation: status TIMEOUT must have null correctness"},
      {"unknown_status", Kind::traces, trace_with(evaluation("passed", "")),
       R"($.evaluation.status: unknown status "passed")"},
      {"infinite_latency", Kind::traces,
       trace_with(evaluation("PASSED",
                             std::string(kCorrect) + R"(,"performance":{"latency_ms":Infinity})")),
       "$.evaluation.performance.latency_ms: expected a number"},
      {"negative_error", Kind::traces,
       trace_with(evaluation("INCORRECT_NUMERICAL",
                             R"(,"correctness":{"max_relative_error":"-Infinity"})")),
       "$.evaluation.correctness.max_relative_error: must be >= 0"},
      {"bad_workload_axis", Kind::traces,
       "\n"
       R"({"definition":"d","workload":{"axes":{"M":-1},"inputs":{},"uuid":"u"}})"
       "\n",
       "$.workload.axes.M: must be >= 0"},
      {"invalid_json_line", Kind::traces, "\n\n{\"definition\": oops}\n",
       "invalid JSON at column 16"},
      {"invalid_json_definition", Kind::definition, "{\n  \"name\": \"d\",\n  ]\n}",
       "invalid JSON at line 3, column 3"},
  };
}

util::Error load_error(const std::filesystem::path& file, Kind kind) {
  switch (kind) {
  case Kind::definition:
    return load_definition(file).error();
  case Kind::solution:
    return load_solution(file).error();
  case Kind::traces:
    return load_traces_jsonl(file).error();
  }
  throw util::Fatal("unreachable");
}

void PrintTo(const Malformed& malformed, std::ostream* out) {
  *out << malformed.label;
}

class MalformedFile : public ::testing::TestWithParam<Malformed> {};

} // namespace

TEST_P(MalformedFile, IsRejectedWithFileJsonPathAndReason) {
  ScratchDir scratch;
  const Malformed& param = GetParam();
  auto file = scratch.path() / (param.label + (param.kind == Kind::traces ? ".jsonl" : ".json"));
  ASSERT_TRUE(util::write_file_atomic(file, param.text));
  util::Error error = load_error(file, param.kind);
  EXPECT_EQ(error.kind, util::ErrorKind::invalid_input);
  std::string origin = file.string() + (param.kind == Kind::traces ? ":2: " : ": ");
  if (param.label == "invalid_json_line")
    origin = file.string() + ":3: ";
  EXPECT_NE(error.message.find(origin + param.expected), std::string::npos) << error.message;
}

INSTANTIATE_TEST_SUITE_P(Cases, MalformedFile, ::testing::ValuesIn(cases()),
                         [](const auto& test) { return test.param.label; });

TEST(MalformedFile, MissingFileIsNotFoundAndNamesThePath) {
  auto def = load_definition("/nonexistent/definitions/gemm/x.json");
  ASSERT_FALSE(def);
  EXPECT_EQ(def.error().kind, util::ErrorKind::not_found);
  EXPECT_NE(def.error().message.find("/nonexistent/definitions/gemm/x.json"), std::string::npos);
  EXPECT_FALSE(load_traces_jsonl("/nonexistent/t.jsonl"));
}

TEST(MalformedWrite, EvaluationBreakingThePresenceTableIsRefusedAndNotAppended) {
  ScratchDir scratch;
  Trace trace;
  trace.definition = "d";
  trace.workload.uuid = "u";
  trace.solution = "s";
  trace.evaluation = Evaluation{};
  trace.evaluation->environment.hardware = "h";
  trace.evaluation->timestamp = "t";
  trace.evaluation->correctness = Correctness{};
  auto file = scratch.path() / "t.jsonl";
  auto appended = append_trace(file, trace);
  ASSERT_FALSE(appended);
  EXPECT_NE(appended.error().message.find("requires performance"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(file));
  EXPECT_THROW(to_json(*trace.evaluation), util::Fatal);
}

TEST(MalformedWrite, NonFinitePerformanceIsNeverWritten) {
  Evaluation evaluation;
  evaluation.environment.hardware = "h";
  evaluation.timestamp = "t";
  evaluation.correctness = Correctness{};
  evaluation.performance = Performance{std::numeric_limits<double>::infinity(), 1.0, 0.0};
  EXPECT_FALSE(check_writable(evaluation));
  evaluation.performance->latency_ms = 1.0;
  EXPECT_TRUE(check_writable(evaluation));
}

TEST(MalformedWorkload, ValidationAgainstTheDefinitionNamesAxesAndInputs) {
  Definition def;
  def.axes = {{"M", Axis::Kind::variable, 0, {}}, {"N", Axis::Kind::constant, 8, {}}};
  def.inputs = {{"A", std::vector<std::string>{"M", "N"}, DType::float16, {}}};
  Workload workload;
  workload.uuid = "u";
  workload.inputs = {{"A", RandomInput{}}};
  workload.axes = {{"M", 0}};
  EXPECT_NE(validate_workload(workload, def, "w.jsonl:1")
                .error()
                .message.find("w.jsonl:1: $.workload.axes.M: must be > 0"),
            std::string::npos);
  workload.axes = {{"M", 4}, {"N", 8}};
  EXPECT_NE(validate_workload(workload, def, "w").error().message.find("\"N\" is not a var axis"),
            std::string::npos);
  workload.axes = {{"M", 4}};
  EXPECT_TRUE(validate_workload(workload, def, "w"));
  workload.inputs.clear();
  EXPECT_NE(validate_workload(workload, def, "w").error().message.find("missing input \"A\""),
            std::string::npos);
}
