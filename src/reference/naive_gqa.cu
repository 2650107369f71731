// Naive GQA attention in FlashInfer-Trace semantics (ragged prefill, paged prefill, paged
// decode):
//   q, output [tokens, Hq, D] bf16; lse [tokens, Hq] f32 in base 2 (ln Σ exp(s) / ln 2);
//   K/V ragged [kv_tokens, Hkv, D] (sequence b owns rows kv_indptr[b] .. kv_indptr[b+1]) or a
//   page pool [num_pages, 1, Hkv, D] (sequence b owns pages kv_indices[kv_indptr[b] ..
//   kv_indptr[b+1]], in order); queries of sequence b are qo_indptr[b] .. qo_indptr[b+1]
//   (decode: token b alone). kv_head = h / (Hq/Hkv). s = q·k·sm_scale in fp32.
//   Causal (prefill) is bottom-right aligned: query i of a sequence with n_q queries and n_kv
//   keys sees keys j < i + 1 + (n_kv − n_q). A query that sees no key (empty sequence, or a
//   mask that leaves nothing) keeps output 0 and lse −inf, as the reference initialises them.
// One warp per (token, q-head) (naive_attention_common.cuh); the sequence of a prefill token is
// found by binary search in qo_indptr.
#include "reference/naive_attention_common.cuh"
#include "reference/naive_kernels.hpp"

namespace ptxbench::reference {
namespace {

using naive::RowVec;
using bf16 = __nv_bfloat16;

constexpr float kLog2E = 1.4426950408889634f;

// The last b with indptr[b] <= token (skips empty sequences before the owner).
__device__ inline std::int64_t owning_sequence(const int* indptr, std::int64_t sequences,
                                               std::int64_t token) {
  std::int64_t low = 0;
  std::int64_t high = sequences; // invariant: indptr[low] <= token < indptr[high]
  while (high - low > 1) {
    const std::int64_t mid = (low + high) / 2;
    if (indptr[mid] <= token)
      low = mid;
    else
      high = mid;
  }
  return low;
}

struct QueryPlace {
  std::int64_t sequence;
  std::int64_t visible; // keys this query attends to (prefix of the sequence's keys)
};

__device__ inline QueryPlace place_query(const GqaShape& shape, const GqaArgs& args,
                                         std::int64_t token) {
  if (args.qo_indptr == nullptr) {
    const std::int64_t kv = args.kv_indptr[token + 1] - args.kv_indptr[token];
    return QueryPlace{token, kv};
  }
  const std::int64_t b = owning_sequence(args.qo_indptr, shape.sequences, token);
  const std::int64_t n_q = args.qo_indptr[b + 1] - args.qo_indptr[b];
  const std::int64_t n_kv = args.kv_indptr[b + 1] - args.kv_indptr[b];
  const std::int64_t i = token - args.qo_indptr[b];
  std::int64_t visible = shape.causal ? i + 1 + (n_kv - n_q) : n_kv;
  visible = visible < 0 ? 0 : (visible > n_kv ? n_kv : visible);
  return QueryPlace{b, visible};
}

template <int kChunks> __global__ void gqa_kernel(GqaShape shape, GqaArgs args) {
  const std::int64_t warp = naive::global_warp();
  if (warp >= shape.q_tokens * shape.qo_heads)
    return;
  const int dim = static_cast<int>(shape.head_dim);
  const std::int64_t token = warp / shape.qo_heads;
  const std::int64_t head = warp % shape.qo_heads;
  const std::int64_t kv_head = head / (shape.qo_heads / shape.kv_heads);
  const QueryPlace place = place_query(shape, args, token);
  const std::int64_t first = args.kv_indptr[place.sequence];
  const auto key_row = [&](std::int64_t j) {
    const std::int64_t row = args.kv_indices != nullptr ? args.kv_indices[first + j] : first + j;
    return (row * shape.kv_heads + kv_head) * dim;
  };
  RowVec<kChunks> q{}, acc{};
  q.load(static_cast<const bf16*>(args.q) + warp * dim, dim);
  const naive::OnlineSoftmax softmax =
      naive::attend_row(q, static_cast<const bf16*>(args.k), static_cast<const bf16*>(args.v),
                        place.visible, key_row, args.sm_scale, dim, acc);
  const bool empty = place.visible == 0;
  acc.store(static_cast<bf16*>(args.out) + warp * dim, dim, empty ? 0.0f : 1.0f / softmax.sum);
  if (naive::lane() == 0)
    args.lse[warp] = empty ? -INFINITY : softmax.lse_natural() * kLog2E;
}

} // namespace

cudaError_t launch_naive_gqa(const GqaShape& shape, const GqaArgs& args, cudaStream_t stream) {
  const unsigned blocks = naive::warp_blocks(shape.q_tokens * shape.qo_heads);
  constexpr unsigned kThreads = naive::kWarpsPerBlock * naive::kWarp;
  return naive::dispatch_chunks(static_cast<int>(shape.head_dim), [&]<int kChunks>() {
    gqa_kernel<kChunks><<<blocks, kThreads, 0, stream>>>(shape, args);
    return cudaGetLastError();
  });
}

} // namespace ptxbench::reference
