#include "compile/abi.hpp"

#include "util/enum_table.hpp"

#include <algorithm>
#include <array>
#include <fmt/format.h>

namespace ptxbench::compile {
namespace detail {
extern const std::string_view kPtxbenchCallHeader;
} // namespace detail

namespace {

using trace::DType;

// How the shim reads a scalar of this dtype out of a PtxbenchScalar.
enum class ScalarRead : std::uint8_t { member = 1, raw_bits = 2, boolean = 3 };

struct DTypeAbi {
  DType dtype;
  CType ctype;
  std::string_view scalar_member;
  ScalarRead read;
};

constexpr std::array kDTypeAbi{
    DTypeAbi{DType::float32, {"float", ""}, "f32", ScalarRead::member},
    DTypeAbi{DType::float16, {"__half", "cuda_fp16.h"}, "u16", ScalarRead::raw_bits},
    DTypeAbi{DType::bfloat16, {"__nv_bfloat16", "cuda_bf16.h"}, "u16", ScalarRead::raw_bits},
    DTypeAbi{DType::float8_e4m3fn, {"__nv_fp8_e4m3", "cuda_fp8.h"}, "u8", ScalarRead::raw_bits},
    DTypeAbi{DType::float8_e5m2, {"__nv_fp8_e5m2", "cuda_fp8.h"}, "u8", ScalarRead::raw_bits},
    DTypeAbi{DType::float4_e2m1, {"__nv_fp4x2_e2m1", "cuda_fp4.h"}, "u8", ScalarRead::raw_bits},
    DTypeAbi{DType::int64, {"int64_t", "cstdint"}, "i64", ScalarRead::member},
    DTypeAbi{DType::int32, {"int32_t", "cstdint"}, "i32", ScalarRead::member},
    DTypeAbi{DType::int16, {"int16_t", "cstdint"}, "i16", ScalarRead::member},
    DTypeAbi{DType::int8, {"int8_t", "cstdint"}, "i8", ScalarRead::member},
    DTypeAbi{DType::boolean, {"bool", ""}, "u8", ScalarRead::boolean},
};

consteval bool dtype_table_complete() {
  for (std::size_t i = 0; i < kDTypeAbi.size(); ++i)
    if (static_cast<std::size_t>(kDTypeAbi[i].dtype) != i + 1)
      return false;
  return true;
}
static_assert(dtype_table_complete(), "kDTypeAbi must list every DType in value order");
static_assert(util::no_enumerator_after<DType, kDTypeAbi.size()>(),
              "kDTypeAbi lacks a row for an enumerator after its last");

const DTypeAbi& abi_of(DType dtype) {
  return kDTypeAbi.at(static_cast<std::size_t>(dtype) - 1);
}

constexpr std::string_view kCppKeywords[] = {"alignas",       "alignof",     "and",
                                             "and_eq",        "asm",         "auto",
                                             "bitand",        "bitor",       "bool",
                                             "break",         "case",        "catch",
                                             "char",          "char8_t",     "char16_t",
                                             "char32_t",      "class",       "compl",
                                             "concept",       "const",       "consteval",
                                             "constexpr",     "constinit",   "const_cast",
                                             "continue",      "co_await",    "co_return",
                                             "co_yield",      "decltype",    "default",
                                             "delete",        "do",          "double",
                                             "dynamic_cast",  "else",        "enum",
                                             "explicit",      "export",      "extern",
                                             "false",         "float",       "for",
                                             "friend",        "goto",        "if",
                                             "inline",        "int",         "long",
                                             "mutable",       "namespace",   "new",
                                             "noexcept",      "not",         "not_eq",
                                             "nullptr",       "operator",    "or",
                                             "or_eq",         "private",     "protected",
                                             "public",        "register",    "reinterpret_cast",
                                             "requires",      "return",      "short",
                                             "signed",        "sizeof",      "static",
                                             "static_assert", "static_cast", "struct",
                                             "switch",        "template",    "this",
                                             "thread_local",  "throw",       "true",
                                             "try",           "typedef",     "typeid",
                                             "typename",      "union",       "unsigned",
                                             "using",         "virtual",     "void",
                                             "volatile",      "wchar_t",     "while",
                                             "xor",           "xor_eq"};

bool is_identifier(std::string_view name) {
  return is_plain_identifier(name, kCppKeywords);
}

AbiParam tensor_param(const trace::TensorSpec& spec, ParamRole role) {
  std::string type(abi_of(spec.dtype).ctype.spelling);
  if (role == ParamRole::scalar_input)
    return {role, type, spec.name, spec.dtype};
  if (role == ParamRole::tensor_input)
    type = "const " + type;
  return {role, type + "*", spec.name, spec.dtype};
}

std::vector<AbiParam> collect_params(const trace::Definition& definition) {
  std::vector<AbiParam> params;
  for (const auto& input : definition.inputs)
    params.push_back(
        tensor_param(input, input.is_scalar() ? ParamRole::scalar_input : ParamRole::tensor_input));
  for (const auto& output : definition.outputs)
    params.push_back(tensor_param(output, ParamRole::output));
  for (const auto& axis : definition.axes)
    if (axis.kind == trace::Axis::Kind::variable)
      params.push_back({ParamRole::var_axis, "int64_t", axis.name, DType::int64});
  params.push_back({ParamRole::stream, "cudaStream_t", "stream", DType::int64});
  return params;
}

util::Status check_names(const std::vector<AbiParam>& params, const std::string& definition) {
  for (std::size_t i = 0; i < params.size(); ++i) {
    const std::string& name = params[i].name;
    if (!is_identifier(name))
      return util::make_error(
          util::ErrorKind::invalid_input,
          fmt::format("definition '{}': '{}' cannot be a C++ parameter name", definition, name));
    for (std::size_t j = 0; j < i; ++j)
      if (params[j].name == name)
        return util::make_error(
            util::ErrorKind::invalid_input,
            fmt::format("definition '{}': two `run` parameters are named '{}'{}", definition, name,
                        name == "stream" ? " (`stream` is the CUDA stream parameter)" : ""));
  }
  return util::Ok{};
}

std::string param_text(const AbiParam& param) {
  return param.type + " " + param.name;
}

std::string element_type(const AbiParam& param) {
  return std::string(abi_of(param.dtype).ctype.spelling);
}

std::string scalar_argument(const AbiParam& param, std::size_t slot) {
  const DTypeAbi& abi = abi_of(param.dtype);
  std::string field = fmt::format("call->scalars[{}].{}", slot, abi.scalar_member);
  switch (abi.read) {
  case ScalarRead::member:
    return field;
  case ScalarRead::raw_bits:
    return fmt::format("ptxbench_from_bits<{}>({})", abi.ctype.spelling, field);
  case ScalarRead::boolean:
    return field + " != 0";
  }
  return field;
}

// The expressions that unpack a PtxbenchCall into `run`'s arguments, in parameter order.
std::vector<std::string> call_arguments(const std::vector<AbiParam>& params) {
  std::vector<std::string> args;
  std::size_t buffer = 0, scalar = 0, axis = 0;
  for (const auto& p : params) {
    switch (p.role) {
    case ParamRole::tensor_input:
      args.push_back(
          fmt::format("static_cast<const {}*>(call->buffers[{}])", element_type(p), buffer++));
      break;
    case ParamRole::output:
      args.push_back(fmt::format("static_cast<{}*>(call->buffers[{}])", element_type(p), buffer++));
      break;
    case ParamRole::scalar_input:
      args.push_back(scalar_argument(p, scalar++));
      break;
    case ParamRole::var_axis:
      args.push_back(fmt::format("call->var_axes[{}]", axis++));
      break;
    case ParamRole::stream:
      args.emplace_back("static_cast<cudaStream_t>(call->stream)");
      break;
    }
  }
  return args;
}

constexpr std::string_view kShimBody = R"shim(
namespace {{
template <typename T, typename Bits> T ptxbench_from_bits(Bits bits) {{
  static_assert(sizeof(T) == sizeof(Bits), "scalar bit width mismatch");
  T value;
  std::memcpy(static_cast<void*>(&value), &bits, sizeof value);
  return value;
}}
}} // namespace

extern "C" __attribute__((visibility("default"))) const char* ptxbench_abi_signature() {{
  return "{signature}";
}}

extern "C" __attribute__((visibility("default"))) int ptxbench_invoke(const PtxbenchCall* call) {{
  if (call == nullptr || call->version != PTXBENCH_CALL_VERSION || call->num_buffers != {buffers}u ||
      call->num_scalars != {scalars}u || call->num_var_axes != {axes}u)
    return PTXBENCH_INVOKE_BAD_CALL;
  try {{
    run({arguments});
  }} catch (...) {{
    return PTXBENCH_INVOKE_EXCEPTION;
  }}
  return static_cast<int>(cudaGetLastError());
}}
)shim";

} // namespace

