// The candidate ABI (docs/abi.md): the typed `run` signature generated from a definition, the
// headers it needs, and the shim that adapts the uniform PtxbenchCall record to it.
#pragma once

#include "trace/schema.hpp"
#include "util/error.hpp"

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ptxbench::compile {

// The C spelling of a dtype and the header that declares it (empty for built-in types).
struct CType {
  std::string_view spelling;
  std::string_view header;
};
CType c_type(trace::DType dtype);

enum class ParamRole : std::uint8_t {
  tensor_input = 1,
  scalar_input = 2,
  output = 3,
  var_axis = 4,
  stream = 5,
};

struct AbiParam {
  ParamRole role = ParamRole::tensor_input;
  std::string type; // as written in the declaration, e.g. "const __nv_bfloat16*"
  std::string name;
  trace::DType dtype = trace::DType::int64; // element type; int64 for var axes and the stream
};

// The `run` signature of one definition, parameters in ABI order.
class Signature {
public:
  explicit Signature(std::vector<AbiParam> params) : m_params(std::move(params)) {}

  const std::vector<AbiParam>& params() const { return m_params; }
  // "void run(const float* x, ..., cudaStream_t stream)", no semicolon.
  std::string one_line() const;
  // The declaration wrapped at `width` columns, continuation lines aligned after "void run(",
  // ending in ";" — the form shown in prompts.
  std::string pretty(std::size_t width = 100) const;
  // Headers the parameter types need, cuda_runtime.h first, each once.
  std::vector<std::string> headers() const;
  std::size_t count(ParamRole role) const;

private:
  std::vector<AbiParam> m_params;
};

// Letters, digits and '_', not starting with a digit, and none of `reserved` (a language's
// keywords): a name both languages' signatures can use for a parameter.
bool is_plain_identifier(std::string_view name, std::span<const std::string_view> reserved);

// invalid_input when a name is not a usable C++ identifier or two parameters share a name.
util::Expected<Signature> make_signature(const trace::Definition& definition);

// The source of ptxbench_shim.cu: declares `run` with the expected signature and exports
// `ptxbench_invoke` and `ptxbench_abi_signature` (extern "C", default visibility).
std::string shim_source(const Signature& signature);

// The text of compile/ptxbench_call.h, as embedded in every shim.
std::string_view ptxbench_call_header();

} // namespace ptxbench::compile
