// The two small kernels around the cuDNN SDPA call of the GQA references (sdpa_cudnn_gqa.cpp):
// cuDNN 9.19 wants per-sequence lengths, element offsets and a dense page table where
// FlashInfer-Trace gives indptr/indices, and it writes natural-log LSE where FlashInfer writes
// base 2. Both run on the call's stream inside the reference call, so they are timed with it.
#pragma once

#include "reference/shape_types.hpp"

#include <cuda_runtime_api.h>

namespace ptxbench::reference {

// The FlashInfer-Trace index tensors of one call (device pointers, int32).
struct GqaIndexArgs {
  const int* qo_indptr = nullptr;  // [B+1]; null for decode (query b belongs to sequence b)
  const int* kv_indptr = nullptr;  // [B+1]: KV rows (ragged) or page-list offsets (paged)
  const int* kv_indices = nullptr; // page ids (paged); null for ragged
};

// What cuDNN reads instead (device pointers, int32; an unused one is null).
struct CudnnGqaMetadata {
  int* seq_len_q = nullptr;     // [B]
  int* seq_len_kv = nullptr;    // [B]
  int* q_offsets = nullptr;     // [B+1] ragged Q and O: qo_indptr·Hq·D (elements)
  int* stats_offsets = nullptr; // [B+1] ragged Stats: qo_indptr·Hq
  int* kv_offsets = nullptr;    // [B+1] ragged K and V: kv_indptr·Hkv·D
  int* page_table = nullptr;    // [B, plan.max_kv_len]: row b = the pages of sequence b, then 0s
};

// Fills `metadata` from `index`. A sequence longer than the plan traps (the reference was
// planned for another layout: broken set-up, not an input the reference can serve).
cudaError_t launch_cudnn_gqa_prepare(const GqaShape& shape, const GqaPlan& plan,
                                     const GqaIndexArgs& index, const CudnnGqaMetadata& metadata,
                                     cudaStream_t stream);

// In place over cuDNN's outputs: lse[t,h] ← lse[t,h]·log2(e); a query that sees no key
// (an empty KV sequence, or bottom-right causal with more queries than keys) gets lse −inf and
// an all-zero output row, as FlashInfer's reference initialises them.
cudaError_t launch_cudnn_gqa_finish(const GqaShape& shape, const GqaPlan& plan,
                                    const GqaIndexArgs& index, void* out, float* lse,
                                    cudaStream_t stream);

} // namespace ptxbench::reference
