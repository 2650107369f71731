// Plain shape records shared by the C++ references and the CUDA kernels (no suite headers, so
// nvcc never parses the trace schema).
#pragma once

#include <cstdint>

#ifdef __CUDACC__
#define PTXBENCH_SHAPE_FN __host__ __device__
#else
#define PTXBENCH_SHAPE_FN
#endif

namespace ptxbench::reference {

enum class MaskKind : std::uint8_t { none = 1, causal = 2 };

// C[M,N] = A[M,K] · B[N,K]ᵀ, all row-major bf16.
struct GemmShape {
  std::int64_t m = 0;
  std::int64_t n = 0;
  std::int64_t k = 0;
  friend bool operator==(const GemmShape&, const GemmShape&) = default;
};

// Q,K,V,O [B,H,S,D] contiguous bf16 (BHSD), LSE [B,H,S] f32, one S for queries and keys.
struct MhaShape {
  std::int64_t batch = 0;
  std::int64_t heads = 0;
  std::int64_t seq = 0;
  std::int64_t head_dim = 0;
  MaskKind mask = MaskKind::none;

  PTXBENCH_SHAPE_FN std::int64_t rows() const { return batch * heads * seq; }
  PTXBENCH_SHAPE_FN std::int64_t elements() const { return rows() * head_dim; }
};

enum class GqaLayout : std::uint8_t { ragged_prefill = 1, paged_prefill = 2, paged_decode = 3 };

// q [tokens,Hq,D]; K/V either ragged [kv_tokens,Hkv,D] or a page pool
// [num_pages,page_size,Hkv,D]; `sequences` = len_indptr - 1.
struct GqaShape {
  GqaLayout layout = GqaLayout::ragged_prefill;
  std::int64_t q_tokens = 0;
  std::int64_t qo_heads = 0;
  std::int64_t kv_heads = 0;
  std::int64_t head_dim = 0;
  std::int64_t sequences = 0;
  std::int64_t kv_rows = 0; // ragged: total_kv; paged: num_pages * page_size
  std::int64_t page_size = 1;
  std::int64_t page_indices = 0; // paged: num_kv_indices; ragged: 0
  bool causal = true;
};

// What a library GQA reference is planned for, like FlashInfer's plan(): the longest query
// and KV sequence of the index layout it will be called with (the graph's S_q and S_kv).
// Calls whose layout has a longer sequence are rejected on the device.
struct GqaPlan {
  std::int64_t max_q_len = 0;
  std::int64_t max_kv_len = 0;
};

} // namespace ptxbench::reference
