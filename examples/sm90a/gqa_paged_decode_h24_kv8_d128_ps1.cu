// Expert candidate for gqa_paged_decode_h24_kv8_d128_ps1 on sm_90a (H100/H200): the decode step
// of examples/sm90a/gqa_paged_prefill_causal_h24_kv8_d128_ps1.cu, one query token per sequence.
//
// Problem: sequences b = 0..batch_size-1; sequence b owns query token b of q [batch, 24, 128]
// bf16 and the key/value tokens whose pages are kv_indices[kv_indptr[b]..kv_indptr[b+1]] of
// k_cache, v_cache [num_pages, 1, 8, 128] bf16 (page size 1: a page is one token's 8 heads). qo
// head h reads kv head h / 3; no mask. Outputs: output [batch, 24, 128] bf16 and LSE [batch, 24]
// f32 in base 2 of the logits scaled by sm_scale. A sequence without keys writes zeros and LSE
// -inf.
//
// Approach: the prefill's FA3 pipeline cut down to one consumer warpgroup. One CTA per (sequence
// b, kv head g) (blockIdx.x = 8 b + g, so the 8 CTAs that read the same pages run side by side)
// of two warpgroups, a producer and a consumer:
// - Q by TMA: q viewed as a matrix {128 columns, 24 batch rows}, box {64, 64} (two boxes, SW128)
//   from row 24 b + 3 g: smem rows 0..2 are the group's qo heads 3g..3g+2; rows 3..63 are other
//   heads of this or later sequences, or TMA's zero fill past the last row. wgmma rows are
//   independent (row m of S, P and O depends only on row m of Q and P), so those rows are
//   padding: computed, never written.
// - K and V are gathered as in the prefill: a 3-D map {D, kv heads, pages} with box {64, 1, 1},
//   each key's two half-rows going to row * 128 B of the two boxes of its stage, where TMA's
//   128-B swizzle (a function of the shared address within its 1024-B period) puts them where a
//   128-row box would have. The decode has little else to do, so issuing the 512 TMAs of a K/V
//   tile pair is the producer's critical path (each per-lane TMA is an ELECT/R2UR loop round
//   in the uniform datapath): all four producer warps issue, warp w the rows 32 w + lane, and
//   each arrives on the full barrier (count 4) with its quarter of the tile's bytes before its
//   copies. A lane reads its row's page from kv_indices a tile ahead; keys past the sequence read
//   its last key's page (masked in S, P = 0 for V), so every row is loaded and the bytes always
//   add up to the full 32 KiB. Three stages per ring: the decode is memory bound, so up to
//   192 KiB of K/V stay in flight.
// - The consumer warpgroup runs S = Q K_j^T (wgmma SS), the online softmax in base 2 and
//   O += P V (wgmma RS, P from registers), with S_j issued before P_{j-1} V_{j-1} as in FA3. No
//   pingpong (one consumer warpgroup), so no named barriers. Only warp 0 holds the wanted rows
//   (rows 0..15, of which the quad of lanes 4r..4r+3 holds row r): it alone runs the softmax,
//   and only for its rows 0..7 (registers 4i, 4i+1); P of rows 8..63 stays 0. The other warps
//   only take part in the wgmmas and release the stages.
// - Epilogue from registers: warp 0's lanes 0..11 write rows 0..2 (the qo heads 3g + r) and the
//   quad leaders their LSE = max + log2(sum); the scores are scaled by sm_scale * log2 e before
//   the running max, so the max is already in base-2 units (and any sign of sm_scale works).
// - Registers: for a 256-thread kernel with setmaxnreg, ptxas sets the launch count to the
//   consumer's 240 (61,440 of the 64K), so setmaxnreg_inc<240> takes nothing from the pool and
//   cannot wait; the producer drops to 40 (its code after the dealloc uses R0..R12).
//
// Invariants: every SW128 tile starts on a 1024-B boundary (base rounded up at run time); each
// phase of a full barrier gets its kProducerWarps arrive_expect_tx (the Q barrier one), each
// before that warp's copies, and exactly the expected bytes; a K or V stage is released (one
// arrival per consumer warp, 4) only after the wgmma that read it completed; the stage parity of
// tile j is (j / kStages) & 1 on both sides (the producer waits on the empty barrier with the
// opposite parity, so its first pass does not block); both warpgroups reach their setmaxnreg
// before any exit, and a CTA without keys loads nothing and waits on nothing.
//
// PTX is reached only through the knowledge-pack wrappers (knowledge/sm90a, namespace sm90).
#include "knowledge/sm90a/ptx.cuh"

