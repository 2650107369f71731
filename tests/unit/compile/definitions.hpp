// Definitions built in C++ for the compile tests (no JSON reader involved).
#pragma once

#include "trace/schema.hpp"

#include <optional>
#include <string>
#include <vector>

namespace ptxbench::compile::testing {

using trace::Axis;
using trace::DType;
using trace::TensorSpec;

inline Axis var_axis(std::string name) {
  return Axis{std::move(name), Axis::Kind::variable, 0, {}};
}
inline Axis const_axis(std::string name, std::int64_t value) {
  return Axis{std::move(name), Axis::Kind::constant, value, {}};
}
inline TensorSpec tensor(std::string name, std::vector<std::string> shape, DType dtype) {
  return TensorSpec{std::move(name), std::move(shape), dtype, {}};
}
inline TensorSpec scalar(std::string name, DType dtype) {
  return TensorSpec{std::move(name), std::nullopt, dtype, {}};
}

// gemm_n7168_k5120: C = A·Bᵀ, A [M,K], B [N,K], C [M,N], all bf16.
inline trace::Definition gemm_definition() {
  trace::Definition d;
  d.name = "gemm_n7168_k5120";
  d.axes = {var_axis("M"), const_axis("N", 7168), const_axis("K", 5120)};
  d.inputs = {tensor("A", {"M", "K"}, DType::bfloat16), tensor("B", {"N", "K"}, DType::bfloat16)};
  d.outputs = {tensor("C", {"M", "N"}, DType::bfloat16)};
  return d;
}

// Attention with a scalar softmax scale and an int32 index tensor between tensor inputs.
inline trace::Definition attention_definition() {
  trace::Definition d;
  d.name = "attention_h32_d128";
  d.axes = {var_axis("batch"), var_axis("seq"), const_axis("heads", 32), const_axis("dim", 128)};
  d.inputs = {tensor("q", {"batch", "seq", "heads", "dim"}, DType::bfloat16),
              tensor("k", {"batch", "seq", "heads", "dim"}, DType::bfloat16),
              tensor("v", {"batch", "seq", "heads", "dim"}, DType::bfloat16),
              scalar("sm_scale", DType::float32), tensor("seq_lens", {"batch"}, DType::int32)};
  d.outputs = {tensor("o", {"batch", "seq", "heads", "dim"}, DType::bfloat16),
               tensor("lse", {"batch", "seq", "heads"}, DType::float32)};
  return d;
}

// axpy: y = alpha·x + y with x, y float32 [N]; matches tests/data/compile/axpy_*.cu.
inline trace::Definition axpy_definition() {
  trace::Definition d;
  d.name = "axpy";
  d.axes = {var_axis("N")};
  d.inputs = {tensor("x", {"N"}, DType::float32), scalar("alpha", DType::float32)};
  d.outputs = {tensor("y", {"N"}, DType::float32)};
  return d;
}

} // namespace ptxbench::compile::testing
