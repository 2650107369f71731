// The FlashInfer-Trace data model (reference/flashinfer-trace.md §1): Definition, Workload,
// Solution, Trace and the Evaluation it carries. Plain values; reading, writing and validation
// live in json_io.hpp. Maps whose key order is the calling convention (axes, inputs, outputs)
// are vectors of named entries, never std::map.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace ptxbench::trace {

using Json = nlohmann::ordered_json;

// Persisted as the FlashInfer-Trace spelling (to_string/parse_dtype in json_io.hpp).
enum class DType : std::uint8_t {
  float32 = 1,
  float16 = 2,
  bfloat16 = 3,
  float8_e4m3fn = 4,
  float8_e5m2 = 5,
  float4_e2m1 = 6,
  int64 = 7,
  int32 = 8,
  int16 = 9,
  int8 = 10,
  boolean = 11, // spelled "bool"
};

struct Axis {
  enum class Kind : std::uint8_t { constant = 1, variable = 2 };
  std::string name;
  Kind kind = Kind::variable;
  std::int64_t value = 0; // meaningful only for constant axes
  std::optional<std::string> description;
};

struct TensorSpec {
  std::string name;
  // nullopt: a scalar passed by value; an empty vector: a 0-D tensor.
  std::optional<std::vector<std::string>> shape;
  DType dtype = DType::float32;
  std::optional<std::string> description;

  bool is_scalar() const { return !shape.has_value(); }
};

struct Definition {
  std::string name;
  std::string op_type;
  std::vector<Axis> axes;
  std::vector<TensorSpec> inputs;  // order = argument order
  std::vector<TensorSpec> outputs; // order = argument order, after the inputs
  std::string reference;           // Python source with a top-level `def run`
  std::vector<std::string> tags;
  std::optional<std::string> description;
  std::vector<std::string> constraints;

  const Axis* find_axis(const std::string& axis_name) const;
  const TensorSpec* find_input(const std::string& input_name) const;
};

struct RandomInput {};
struct ScalarInput {
  std::variant<std::int64_t, double, bool> value;
};
struct SafetensorsInput {
  std::string path;
  std::string tensor_key;
};
using InputSpec = std::variant<RandomInput, ScalarInput, SafetensorsInput>;

struct Workload {
  std::vector<std::pair<std::string, std::int64_t>> axes; // var axes only, in file order
  std::vector<std::pair<std::string, InputSpec>> inputs;
  std::string uuid;
  // Fork extension: stored reference outputs (output name -> blob).
  std::optional<std::vector<std::pair<std::string, SafetensorsInput>>> outputs;

  std::optional<std::int64_t> axis_value(const std::string& axis_name) const;
};

enum class Language : std::uint8_t { python = 1, triton = 2, cpp = 3, cuda = 4, tilelang = 5 };
enum class Binding : std::uint8_t { none = 0, tvm_ffi = 1, torch = 2, ptxbench = 3 };

struct BuildSpec {
  Language language = Language::cuda;
  std::vector<std::string> target_hardware;
  std::string entry_point; // "<relative path>::<symbol>"
  std::vector<std::string> dependencies;
  bool destination_passing_style = true;
  Binding binding = Binding::none; // none = the key was absent or null
};

struct SourceFile {
  std::string path;
  std::string content;
};

struct Solution {
  std::string name;
  std::string definition;
  std::string author;
  BuildSpec spec;
  std::vector<SourceFile> sources;
  std::optional<std::string> description;
};

// Persisted with exactly these spellings (FlashInfer-Trace EvaluationStatus).
enum class EvaluationStatus : std::uint8_t {
  passed = 1,
  incorrect_shape = 2,
  incorrect_numerical = 3,
  incorrect_dtype = 4,
  runtime_error = 5,
  compile_error = 6,
  timeout = 7,
};

struct Correctness {
  double max_relative_error = 0.0; // may be NaN or +inf
  double max_absolute_error = 0.0;
  std::optional<Json> extra;
};

struct Performance {
  double latency_ms = 0.0;
  double reference_latency_ms = 0.0;
  double speedup_factor = 0.0;
};

struct Environment {
  std::string hardware;
  std::vector<std::pair<std::string, std::string>> libs;
};

struct Evaluation {
  EvaluationStatus status = EvaluationStatus::passed;
  Environment environment;
  std::string timestamp;
  std::string log;
  std::optional<Correctness> correctness;
  std::optional<Performance> performance;
  std::optional<Json> ptxbench; // our extras (verification verdicts, timing detail); others drop it
};

struct Trace {
  std::string definition;
  Workload workload;
  std::optional<std::string> solution;
  std::optional<Evaluation> evaluation;

  bool is_workload_trace() const { return !solution && !evaluation; }
};

} // namespace ptxbench::trace