#include <cstdint>
#include <cstdio>
#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

namespace sm90_gqa_decode {

using sm90::Bf16Tile;
using sm90::Major;
using sm90::ScaleD;
using sm90::Swizzle;

constexpr int kQoHeads = 24;
constexpr int kKvHeads = 8;
constexpr int kGroup = kQoHeads / kKvHeads; // wanted rows of the 64-row Q tile
constexpr int kHeadDim = 128;
constexpr int kBlockM = 64;  // query rows of the one consumer warpgroup (kGroup of them real)
constexpr int kBlockN = 128; // keys per K/V tile
constexpr int kStages = 3;   // K ring and V ring depth
constexpr int kThreads = 256;
constexpr int kProducerRegs = 40;
constexpr int kConsumerRegs = 240;
constexpr float kLog2e = 1.4426950408889634f;
constexpr float kNegInf = -__builtin_huge_valf();

// Shared memory (from a 1024-B aligned base): Q tile (64 rows x 128 bf16 as two SW128 boxes of
// 64 columns), K ring, V ring (each tile 128 rows x 128 bf16, two boxes), the mbarriers.
constexpr uint32_t kQBytes = kBlockM * kHeadDim * 2;
constexpr uint32_t kQBoxBytes = kQBytes / 2; // 64 rows x 64 columns
constexpr uint32_t kTileBytes = kBlockN * kHeadDim * 2;
constexpr uint32_t kBoxBytes = kTileBytes / 2; // 128 rows x 64 columns
constexpr uint32_t kQOffset = 0;
constexpr uint32_t kKOffset = kQOffset + kQBytes;
constexpr uint32_t kVOffset = kKOffset + kStages * kTileBytes;
constexpr uint32_t kBarOffset = kVOffset + kStages * kTileBytes;
constexpr uint32_t kNumBarriers = 1 + 4 * kStages; // full_q, full_k, empty_k, full_v, empty_v
constexpr uint32_t kSmemBytes = kBarOffset + 8 * kNumBarriers + 1024; // + alignment slack
constexpr uint32_t kConsumerWarps = 4; // arrivals that free one K or V stage
constexpr uint32_t kProducerWarps = 4; // arrivals (a quarter of the bytes each) that fill one

// Operand layouts (contract.md section 2): Q and K K-major, V MN-major (d contiguous).
__host__ __device__ constexpr Bf16Tile q_tile() {
  return {Swizzle::k128B, Major::kK, kBlockM, kHeadDim};
}
__host__ __device__ constexpr Bf16Tile k_tile() {
  return {Swizzle::k128B, Major::kK, kBlockN, kHeadDim};
}
__host__ __device__ constexpr Bf16Tile v_tile() {
  return {Swizzle::k128B, Major::kMN, kHeadDim, kBlockN};
}

static_assert(kQoHeads % kKvHeads == 0, "whole groups");
static_assert(kGroup <= 8, "the wanted rows are rows 0..7 of warp 0 (registers 4i, 4i + 1)");
static_assert(kHeadDim == 128, "D = 2 boxes of one 128-B span");
static_assert(kQBytes % 1024 == 0 && kQBoxBytes % 1024 == 0 && kTileBytes % 1024 == 0 &&
                  kBoxBytes % 1024 == 0 && kKOffset % 1024 == 0 && kVOffset % 1024 == 0,
              "every SW128 tile and box starts on a 1024-B period");
static_assert(q_tile().offset(0, 64) == kQBoxBytes, "Q: columns 64.. are the second box");
static_assert(k_tile().offset(0, 64) == kBoxBytes, "K: columns 64.. are the second box");
static_assert(v_tile().lbo() == kBoxBytes, "V: the next 64-wide d block is the second box");
static_assert(kSmemBytes <= 232448, "sm_90 opt-in shared memory per block");
static_assert(kProducerRegs * 128 + kConsumerRegs * 128 <= 65536, "setmaxnreg budget");
static_assert(kThreads == 2 * 128, "one producer and one consumer warpgroup");
static_assert(kBlockN == 32 * kProducerWarps, "one K/V row per producer lane");

// One CTA's work.
struct Coords {
  int batch;            // sequence b
  int kv_head;          // g; the rows are qo heads kGroup * g + r
  const int32_t* pages; // the sequence's key pages: kv_indices + kv_indptr[b]
  int kv_len;
  int n_blocks; // K/V tiles: ceil(kv_len / kBlockN), 0 without keys
};

__device__ __forceinline__ uint32_t barrier_addr(uint32_t base, uint32_t index) {
  return base + kBarOffset + 8 * index;
}
__device__ __forceinline__ uint32_t full_q(uint32_t base) {
  return barrier_addr(base, 0);
}
__device__ __forceinline__ uint32_t full_k(uint32_t base, int s) {
  return barrier_addr(base, 1 + s);
}
__device__ __forceinline__ uint32_t empty_k(uint32_t base, int s) {
  return barrier_addr(base, 1 + kStages + s);
}
__device__ __forceinline__ uint32_t full_v(uint32_t base, int s) {
  return barrier_addr(base, 1 + 2 * kStages + s);
}
__device__ __forceinline__ uint32_t empty_v(uint32_t base, int s) {
  return barrier_addr(base, 1 + 3 * kStages + s);
}

// The page of this lane's row (warp w of the producer warpgroup, row 32 w + lane) of K/V tile j;
// a key past the sequence reads its last.
__device__ __forceinline__ int row_page(int j, int row, const Coords& at) {
  return at.pages[min(j * kBlockN + row, at.kv_len - 1)];
}

// This warp's rows of tile j of K or V into its ring stage once the consumer warps released the
// stage: lane 0 expects the warp's bytes (one of the kProducerWarps arrivals the full barrier
// counts), then every lane issues its row's two half-rows (see the top).
__device__ __forceinline__ void load_stage(const CUtensorMap* map, uint32_t ring, uint32_t full,
                                           uint32_t empty, int j, int row, int page,
                                           const Coords& at) {
  const uint32_t parity = (j / kStages) & 1;
  sm90::mbar_wait(empty, parity ^ 1);
  if (sm90::lane_id() == 0)
    sm90::mbar_arrive_expect_tx(full, kTileBytes / kProducerWarps);
  __syncwarp();
  const uint32_t dst = ring + (j % kStages) * kTileBytes + static_cast<uint32_t>(row) * 128;
  sm90::tma_load_3d(dst, map, full, 0, at.kv_head, page);
  sm90::tma_load_3d(dst + kBoxBytes, map, full, 64, at.kv_head, page);
}

// Producer warp w (all four warps of warpgroup 0): Q (warp 0, lane 0), then its rows of K_0,
// then of K_j before V_{j-1}, the order the consumers use them; tile j + 1's page is read
// while tile j's stages are waited for and filled.
__device__ void produce(const CUtensorMap* map_q, const CUtensorMap* map_k,
                        const CUtensorMap* map_v, uint32_t base, const Coords& at, int warp) {
  if (warp == 0 && sm90::lane_id() == 0) {
    const int row0 = at.batch * kQoHeads + at.kv_head * kGroup;
    sm90::mbar_arrive_expect_tx(full_q(base), kQBytes);
    sm90::tma_load_2d(base + kQOffset, map_q, full_q(base), 0, row0);
    sm90::tma_load_2d(base + kQOffset + kQBoxBytes, map_q, full_q(base), 64, row0);
  }
  const int row = 32 * warp + static_cast<int>(sm90::lane_id());
  int next = row_page(0, row, at), previous = 0;
  for (int j = 0; j < at.n_blocks; ++j) {
    const int current = next;
    if (j + 1 < at.n_blocks)
      next = row_page(j + 1, row, at);
    load_stage(map_k, base + kKOffset, full_k(base, j % kStages), empty_k(base, j % kStages), j,
               row, current, at);
    if (j > 0)
      load_stage(map_v, base + kVOffset, full_v(base, (j - 1) % kStages),
                 empty_v(base, (j - 1) % kStages), j - 1, row, previous, at);
    previous = current;
  }
  const int last = at.n_blocks - 1;
  load_stage(map_v, base + kVOffset, full_v(base, last % kStages), empty_v(base, last % kStages),
             last, row, previous, at);
}

__device__ __forceinline__ void wait_stage(uint32_t full, int j) {
  sm90::mbar_wait(full, (j / kStages) & 1);
}

// One arrival per consumer warp, after the wgmma that read the stage has completed.
__device__ __forceinline__ void release_stage(uint32_t empty) {
  if (sm90::lane_id() == 0)
    sm90::mbar_arrive(empty);
}

// S = Q K_j^T for the 64 rows (SS, both K-major).
__device__ __forceinline__ void gemm_qk(float (&s)[64], uint32_t q_addr, uint32_t k_addr) {
#pragma unroll
  for (uint32_t step = 0; step < kHeadDim / 16; ++step)
    sm90::wgmma_bf16_ss<kBlockN, Major::kK, Major::kK>(
        s, q_tile().desc(q_addr, step), k_tile().desc(k_addr, step),
        step == 0 ? ScaleD::kZero : ScaleD::kAccumulate);
}

// O += P V_j (RS: P is the register A operand; V is MN-major, d contiguous).
__device__ __forceinline__ void gemm_pv(float (&o)[64], const uint32_t (&p)[32], uint32_t v_addr,
                                        bool first) {
#pragma unroll
  for (uint32_t step = 0; step < kBlockN / 16; ++step) {
    const uint32_t a[4] = {p[4 * step], p[4 * step + 1], p[4 * step + 2], p[4 * step + 3]};
    sm90::wgmma_bf16_rs<kHeadDim, Major::kMN>(o, a, v_tile().desc(v_addr, step),
                                              first && step == 0 ? ScaleD::kZero
                                                                 : ScaleD::kAccumulate);
  }
}

__device__ __forceinline__ float quad_max(float x) {
  x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, 1));
  return fmaxf(x, __shfl_xor_sync(0xffffffffu, x, 2));
}

