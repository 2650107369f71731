// Naive MHA forward and backward: Q,K,V,O,dO,dQ,dK,dV [B,H,S,D] bf16 contiguous (BHSD,
// row-major), LSE [B,H,S] f32 in natural log, scale = 1/√D chosen by the caller, optional
// causal mask j ≤ i (Sq = Sk, so top-left and bottom-right alignment coincide).
//
// The independent check of the cuDNN SDPA references, in fp32 with one warp per row
// (naive_attention_common.cuh):
//   forward   per query row i: online softmax over keys → O_i = Σ_j p_ij V_j / Σ_j p_ij,
//             LSE_i = m_i + ln Σ_j exp(s_ij − m_i), s_ij = Q_i·K_j·scale.
//   backward  P is recomputed from the given L: p_ij = exp(s_ij − L_i).
//             D_i = Σ_d dO_id·O_id                      (delta kernel, per query row)
//             dQ_i = scale · Σ_j p_ij (dO_i·V_j − D_i) K_j   (per query row)
//             dV_j = Σ_i p_ij dO_i,  dK_j = scale · Σ_i p_ij (dO_i·V_j − D_i) Q_i (per key row)
// Each output element is written by exactly one warp, so there are no atomics and the result
// is deterministic. Cost is O(S²·D) per (b,h) with no data reuse beyond the caches — fine for
// tests (B=1,H=2,S=4096 runs in well under a second), never a performance reference.
#include "reference/naive_attention_common.cuh"
#include "reference/naive_kernels.hpp"

