// FlashInfer's GQA kernels (FlashInfer 0.6.14, headers from .deps/flashinfer) behind a plain
// interface, so that only the two .cu files that instantiate them parse FlashInfer's templates:
//   sm90_flashinfer_prefill.cu  ragged and paged causal prefill, FlashInfer's FA3 (sm90) kernels
//                               and PrefillSM90Plan: what FlashInfer's "auto" backend picks on
//                               an H100/H200 for bf16 without custom mask or RoPE;
//   flashinfer_decode.cu        paged decode, FlashInfer's CUDA-core decode kernel and
//                               DecodePlan: what BatchDecodeWithPagedKVCacheWrapper runs by
//                               default (use_tensor_cores=False).
// Only head_dim 128, bf16 in and out, int32 indices, page size 1 and causal prefill are
// instantiated (the three GQA problems); flashinfer_gqa_unsupported (library_factories.hpp)
// refuses anything else before planning.
//
// Plan/run split, as FlashInfer's wrappers: *_plan runs FlashInfer's scheduler on the host from
// the workload's indptr arrays, writes the schedule into the int workspace (an async copy on
// `stream`, the caller synchronises) and returns FlashInfer's plan info (its ToVector form);
// *_run launches the kernels on `stream` from that plan, and is what gets timed.
#pragma once

#include "reference/shape_types.hpp"

#include <cstddef>
#include <cstdint>
#include <cuda_runtime_api.h>
#include <string>
#include <vector>

namespace ptxbench::reference {

// FlashInfer's workspaces, sized as its Python wrappers size them (128 MiB float, 8 MiB int).
struct FlashInferWorkspace {
  void* float_buffer = nullptr; // device
  std::size_t float_bytes = 0;
  void* int_buffer = nullptr;        // device
  void* pinned_int_buffer = nullptr; // page-locked host, int_bytes
  std::size_t int_bytes = 0;
  int* kv_last_page_len = nullptr; // device [B], all 1 (page size 1); decode only
};
inline constexpr std::size_t kFlashInferFloatWorkspaceBytes = std::size_t{128} << 20;
inline constexpr std::size_t kFlashInferIntWorkspaceBytes = std::size_t{8} << 20;

// The buffers of one call (device pointers). FlashInfer's prefill kernels read the sequence
// layout from the plan, not from the call: qo_indptr/kv_indptr of the call must equal the
// planned ones (the reference is planned per workload, as FlashInfer-Bench plans its baseline).
struct FlashInferGqaArgs {
  const void* q = nullptr;         // bf16 [tokens, Hq, D]
  const void* k = nullptr;         // bf16 ragged [kv_tokens, Hkv, D] or pages [P, 1, Hkv, D]
  const void* v = nullptr;         // same layout as k
  const int* kv_indptr = nullptr;  // [B+1]; decode reads it on the device
  const int* kv_indices = nullptr; // paged: page ids; ragged: null
  void* output = nullptr;          // bf16 [tokens, Hq, D]
  float* lse = nullptr;            // [tokens, Hq], base 2 (FlashInfer's convention)
  float sm_scale = 0.0f;
};

// The outcome of planning: FlashInfer's plan info, or why FlashInfer refused (empty = planned).
struct FlashInferPlanResult {
  std::vector<std::int64_t> plan_info;
  std::string error;
};

FlashInferPlanResult flashinfer_prefill_plan(const GqaShape& shape,
                                             std::vector<std::int32_t> qo_indptr,
                                             std::vector<std::int32_t> kv_indptr,
                                             const FlashInferWorkspace& workspace,
                                             cudaStream_t stream);
cudaError_t flashinfer_prefill_run(const GqaShape& shape,
                                   const std::vector<std::int64_t>& plan_info,
                                   const FlashInferWorkspace& workspace,
                                   const FlashInferGqaArgs& args, cudaStream_t stream);

FlashInferPlanResult flashinfer_decode_plan(const GqaShape& shape,
                                            std::vector<std::int32_t> kv_indptr,
                                            const FlashInferWorkspace& workspace,
                                            cudaStream_t stream);
cudaError_t flashinfer_decode_run(const GqaShape& shape, const std::vector<std::int64_t>& plan_info,
                                  const FlashInferWorkspace& workspace,
                                  const FlashInferGqaArgs& args, cudaStream_t stream);

} // namespace ptxbench::reference