__device__ __forceinline__ float quad_sum(float x) {
  x += __shfl_xor_sync(0xffffffffu, x, 1);
  return x + __shfl_xor_sync(0xffffffffu, x, 2);
}

// Online softmax of the row of registers 4i, 4i + 1 (row lane / 4 of warp 0) over the S tile of
// keys tile0.. (this thread's: tile0 + col + 8i + e for register 4i + e), in place: the scores
// scaled to base-2 units, keys past the sequence -inf, the new running max, P = exp2(S - max), the
// running (per-thread partial) sum. Returns the correction factor of O. Registers 4i + 2, 4i + 3
// (rows 8..15) are padding and left alone.
__device__ __forceinline__ float online_softmax(float (&s)[64], float& row_max, float& row_sum,
                                                int tile0, int col, int kv_len, float scale_log2) {
  const bool partial = tile0 + kBlockN > kv_len; // the last tile, with keys past the sequence
  float mx = row_max;
#pragma unroll
  for (int i = 0; i < 16; ++i)
#pragma unroll
    for (int e = 0; e < 2; ++e) {
      float x = s[4 * i + e] * scale_log2;
      if (partial && tile0 + col + 8 * i + e >= kv_len)
        x = kNegInf;
      s[4 * i + e] = x;
      mx = fmaxf(mx, x);
    }
  mx = quad_max(mx);
  const float shift = mx == kNegInf ? 0.0f : mx;
  const float correction = sm90::exp2_approx_ftz(row_max - shift);
  row_max = mx;
  float sum = 0.0f;
#pragma unroll
  for (int i = 0; i < 16; ++i) {
    s[4 * i] = sm90::exp2_approx_ftz(s[4 * i] - shift);
    s[4 * i + 1] = sm90::exp2_approx_ftz(s[4 * i + 1] - shift);
    sum += s[4 * i] + s[4 * i + 1];
  }
  row_sum = row_sum * correction + sum;
  return correction;
}

