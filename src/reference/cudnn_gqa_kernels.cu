// Metadata in and LSE out for the cuDNN GQA references (cudnn_gqa_kernels.hpp).
//   prepare  one block per sequence b: n_q = qo_indptr[b+1] − qo_indptr[b] (decode: 1),
//            n_kv = kv_indptr[b+1] − kv_indptr[b]; seq_len_q[b] = n_q, seq_len_kv[b] = n_kv;
//            offsets scale the indptr entries by the row size in elements; page_table row b =
//            kv_indices[kv_indptr[b] .. +n_kv] followed by page 0 up to plan.max_kv_len, so
//            every table entry cuDNN may touch names a real page.
//   finish   blocks (chunk, b) over the n_q·Hq (query, head) pairs of sequence b; visible keys
//            = causal ? clamp(i + 1 + n_kv − n_q, 0, n_kv) : n_kv (bottom-right alignment).
// Both are O(tokens·Hq + pages) and touch no K/V data.
#include "reference/cudnn_gqa_kernels.hpp"

#include <cmath>
#include <cstdio>
#include <cuda_bf16.h>

namespace ptxbench::reference {
namespace {

constexpr int kThreads = 256;
constexpr float kLog2E = 1.4426950408889634f;

struct SequenceSpan {
  int q_begin; // first query token
  int n_q;
  int n_kv;
};

__device__ inline SequenceSpan span_of(const GqaIndexArgs& index, int b) {
  const int n_kv = index.kv_indptr[b + 1] - index.kv_indptr[b];
  if (index.qo_indptr == nullptr)
    return SequenceSpan{b, 1, n_kv};
  return SequenceSpan{index.qo_indptr[b], index.qo_indptr[b + 1] - index.qo_indptr[b], n_kv};
}

__global__ void prepare_kernel(GqaShape shape, GqaPlan plan, GqaIndexArgs index,
                               CudnnGqaMetadata metadata) {
  const int b = static_cast<int>(blockIdx.x);
  const SequenceSpan span = span_of(index, b);
  if (span.n_q > plan.max_q_len || span.n_kv > plan.max_kv_len) {
    if (threadIdx.x == 0)
      std::printf("cuDNN GQA reference: sequence %d has %d queries and %d keys, the plan allows "
                  "%lld and %lld\n",
                  b, span.n_q, span.n_kv, static_cast<long long>(plan.max_q_len),
                  static_cast<long long>(plan.max_kv_len));
    __trap();
  }
  const bool last = b + 1 == static_cast<int>(shape.sequences);
  if (threadIdx.x == 0) {
    metadata.seq_len_q[b] = span.n_q;
    metadata.seq_len_kv[b] = span.n_kv;
    const int row_q = static_cast<int>(shape.qo_heads * shape.head_dim);
    const int row_kv = static_cast<int>(shape.kv_heads * shape.head_dim);
    const int heads = static_cast<int>(shape.qo_heads);
    for (int end = 0; end <= (last ? 1 : 0); ++end) {
      const int entry = b + end;
      if (metadata.q_offsets != nullptr) {
        metadata.q_offsets[entry] = index.qo_indptr[entry] * row_q;
        metadata.stats_offsets[entry] = index.qo_indptr[entry] * heads;
      }
      if (metadata.kv_offsets != nullptr)
        metadata.kv_offsets[entry] = index.kv_indptr[entry] * row_kv;
    }
  }
  if (metadata.page_table == nullptr)
    return;
  int* row = metadata.page_table + static_cast<long long>(b) * plan.max_kv_len;
  const int* pages = index.kv_indices + index.kv_indptr[b];
  for (int j = static_cast<int>(threadIdx.x); j < plan.max_kv_len; j += blockDim.x)
    row[j] = j < span.n_kv ? pages[j] : 0;
}

__global__ void finish_kernel(GqaShape shape, GqaIndexArgs index, __nv_bfloat16* out, float* lse) {
  const int b = static_cast<int>(blockIdx.y);
  const SequenceSpan span = span_of(index, b);
  const int heads = static_cast<int>(shape.qo_heads);
  const long long pair = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (pair >= static_cast<long long>(span.n_q) * heads)
    return;
  const int i = static_cast<int>(pair / heads);
  const long long row = static_cast<long long>(span.q_begin + i) * heads + pair % heads;
  int visible = span.n_kv;
  if (shape.causal)
    visible = min(max(i + 1 + span.n_kv - span.n_q, 0), span.n_kv);
  if (visible > 0) {
    lse[row] *= kLog2E;
    return;
  }
  lse[row] = -INFINITY;
  for (long long d = 0; d < shape.head_dim; ++d)
    out[row * shape.head_dim + d] = __float2bfloat16(0.0f);
}

} // namespace

cudaError_t launch_cudnn_gqa_prepare(const GqaShape& shape, const GqaPlan& plan,
                                     const GqaIndexArgs& index, const CudnnGqaMetadata& metadata,
                                     cudaStream_t stream) {
  prepare_kernel<<<static_cast<unsigned>(shape.sequences), kThreads, 0, stream>>>(shape, plan,
                                                                                  index, metadata);
  return cudaGetLastError();
}

cudaError_t launch_cudnn_gqa_finish(const GqaShape& shape, const GqaPlan& plan,
                                    const GqaIndexArgs& index, void* out, float* lse,
                                    cudaStream_t stream) {
  const long long pairs = plan.max_q_len * shape.qo_heads;
  const dim3 grid(static_cast<unsigned>((pairs + kThreads - 1) / kThreads),
                  static_cast<unsigned>(shape.sequences));
  finish_kernel<<<grid, kThreads, 0, stream>>>(shape, index, static_cast<__nv_bfloat16*>(out), lse);
  return cudaGetLastError();
}

} // namespace ptxbench::reference
