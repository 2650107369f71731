// Launchers of the naive GPU references (naive_gemm.cu, naive_attention.cu, naive_gqa.cu).
// Each enqueues its kernels on `stream` and returns cudaGetLastError(); pointers are device
// pointers to contiguous row-major tensors in the layouts the shape records describe.
#pragma once

#include "reference/shape_types.hpp"

#include <cstdint>
#include <cuda_runtime_api.h>

namespace ptxbench::reference {

// C = A·Bᵀ with fp32 accumulation; a, b, c are __nv_bfloat16.
cudaError_t launch_naive_gemm(const GemmShape& shape, const void* a, const void* b, void* c,
                              cudaStream_t stream);

// `count` bf16 values in [-1, 1), a hash of (seed, index): scratch operands for timing.
cudaError_t launch_fill_bf16(void* data, std::int64_t count, std::uint64_t seed,
                             cudaStream_t stream);

struct MhaForwardArgs {
  const void* q = nullptr; // bf16 [B,H,S,D]
  const void* k = nullptr;
  const void* v = nullptr;
  void* o = nullptr;    // bf16 [B,H,S,D]
  float* lse = nullptr; // f32 [B,H,S], natural log
};

// O = softmax(Q·Kᵀ·scale [+ causal mask]) · V, LSE = ln Σ exp(Q·Kᵀ·scale).
cudaError_t launch_naive_mha_forward(const MhaShape& shape, float scale, const MhaForwardArgs& args,
                                     cudaStream_t stream);

struct MhaBackwardArgs {
  const void* q = nullptr; // bf16 [B,H,S,D]
  const void* k = nullptr;
  const void* v = nullptr;
  const void* o = nullptr;
  const void* d_o = nullptr;
  const float* lse = nullptr; // f32 [B,H,S], natural log
  void* dq = nullptr;         // bf16 [B,H,S,D]
  void* dk = nullptr;
  void* dv = nullptr;
  float* delta = nullptr; // f32 [B,H,S] scratch: rowsum(dO∘O)
};

cudaError_t launch_naive_mha_backward(const MhaShape& shape, float scale,
                                      const MhaBackwardArgs& args, cudaStream_t stream);

struct GqaArgs {
  const void* q = nullptr; // bf16 [tokens,Hq,D]
  const void* k = nullptr; // bf16 ragged [kv_tokens,Hkv,D] or paged [pages,1,Hkv,D]
  const void* v = nullptr;
  const int* qo_indptr = nullptr;  // [sequences+1]; null for decode (one query per sequence)
  const int* kv_indptr = nullptr;  // [sequences+1]: KV rows (ragged) or page-list offsets (paged)
  const int* kv_indices = nullptr; // page ids (paged); null for ragged
  float sm_scale = 0.0f;
  void* out = nullptr;  // bf16 [tokens,Hq,D]
  float* lse = nullptr; // f32 [tokens,Hq], base 2
};

// FlashInfer-Trace GQA semantics: kv_head = h / (Hq/Hkv), bottom-right causal mask, base-2
// LSE; a query that sees no key gets output 0 and LSE −inf.
cudaError_t launch_naive_gqa(const GqaShape& shape, const GqaArgs& args, cudaStream_t stream);

} // namespace ptxbench::reference