// P's accumulator fragment, pairs packed to bf16, is the RS A fragment: k16 step t of P V uses
// p[4t..4t+3] = S registers 8t..8t+7. Odd p (registers 4i + 2, 4i + 3: rows 8..15) stay 0.
__device__ __forceinline__ void pack_p(const float (&s)[64], uint32_t (&p)[32]) {
#pragma unroll
  for (int i = 0; i < 16; ++i)
    p[2 * i] = sm90::pack_bf16x2(s[4 * i], s[4 * i + 1]);
}

__device__ __forceinline__ void rescale_o(float (&o)[64], float correction) {
#pragma unroll
  for (int i = 0; i < 16; ++i) {
    o[4 * i + 0] *= correction;
    o[4 * i + 1] *= correction;
  }
}

// Epilogue of warp 0: rows r = lane / 4 < kGroup are qo heads kGroup * g + r; lane 4r + c
// writes columns 8i + 2c, 8i + 2c + 1 (4 bytes each), lane 4r the LSE. Without keys, O = 0
// and the sum is 0: zeros and -inf. The whole warp runs the quad sums.
__device__ void store_outputs(const float (&o)[64], float row_max, float row_sum,
                              __nv_bfloat16* out, float* lse, const Coords& at) {
  const uint32_t lane = sm90::lane_id();
  const int r = static_cast<int>(lane / 4);
  const float l = quad_sum(row_sum);
  const float inv = l > 0.0f ? 1.0f / l : 0.0f;
  if (r >= kGroup)
    return;
  const int64_t row = static_cast<int64_t>(at.batch) * kQoHeads + at.kv_head * kGroup + r;
  __nv_bfloat16* dst = out + row * kHeadDim + 2 * static_cast<int>(lane % 4);
#pragma unroll
  for (int i = 0; i < 16; ++i)
    *reinterpret_cast<uint32_t*>(dst + 8 * i) =
        sm90::pack_bf16x2(o[4 * i] * inv, o[4 * i + 1] * inv);
  if (lane % 4 == 0)
    lse[row] = l > 0.0f ? row_max + log2f(l) : kNegInf;
}