bool is_plain_identifier(std::string_view name, std::span<const std::string_view> reserved) {
  auto ident_char = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  };
  if (name.empty() || (name[0] >= '0' && name[0] <= '9'))
    return false;
  if (!std::all_of(name.begin(), name.end(), ident_char))
    return false;
  return std::find(reserved.begin(), reserved.end(), name) == reserved.end();
}

CType c_type(trace::DType dtype) {
  return abi_of(dtype).ctype;
}

std::string Signature::one_line() const {
  std::string text = "void run(";
  for (std::size_t i = 0; i < m_params.size(); ++i)
    text += (i == 0 ? "" : ", ") + param_text(m_params[i]);
  return text + ")";
}

std::string Signature::pretty(std::size_t width) const {
  const std::string head = "void run(";
  std::string text = head;
  std::size_t column = head.size();
  for (std::size_t i = 0; i < m_params.size(); ++i) {
    std::string piece = param_text(m_params[i]) + (i + 1 == m_params.size() ? ");" : ",");
    bool first_on_line = column == head.size();
    if (!first_on_line && column + 1 + piece.size() > width) {
      text += "\n" + std::string(head.size(), ' ');
      column = head.size();
      first_on_line = true;
    }
    text += (first_on_line ? "" : " ") + piece;
    column += (first_on_line ? 0 : 1) + piece.size();
  }
  return text;
}

