// A benchmark problem: a FlashInfer-Trace definition, its default workload, and what ptxbench
// derives from them (kind, mask, baseline library, resolved shapes, FLOPs and bytes).
#pragma once

#include "trace/schema.hpp"
#include "util/enum_table.hpp"

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ptxbench::suite {

// Persisted in listings; explicit values.
enum class OpKind : std::uint8_t {
  gemm = 1,
  mha_forward = 2,
  mha_backward = 3,
  gqa_ragged_prefill = 4,
  gqa_paged_prefill = 5,
  gqa_paged_decode = 6,
};

// How a definition is recognised (op_type, then a name prefix) and whose library it is
// measured against.
struct OpKindInfo {
  OpKind kind;
  std::string_view name;
  std::string_view op_type;
  std::string_view name_prefix;
  std::string_view baseline;
};

inline constexpr std::array kOpKinds{
    OpKindInfo{OpKind::gemm, "gemm", "gemm", "gemm_", "cuBLASLt"},
    OpKindInfo{OpKind::mha_forward, "mha_forward", "attention", "mha_with_lse_",
               "cuDNN SDPA forward"},
    OpKindInfo{OpKind::mha_backward, "mha_backward", "attention", "mha_bwd_",
               "cuDNN SDPA backward"},
    OpKindInfo{OpKind::gqa_ragged_prefill, "gqa_ragged_prefill", "gqa_ragged",
               "gqa_ragged_prefill_", "FlashInfer"},
    OpKindInfo{OpKind::gqa_paged_prefill, "gqa_paged_prefill", "gqa_paged", "gqa_paged_prefill_",
               "FlashInfer"},
    OpKindInfo{OpKind::gqa_paged_decode, "gqa_paged_decode", "gqa_paged", "gqa_paged_decode_",
               "FlashInfer"},
};

consteval bool op_kinds_complete() {
  for (std::size_t i = 0; i < kOpKinds.size(); ++i)
    if (static_cast<std::size_t>(kOpKinds[i].kind) != i + 1)
      return false;
  return true;
}
static_assert(op_kinds_complete(), "kOpKinds must list every OpKind in value order");
static_assert(util::no_enumerator_after<OpKind, kOpKinds.size()>(),
              "kOpKinds lacks a row for an enumerator after its last");

constexpr const OpKindInfo& info(OpKind kind) {
  return kOpKinds[static_cast<std::size_t>(kind) - 1];
}

enum class Mask : std::uint8_t { none = 1, causal = 2 };

// A tensor of the problem with its axes resolved against the workload; scalars have no dims.
struct ResolvedTensor {
  std::string name;
  trace::DType dtype = trace::DType::float32;
  bool scalar = false;
  std::vector<std::int64_t> dims;

  std::int64_t element_count() const;
  std::int64_t size_bytes() const; // 0 for scalars (passed by value)
};

struct Problem {
  trace::Definition definition;
  trace::Workload workload; // the default workload: the first line of the workload file
  OpKind kind = OpKind::gemm;
  Mask mask = Mask::none;
  std::string suite;    // "primary" or "generalization", from the suite:<name> tag
  std::string baseline; // library the speedup is measured against
  std::vector<std::pair<std::string, std::int64_t>> var_axes; // definition order
  std::vector<ResolvedTensor> inputs;
  std::vector<ResolvedTensor> outputs;
  std::int64_t flops = 0;
  std::int64_t io_bytes = 0; // all input and output tensors, each counted once

  const std::string& name() const { return definition.name; }
};

} // namespace ptxbench::suite