// The consumer warpgroup: the FA3 loop with intra-warpgroup overlap (S_j = Q K_j^T runs while
// P_{j-1} V_{j-1} is issued behind it). Rounds: S_0; (S_j, P_{j-1} V_{j-1}) for j = 1..n-1;
// P_{n-1} V_{n-1}. Every warp executes every wgmma, wait and release; warp 0 alone (`owner`)
// runs the softmax, O's rescale and P's packing, for its rows 0..7. A CTA without keys
// (n = 0: the producer loaded nothing) writes zeros and LSE -inf.
__device__ void consume(__nv_bfloat16* out, float* lse, uint32_t base, const Coords& at,
                        float scale_log2) {
  const bool owner = sm90::warp_index_in_warpgroup() == 0;
  const int col = 2 * static_cast<int>(sm90::lane_id() % 4);
  const uint32_t q_addr = base + kQOffset;
  const int n = at.n_blocks;
  float s[64], o[64], row_max = kNegInf, row_sum = 0.0f;
  uint32_t p[32];
  if (n <= 0) {
    if (owner) {
#pragma unroll
      for (int i = 0; i < 64; ++i)
        o[i] = 0.0f;
      store_outputs(o, row_max, row_sum, out, lse, at);
    }
    return;
  }
#pragma unroll
  for (int i = 0; i < 32; ++i)
    p[i] = 0u; // rows 8..63 keep P = 0

  sm90::mbar_wait(full_q(base), 0);
  wait_stage(full_k(base, 0), 0);
  sm90::wgmma_fence();
  gemm_qk(s, q_addr, base + kKOffset);
  sm90::wgmma_commit_group();
  sm90::wgmma_wait_group<0>();
  sm90::wgmma_fence_operand(s);
  release_stage(empty_k(base, 0));
  if (owner) {
    online_softmax(s, row_max, row_sum, 0, col, at.kv_len, scale_log2);
    pack_p(s, p);
  }

  for (int j = 1; j < n; ++j) {
    const int ks = j % kStages, vs = (j - 1) % kStages;
    wait_stage(full_k(base, ks), j);
    wait_stage(full_v(base, vs), j - 1);
    sm90::wgmma_fence();
    gemm_qk(s, q_addr, base + kKOffset + ks * kTileBytes);
    sm90::wgmma_commit_group();
    gemm_pv(o, p, base + kVOffset + vs * kTileBytes, j == 1);
    sm90::wgmma_commit_group();
    sm90::wgmma_wait_group<1>();
    sm90::wgmma_fence_operand(s);
    release_stage(empty_k(base, ks));
    float correction = 1.0f;
    if (owner)
      correction = online_softmax(s, row_max, row_sum, j * kBlockN, col, at.kv_len, scale_log2);
    sm90::wgmma_wait_group<0>();
    sm90::wgmma_fence_operand(o);
    release_stage(empty_v(base, vs));
    if (owner) {
      rescale_o(o, correction);
      pack_p(s, p);
    }
  }

  const int vs = (n - 1) % kStages;
  wait_stage(full_v(base, vs), n - 1);
  sm90::wgmma_fence();
  gemm_pv(o, p, base + kVOffset + vs * kTileBytes, n == 1);
  sm90::wgmma_commit_group();
  sm90::wgmma_wait_group<0>();
  sm90::wgmma_fence_operand(o);
  release_stage(empty_v(base, vs));
  if (owner)
    store_outputs(o, row_max, row_sum, out, lse, at);
}

} // namespace sm90_gqa_decode