std::vector<std::string> Signature::headers() const {
  std::vector<std::string> headers{"cuda_runtime.h"};
  for (const auto& param : m_params) {
    std::string_view header =
        param.role == ParamRole::stream ? "" : abi_of(param.dtype).ctype.header;
    if (!header.empty() && std::find(headers.begin(), headers.end(), header) == headers.end())
      headers.emplace_back(header);
  }
  return headers;
}

std::size_t Signature::count(ParamRole role) const {
  return static_cast<std::size_t>(std::count_if(
      m_params.begin(), m_params.end(), [role](const AbiParam& p) { return p.role == role; }));
}

util::Expected<Signature> make_signature(const trace::Definition& definition) {
  std::vector<AbiParam> params = collect_params(definition);
  PTXBENCH_TRY(check_names(params, definition.name));
  return Signature(std::move(params));
}

std::string shim_source(const Signature& signature) {
  std::string text =
      "// ptxbench_shim.cu: generated by ptxbench from the definition's signature.\n";
  for (const auto& header : signature.headers())
    text += "#include <" + header + ">\n";
  text += "#include <cstring>\n\n";
  text += ptxbench_call_header();
  text += "\n" + signature.one_line() + ";\n";
  std::string arguments;
  for (const auto& arg : call_arguments(signature.params()))
    arguments += (arguments.empty() ? "" : ",\n        ") + arg;
  text += fmt::format(kShimBody, fmt::arg("signature", signature.one_line()),
                      fmt::arg("buffers", signature.count(ParamRole::tensor_input) +
                                              signature.count(ParamRole::output)),
                      fmt::arg("scalars", signature.count(ParamRole::scalar_input)),
                      fmt::arg("axes", signature.count(ParamRole::var_axis)),
                      fmt::arg("arguments", arguments));
  return text;
}

std::string_view ptxbench_call_header() {
  return detail::kPtxbenchCallHeader;
}

} // namespace ptxbench::compile
