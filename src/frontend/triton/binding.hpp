// The binding of a Triton candidate's `run` (child/ptxbench_child.h's `binding`): how the
// PtxbenchCall the C++ child builds maps to `run`'s parameters, which the Python side
// (python/ptxbench_triton/child.py) follows without knowing the definition. JSON:
//   {"params": ["A", "B", "C", "M"],
//    "args": [{"kind": "tensor", "index": 0, "shape": [4096, 5120], "dtype": "bfloat16"},
//             {"kind": "scalar", "index": 0, "dtype": "float32"},
//             {"kind": "axis", "index": 0}, ...]}
// in parameter order (compile/triton_abi.hpp: inputs, outputs, variable axes); a tensor's index
// is its buffer's (tensor inputs then outputs), a scalar's its place among the scalar inputs,
// an axis's its place among the variable axes; shapes are the workload's, resolved here.
#pragma once

#include "trace/schema.hpp"
#include "util/error.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace ptxbench::frontend {

// `var_axes`: the workload's values of the definition's variable axes, in definition order.
// invalid_input when a dimension names no axis and is no number, or a value is missing.
util::Expected<std::string> triton_binding(const trace::Definition& definition,
                                           const std::vector<std::int64_t>& var_axes);

} // namespace ptxbench::frontend