// blockIdx.x = kKvHeads * b + g: sequence b, kv head g.
__global__ void __launch_bounds__(sm90_gqa_decode::kThreads, 1)
    sm90_gqa_paged_decode_kernel(const __grid_constant__ CUtensorMap map_q,
                                 const __grid_constant__ CUtensorMap map_k,
                                 const __grid_constant__ CUtensorMap map_v,
                                 const int32_t* kv_indptr, const int32_t* kv_indices,
                                 __nv_bfloat16* out, float* lse, float scale_log2) {
  using namespace sm90_gqa_decode;
  extern __shared__ uint8_t smem_raw[];
  const uint32_t base = (sm90::smem_u32(smem_raw) + 1023u) & ~1023u;
  if (threadIdx.x == 0) {
    sm90::mbar_init(full_q(base), 1);
    for (int s = 0; s < kStages; ++s) {
      sm90::mbar_init(full_k(base, s), kProducerWarps);
      sm90::mbar_init(empty_k(base, s), kConsumerWarps);
      sm90::mbar_init(full_v(base, s), kProducerWarps);
      sm90::mbar_init(empty_v(base, s), kConsumerWarps);
    }
    sm90::fence_mbarrier_init_release_cluster();
  }
  __syncthreads();
  Coords at;
  at.batch = static_cast<int>(blockIdx.x) / kKvHeads;
  at.kv_head = static_cast<int>(blockIdx.x) % kKvHeads;
  const int first = kv_indptr[at.batch];
  at.pages = kv_indices + first;
  at.kv_len = kv_indptr[at.batch + 1] - first;
  at.n_blocks = at.kv_len > 0 ? (at.kv_len + kBlockN - 1) / kBlockN : 0;
  const uint32_t wg = sm90::warpgroup_index();
  if (wg == 0) {
    sm90::setmaxnreg_dec<kProducerRegs>();
    if (at.n_blocks > 0)
      produce(&map_q, &map_k, &map_v, base, at, static_cast<int>(sm90::warp_index_in_warpgroup()));
  } else {
    sm90::setmaxnreg_inc<kConsumerRegs>();
    consume(out, lse, base, at, scale_log2);
  }
}

