#include "compile/triton_abi.hpp"

#include "util/enum_table.hpp"

#include <algorithm>
#include <array>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <string_view>

namespace ptxbench::compile {
namespace {

using trace::DType;

struct TorchDType {
  DType dtype;
  std::string_view torch;
  std::string_view scalar;
};

constexpr std::array kTorchDTypes{
    TorchDType{DType::float32, "torch.float32", "float"},
    TorchDType{DType::float16, "torch.float16", "float"},
    TorchDType{DType::bfloat16, "torch.bfloat16", "float"},
    TorchDType{DType::float8_e4m3fn, "torch.float8_e4m3fn", "float"},
    TorchDType{DType::float8_e5m2, "torch.float8_e5m2", "float"},
    TorchDType{DType::float4_e2m1, "torch.float4_e2m1fn_x2", "float"},
    TorchDType{DType::int64, "torch.int64", "int"},
    TorchDType{DType::int32, "torch.int32", "int"},
    TorchDType{DType::int16, "torch.int16", "int"},
    TorchDType{DType::int8, "torch.int8", "int"},
    TorchDType{DType::boolean, "torch.bool", "bool"},
};

consteval bool torch_table_complete() {
  for (std::size_t i = 0; i < kTorchDTypes.size(); ++i)
    if (static_cast<std::size_t>(kTorchDTypes[i].dtype) != i + 1)
      return false;
  return true;
}
static_assert(torch_table_complete(), "kTorchDTypes must list every DType in value order");
static_assert(util::no_enumerator_after<DType, kTorchDTypes.size()>(),
              "kTorchDTypes lacks a row for an enumerator after its last");

const TorchDType& torch_of(DType dtype) {
  return kTorchDTypes.at(static_cast<std::size_t>(dtype) - 1);
}

// Python's keywords and soft keywords, plus the two module names a candidate must keep.
constexpr std::string_view kReservedNames[] = {
    "False", "None",     "True",  "and",    "as",   "assert", "async",  "await",    "break",
    "class", "continue", "def",   "del",    "elif", "else",   "except", "finally",  "for",
    "from",  "global",   "if",    "import", "in",   "is",     "lambda", "nonlocal", "not",
    "or",    "pass",     "raise", "return", "try",  "while",  "with",   "yield",    "match",
    "case",  "type",     "torch", "triton", "tl"};

bool is_python_identifier(std::string_view name) {
  return is_plain_identifier(name, kReservedNames);
}

// "[M, 5120]": variable axes by name, constant axes by value.
std::string shape_text(const trace::Definition& definition, const std::vector<std::string>& shape) {
  std::string out = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    const trace::Axis* axis = definition.find_axis(shape[i]);
    bool constant = axis != nullptr && axis->kind == trace::Axis::Kind::constant;
    out += (i ? ", " : "") + (constant ? std::to_string(axis->value) : shape[i]);
  }
  return out + "]";
}

TritonParam tensor_param(const trace::Definition& definition, const trace::TensorSpec& spec,
                         ParamRole role) {
  const TorchDType& t = torch_of(spec.dtype);
  if (role == ParamRole::scalar_input)
    return {role, spec.name, fmt::format("{} ({}), input", t.scalar, t.torch.substr(6))};
  std::string where =
      role == ParamRole::output ? "output, preallocated: write every element" : "input, read-only";
  return {
      role, spec.name,
      fmt::format("torch.Tensor {} {}, {}", t.torch, shape_text(definition, *spec.shape), where)};
}

std::vector<TritonParam> collect_triton_params(const trace::Definition& definition) {
  std::vector<TritonParam> params;
  for (const auto& input : definition.inputs)
    params.push_back(tensor_param(
        definition, input, input.is_scalar() ? ParamRole::scalar_input : ParamRole::tensor_input));
  for (const auto& output : definition.outputs)
    params.push_back(tensor_param(definition, output, ParamRole::output));
  for (const auto& axis : definition.axes)
    if (axis.kind == trace::Axis::Kind::variable)
      params.push_back({ParamRole::var_axis, axis.name, "int, variable axis"});
  return params;
}

util::Status check_triton_names(const std::vector<TritonParam>& params,
                                const std::string& definition) {
  for (std::size_t i = 0; i < params.size(); ++i) {
    const std::string& name = params[i].name;
    if (!is_python_identifier(name))
      return util::make_error(
          util::ErrorKind::invalid_input,
          fmt::format("definition '{}': '{}' cannot be a Python parameter name", definition, name));
    for (std::size_t j = 0; j < i; ++j)
      if (params[j].name == name)
        return util::make_error(
            util::ErrorKind::invalid_input,
            fmt::format("definition '{}': two `run` parameters are named '{}'", definition, name));
  }
  return util::Ok{};
}

} // namespace

std::vector<std::string> TritonSignature::names() const {
  std::vector<std::string> out;
  for (const auto& p : m_params)
    out.push_back(p.name);
  return out;
}

std::string TritonSignature::one_line() const {
  return fmt::format("def run({})", fmt::join(names(), ", "));
}

std::string TritonSignature::pretty() const {
  std::string out = "def run(\n";
  for (const auto& p : m_params)
    out += fmt::format("    {},  # {}\n", p.name, p.note);
  return out + ") -> None: ...";
}

util::Expected<TritonSignature> make_triton_signature(const trace::Definition& definition) {
  auto params = collect_triton_params(definition);
  PTXBENCH_TRY(check_triton_names(params, definition.name));
  return TritonSignature(std::move(params));
}

} // namespace ptxbench::compile