namespace ptxbench::reference {
namespace {

using naive::RowVec;
using bf16 = __nv_bfloat16;

struct RowIndex {
  std::int64_t row;    // b·H·S + h·S + i
  std::int64_t head;   // first row of this (b,h)
  std::int64_t within; // i
};

__device__ inline RowIndex row_index(std::int64_t row, std::int64_t seq) {
  return RowIndex{row, row - row % seq, row % seq};
}

template <int kChunks>
__global__ void mha_forward_kernel(MhaShape shape, float scale, MhaForwardArgs args) {
  const std::int64_t warp = naive::global_warp();
  if (warp >= shape.rows())
    return;
  const int dim = static_cast<int>(shape.head_dim);
  const RowIndex r = row_index(warp, shape.seq);
  RowVec<kChunks> q{};
  q.load(static_cast<const bf16*>(args.q) + r.row * dim, dim);
  const std::int64_t count = shape.mask == MaskKind::causal ? r.within + 1 : shape.seq;
  const auto key_row = [&](std::int64_t j) { return (r.head + j) * dim; };
  RowVec<kChunks> acc{};
  const naive::OnlineSoftmax softmax =
      naive::attend_row(q, static_cast<const bf16*>(args.k), static_cast<const bf16*>(args.v),
                        count, key_row, scale, dim, acc);
  acc.store(static_cast<bf16*>(args.o) + r.row * dim, dim, 1.0f / softmax.sum);
  if (naive::lane() == 0)
    args.lse[r.row] = softmax.lse_natural();
}

template <int kChunks> __global__ void mha_delta_kernel(MhaShape shape, MhaBackwardArgs args) {
  const std::int64_t warp = naive::global_warp();
  if (warp >= shape.rows())
    return;
  const int dim = static_cast<int>(shape.head_dim);
  RowVec<kChunks> d_o{};
  d_o.load(static_cast<const bf16*>(args.d_o) + warp * dim, dim);
  const float delta = d_o.dot(static_cast<const bf16*>(args.o) + warp * dim, dim);
  if (naive::lane() == 0)
    args.delta[warp] = delta;
}

template <int kChunks>
__global__ void mha_dq_kernel(MhaShape shape, float scale, MhaBackwardArgs args) {
  const std::int64_t warp = naive::global_warp();
  if (warp >= shape.rows())
    return;
  const int dim = static_cast<int>(shape.head_dim);
  const RowIndex r = row_index(warp, shape.seq);
  RowVec<kChunks> q{}, d_o{}, acc{};
  q.load(static_cast<const bf16*>(args.q) + r.row * dim, dim);
  d_o.load(static_cast<const bf16*>(args.d_o) + r.row * dim, dim);
  acc.fill(0.0f);
  const float lse = args.lse[r.row];
  const float delta = args.delta[r.row];
  const std::int64_t count = shape.mask == MaskKind::causal ? r.within + 1 : shape.seq;
  for (std::int64_t j = 0; j < count; ++j) {
    const std::int64_t offset = (r.head + j) * dim;
    const float p = expf(q.dot(static_cast<const bf16*>(args.k) + offset, dim) * scale - lse);
    const float dp = d_o.dot(static_cast<const bf16*>(args.v) + offset, dim);
    acc.scale_add(1.0f, p * (dp - delta), static_cast<const bf16*>(args.k) + offset, dim);
  }
  acc.store(static_cast<bf16*>(args.dq) + r.row * dim, dim, scale);
}

template <int kChunks>
__global__ void mha_dkdv_kernel(MhaShape shape, float scale, MhaBackwardArgs args) {
  const std::int64_t warp = naive::global_warp();
  if (warp >= shape.rows())
    return;
  const int dim = static_cast<int>(shape.head_dim);
  const RowIndex r = row_index(warp, shape.seq); // r is a key row here
  RowVec<kChunks> k{}, v{}, dk{}, dv{};
  k.load(static_cast<const bf16*>(args.k) + r.row * dim, dim);
  v.load(static_cast<const bf16*>(args.v) + r.row * dim, dim);
  dk.fill(0.0f);
  dv.fill(0.0f);
  const std::int64_t first = shape.mask == MaskKind::causal ? r.within : 0;
  for (std::int64_t i = first; i < shape.seq; ++i) {
    const std::int64_t query = r.head + i;
    const bf16* q_row = static_cast<const bf16*>(args.q) + query * dim;
    const bf16* d_o_row = static_cast<const bf16*>(args.d_o) + query * dim;
    const float p = expf(k.dot(q_row, dim) * scale - args.lse[query]);
    const float dp = v.dot(d_o_row, dim);
    dv.scale_add(1.0f, p, d_o_row, dim);
    dk.scale_add(1.0f, p * (dp - args.delta[query]), q_row, dim);
  }
  dk.store(static_cast<bf16*>(args.dk) + r.row * dim, dim, scale);
  dv.store(static_cast<bf16*>(args.dv) + r.row * dim, dim, 1.0f);
}

} // namespace

cudaError_t launch_naive_mha_forward(const MhaShape& shape, float scale, const MhaForwardArgs& args,
                                     cudaStream_t stream) {
  const unsigned blocks = naive::warp_blocks(shape.rows());
  constexpr unsigned kThreads = naive::kWarpsPerBlock * naive::kWarp;
  return naive::dispatch_chunks(static_cast<int>(shape.head_dim), [&]<int kChunks>() {
    mha_forward_kernel<kChunks><<<blocks, kThreads, 0, stream>>>(shape, scale, args);
    return cudaGetLastError();
  });
}

cudaError_t launch_naive_mha_backward(const MhaShape& shape, float scale,
                                      const MhaBackwardArgs& args, cudaStream_t stream) {
  const unsigned blocks = naive::warp_blocks(shape.rows());
  constexpr unsigned kThreads = naive::kWarpsPerBlock * naive::kWarp;
  return naive::dispatch_chunks(static_cast<int>(shape.head_dim), [&]<int kChunks>() {
    mha_delta_kernel<kChunks><<<blocks, kThreads, 0, stream>>>(shape, args);
    mha_dq_kernel<kChunks><<<blocks, kThreads, 0, stream>>>(shape, scale, args);
    mha_dkdv_kernel<kChunks><<<blocks, kThreads, 0, stream>>>(shape, scale, args);
    return cudaGetLastError();
  });
}

} // namespace ptxbench::reference