namespace {

// [pages, 1, heads, 128] bf16 viewed as 3-D {128, heads, pages}, box {64, 1, 1}: one half-row.
bool make_cache_map(CUtensorMap* map, const void* base, int64_t pages) {
  using namespace sm90_gqa_decode;
  const uint64_t dims[3] = {kHeadDim, kKvHeads, static_cast<uint64_t>(pages > 0 ? pages : 1)};
  const uint64_t strides[2] = {kHeadDim * 2, kKvHeads * kHeadDim * 2};
  const uint32_t box[3] = {64, 1, 1};
  return sm90::make_tensor_map_3d(map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, base, dims, strides, box,
                                  CU_TENSOR_MAP_SWIZZLE_128B) == CUDA_SUCCESS;
}

} // namespace

void run(const __nv_bfloat16* q, const __nv_bfloat16* k_cache, const __nv_bfloat16* v_cache,
         const int32_t* kv_indptr, const int32_t* kv_indices, float sm_scale, __nv_bfloat16* output,
         float* lse, int64_t batch_size, int64_t num_pages, int64_t len_indptr,
         int64_t num_kv_indices, cudaStream_t stream) {
  using namespace sm90_gqa_decode;
  if (batch_size <= 0)
    return;
  if (len_indptr < batch_size + 1 || batch_size * kKvHeads > 0x7fffffff) {
    std::fprintf(stderr, "gqa_paged_decode: batch %lld with %lld indptr entries unsupported\n",
                 static_cast<long long>(batch_size), static_cast<long long>(len_indptr));
    return;
  }
  (void)num_kv_indices; // every index read is below kv_indptr[batch] == num_kv_indices
  alignas(64) CUtensorMap map_q, map_k, map_v;
  // q as a row-major matrix of batch * 24 rows (one per qo head) and 128 columns.
  if (sm90::make_tensor_map_2d(&map_q, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, q,
                               static_cast<uint64_t>(batch_size) * kQoHeads, kHeadDim, kHeadDim * 2,
                               kBlockM, 64, CU_TENSOR_MAP_SWIZZLE_128B) != CUDA_SUCCESS ||
      !make_cache_map(&map_k, k_cache, num_pages) || !make_cache_map(&map_v, v_cache, num_pages)) {
    std::fprintf(stderr, "gqa_paged_decode: cuTensorMapEncodeTiled failed\n");
    return;
  }
  auto* kernel = &sm90_gqa_paged_decode_kernel;
  cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes);
  const dim3 grid(static_cast<unsigned>(batch_size * kKvHeads));
  kernel<<<grid, kThreads, kSmemBytes, stream>>>(map_q, map_k, map_v, kv_indptr, kv_indices, output,
                                                 lse, sm_scale * kLog2e);
}
