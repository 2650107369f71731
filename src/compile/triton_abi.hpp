// The Triton candidate form: one Python file defining `run(<inputs>, <outputs>, <var axes>)` in
// destination-passing style on torch tensors, generated from a definition like the C ABI of
// abi.hpp. Tensors arrive on the GPU, outputs preallocated; scalars and variable axes as Python
// numbers; no stream parameter (Triton launches on torch's current stream).
#pragma once

#include "compile/abi.hpp"
#include "trace/schema.hpp"
#include "util/error.hpp"

#include <string>
#include <vector>

namespace ptxbench::compile {

struct TritonParam {
  ParamRole role = ParamRole::tensor_input; // never ParamRole::stream
  std::string name;
  std::string note; // "torch.bfloat16 [M, 5120], input", shown as the parameter's comment
};

class TritonSignature {
public:
  explicit TritonSignature(std::vector<TritonParam> params) : m_params(std::move(params)) {}

  const std::vector<TritonParam>& params() const { return m_params; }
  std::vector<std::string> names() const;
  // "def run(A, B, C, M)", no colon.
  std::string one_line() const;
  // One parameter a line with its note as a comment, ending in "-> None: ..." — the prompt form.
  std::string pretty() const;

private:
  std::vector<TritonParam> m_params;
};

// invalid_input when a name is not a usable Python identifier (a keyword, `torch`, `triton`)
// or two parameters share a name.
util::Expected<TritonSignature> make_triton_signature(const trace::Definition& definition);

} // namespace ptxbench::compile
