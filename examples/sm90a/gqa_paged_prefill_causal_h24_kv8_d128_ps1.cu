// Expert candidate for gqa_paged_prefill_causal_h24_kv8_d128_ps1 on sm_90a (H100/H200): the
// ragged GQA prefill of examples/sm90a/gqa_ragged_prefill_causal_h32_kv4_d128.cu with its keys
// and values gathered from a paged cache of one token per page.
//
// Problem: sequences b = 0..len_indptr-2; sequence b owns query tokens qo_indptr[b]..
// qo_indptr[b+1] of q, output [total_q, 24, 128] bf16, and the key/value tokens whose pages are
// kv_indices[kv_indptr[b]..kv_indptr[b+1]] of k_cache, v_cache [num_pages, 1, 8, 128] bf16 (page
// size 1: a page is one token's 8 heads). qo head h reads kv head h / 3. Causal aligned
// bottom-right: query i attends keys j <= i + kv_len - q_len. LSE [total_q, 24] f32 in base 2,
// the softmax scale is the call's sm_scale. A sequence without keys writes zeros and LSE -inf.
//
// Approach: the ragged expert's pipeline, work plan and epilogue unchanged (one CTA of 3
// warpgroups per (128-row Q tile, qo head); a producer warpgroup; two consumer warpgroups of 64
// rows each running the FA3 loop with intra-warpgroup overlap and pingpong; ranks over the
// tiles heaviest first, from qo_indptr on the device). What changes is the K/V producer:
// - Gather by TMA, one row at a time. A K or V tile is 128 keys whose pages are anywhere in the
//   cache, so the cache is a 3-D tensor map {D, kv heads, pages} with box {64, 1, 1}: one
//   128-B half-row per TMA, 256 TMAs per tile. The four producer warps issue them, thread t of
//   the warpgroup row t (each per-thread TMA is a loop over the warp's lanes in the SASS, so
//   four warps issue four times as fast as one); each lands at row * 128 B of its box, where
//   TMA's 128-B swizzle, a function of the destination's shared address within its 1024-B
//   period, puts it exactly where the 128-row box would have (every stage starts on a 1024-B
//   boundary). So the stages keep the layout the wgmma descriptors read.
// - The pages of tile j are read from kv_indices once, a tile ahead (issued before the
//   producer waits for the stage, so their latency hides behind it), and serve K_j and V_j.
// - Keys past the sequence's end read its last key's page: masked in S (key >= kv_len), their
//   P is exactly 0 for V, and unlike TMA's zero fill they never leave the cache.
// - expect_tx stays the full 32 KiB of the tile: thread 0 arrives with it, and every row is
//   issued (a row that lands before the arrival only takes the transaction count below zero
//   for a moment; the phase cannot complete before its one arrival).
//
// Invariants: every SW128 tile starts on a 1024-B boundary; a K/V stage is released (one arrival
// per consumer warp) only after the wgmma that read it completed; the pingpong barriers see
// matching sync/arrive counts; the producer's registers fit setmaxnreg's budget (read in the
// SASS after USETMAXREG.DEALLOC).
//
// PTX is reached only through the knowledge-pack wrappers (knowledge/sm90a, namespace sm90).
#include "knowledge/sm90a/ptx.cuh"

#include <cstdint>
#include <cstdio>
#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

namespace sm90_gqa_paged {

using sm90::Bf16Tile;
using sm90::Major;
using sm90::ScaleD;
using sm90::Swizzle;

constexpr int kQoHeads = 24;
constexpr int kKvHeads = 8;
constexpr int kGroup = kQoHeads / kKvHeads;
constexpr int kHeadDim = 128;
constexpr int kBlockM = 128; // query rows per CTA: two consumer warpgroups of 64 rows
constexpr int kBlockN = 128; // keys per K/V tile
constexpr int kStages = 2;   // K ring and V ring depth
constexpr int kThreads = 384;
constexpr int kProducerRegs = 24;
constexpr int kConsumerRegs = 240;
constexpr float kLog2e = 1.4426950408889634f;
constexpr float kNegInf = -__builtin_huge_valf();

// Shared memory: Q tile, K ring, V ring (each tile 128 rows x 128 bf16 as two SW128 boxes of
// 64 columns), the mbarriers, then the CTA's work (sequence, tile). The O tile of each
// warpgroup is staged in its own Q rows.
constexpr uint32_t kTileBytes = kBlockN * kHeadDim * 2;
constexpr uint32_t kBoxBytes = kTileBytes / 2;     // 128 rows x 64 columns
constexpr uint32_t kWarpgroupRowsBytes = 64 * 128; // 64 rows of one box
constexpr uint32_t kQOffset = 0;
constexpr uint32_t kKOffset = kQOffset + kTileBytes;
constexpr uint32_t kVOffset = kKOffset + kStages * kTileBytes;
constexpr uint32_t kBarOffset = kVOffset + kStages * kTileBytes;
constexpr uint32_t kNumBarriers = 1 + 4 * kStages; // full_q, full_k, empty_k, full_v, empty_v
constexpr uint32_t kWorkOffset = kBarOffset + 8 * kNumBarriers;
constexpr uint32_t kSmemBytes = kWorkOffset + 8;
constexpr uint32_t kConsumerWarps = 8; // arrivals that free one K or V stage
constexpr int kProducerThreads = 128;      // the producer warpgroup gathers K/V rows
constexpr int kRowsPerThread = kBlockN / kProducerThreads;

// Named barriers: 1, 2 = pingpong token of consumer warpgroup 0, 1; 3, 4 = their epilogues.
constexpr uint32_t kSchedBarrier = 1;
constexpr uint32_t kEpilogueBarrier = 3;

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
static_assert(kHeadDim == 128 && kHeadDim * 2 == 2 * 128, "D = 2 boxes of one 128-B span");
static_assert(kTileBytes % 1024 == 0 && kBoxBytes % 1024 == 0 && kWarpgroupRowsBytes % 1024 == 0,
              "every SW128 tile and sub-tile starts on a 1024-B period");
static_assert(v_tile().lbo() == kBoxBytes, "V: the next 64-wide d block is the second box");
static_assert(kSmemBytes <= 232448, "sm_90 opt-in shared memory per block");
static_assert(kProducerRegs * 128 + 2 * kConsumerRegs * 128 <= 65536, "setmaxnreg budget");
static_assert(kThreads == 3 * 128, "one producer and two consumer warpgroups");
static_assert(kBlockN % kProducerThreads == 0, "every producer thread gathers whole rows");

// One CTA's work. q0 is absolute (into the packed q and output); `row` arguments below are
// query indices within the sequence, key indices within the sequence.
struct Coords {
  int head;     // qo head
  int kv_head;  // head / kGroup
  const int32_t* pages; // the sequence's key pages: kv_indices + kv_indptr[b]
  int q0;       // the sequence's first query token
  int q_len, kv_len;
  int m_block;  // Q tile within the sequence
  int delta;    // kv_len - q_len: query i attends keys j <= i + delta
  int n_blocks; // K/V tiles this Q tile attends
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

// The work plan, computed by one warp from qo_indptr (batch sequences). tiles(b) = the Q tiles
// of sequence b; A(m) = sum over b of max(0, tiles(b) - m), so tile index m holds the ranks
// A(m + 1) .. A(m) - 1, in sequence order.
__device__ __forceinline__ int warp_sum(int x) {
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2)
    x += __shfl_xor_sync(0xffffffffu, x, offset);
  return x;
}

__device__ __forceinline__ int warp_max(int x) {
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2)
    x = max(x, __shfl_xor_sync(0xffffffffu, x, offset));
  return x;
}

__device__ __forceinline__ int q_tiles(const int32_t* qo_indptr, int b) {
  return (qo_indptr[b + 1] - qo_indptr[b] + kBlockM - 1) / kBlockM;
}

__device__ int tiles_from(const int32_t* qo_indptr, int batch, int m) {
  int sum = 0;
  for (int b = static_cast<int>(sm90::lane_id()); b < batch; b += 32)
    sum += max(0, q_tiles(qo_indptr, b) - m);
  return warp_sum(sum);
}

// (sequence, tile) of `rank`, or sequence -1 past the last tile. The whole warp calls it.
__device__ int2 find_work(const int32_t* qo_indptr, int batch, int rank) {
  int longest = 0;
  for (int b = static_cast<int>(sm90::lane_id()); b < batch; b += 32)
    longest = max(longest, q_tiles(qo_indptr, b));
  longest = warp_max(longest);
  if (rank >= tiles_from(qo_indptr, batch, 0))
    return make_int2(-1, 0);
  int lo = 0, hi = longest; // A(lo) > rank >= A(hi)
  while (hi - lo > 1) {
    const int mid = (lo + hi) / 2;
    if (tiles_from(qo_indptr, batch, mid) > rank)
      lo = mid;
    else
      hi = mid;
  }
  int index = rank - tiles_from(qo_indptr, batch, lo + 1); // among the sequences with tile lo
  for (int first = 0; first < batch; first += 32) {
    const int b = first + static_cast<int>(sm90::lane_id());
    const bool has = b < batch && q_tiles(qo_indptr, b) > lo;
    unsigned ballot = __ballot_sync(0xffffffffu, has);
    const int count = __popc(ballot);
    if (index < count) {
      for (int skip = 0; skip < index; ++skip)
        ballot &= ballot - 1; // drop the lowest set bit
      return make_int2(first + __ffs(ballot) - 1, lo);
    }
    index -= count;
  }
  return make_int2(-1, 0);
}

// One 128-row tile of the [tokens, heads, D] q (rows row0.. of head `head`) as two 64-column
// SW128 boxes.
__device__ __forceinline__ void load_tile(const CUtensorMap* map, uint32_t dst, uint32_t bar,
                                          int row0, int head) {
  sm90::tma_load_3d(dst, map, bar, 0, head, row0);
  sm90::tma_load_3d(dst + kBoxBytes, map, bar, 64, head, row0);
}

// This producer thread's pages of K/V tile j: rows t + 128 i; a key past the sequence reads
// its last key's.
struct TilePages {
  int page[kRowsPerThread];
};

__device__ __forceinline__ TilePages tile_pages(int j, const Coords& at) {
  TilePages out;
#pragma unroll
  for (int i = 0; i < kRowsPerThread; ++i) {
    const int key = j * kBlockN + static_cast<int>(sm90::thread_index_in_warpgroup()) +
                    kProducerThreads * i;
    out.page[i] = at.pages[min(key, at.kv_len - 1)];
  }
  return out;
}

// Tile j of K or V into its ring stage once both consumer warpgroups released the stage: the
// producer warpgroup, one TMA per half-row (see the top).
__device__ __forceinline__ void load_stage(const CUtensorMap* map, uint32_t ring, uint32_t full,
                                           uint32_t empty, int j, const Coords& at,
                                           const TilePages& pages) {
  const uint32_t parity = (j / kStages) & 1;
  sm90::mbar_wait(empty, parity ^ 1);
  if (sm90::thread_index_in_warpgroup() == 0)
    sm90::mbar_arrive_expect_tx(full, kTileBytes);
  const uint32_t stage = ring + (j % kStages) * kTileBytes;
#pragma unroll
  for (int i = 0; i < kRowsPerThread; ++i) {
    const uint32_t row =
        sm90::thread_index_in_warpgroup() + kProducerThreads * static_cast<uint32_t>(i);
    sm90::tma_load_3d(stage + row * 128, map, full, 0, at.kv_head, pages.page[i]);
    sm90::tma_load_3d(stage + kBoxBytes + row * 128, map, full, 64, at.kv_head, pages.page[i]);
  }
}

// Producer (the warpgroup): Q (thread 0), K_0, then K_j before V_{j-1}, the order the consumers
// use them; tile j + 1's pages are read while tile j's stages are waited for and filled.
__device__ void produce(const CUtensorMap* map_q, const CUtensorMap* map_k,
                        const CUtensorMap* map_v, uint32_t base, const Coords& at) {
  if (sm90::thread_index_in_warpgroup() == 0) {
    sm90::mbar_arrive_expect_tx(full_q(base), kTileBytes);
    load_tile(map_q, base + kQOffset, full_q(base), at.q0 + at.m_block * kBlockM, at.head);
  }
  TilePages next = tile_pages(0, at), previous{};
  for (int j = 0; j < at.n_blocks; ++j) {
    const TilePages current = next;
    if (j + 1 < at.n_blocks)
      next = tile_pages(j + 1, at);
    load_stage(map_k, base + kKOffset, full_k(base, j % kStages), empty_k(base, j % kStages), j,
               at, current);
    if (j > 0)
      load_stage(map_v, base + kVOffset, full_v(base, (j - 1) % kStages),
                 empty_v(base, (j - 1) % kStages), j - 1, at, previous);
    previous = current;
  }
  const int last = at.n_blocks - 1;
  load_stage(map_v, base + kVOffset, full_v(base, last % kStages), empty_v(base, last % kStages),
             last, at, previous);
}

__device__ __forceinline__ void wait_stage(uint32_t full, int j) {
  sm90::mbar_wait(full, (j / kStages) & 1);
}

// One arrival per consumer warp, after the wgmma that read the stage has completed.
__device__ __forceinline__ void release_stage(uint32_t empty) {
  if (sm90::lane_id() == 0)
    sm90::mbar_arrive(empty);
}

// S = Q K_j^T for the 64 rows of this warpgroup (SS, both K-major).
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

// Whether K/V tile j holds a key some row of this Q tile may not see: keys past the sequence
// (their rows repeat the last key's page) or, causally, after the tile's first query.
__device__ __forceinline__ bool needs_mask(int j, const Coords& at) {
  return (j + 1) * kBlockN > at.kv_len || j * kBlockN + kBlockN - 1 > at.m_block * kBlockM + at.delta;
}

// Scores of keys the row may not see become -inf. `row` is the query of registers 4i, 4i+1
// (row + 8 for 4i+2, 4i+3), `col` the key of 4i, both within the sequence.
__device__ __forceinline__ void mask_scores(float (&s)[64], int row, int col, const Coords& at) {
#pragma unroll
  for (int i = 0; i < 16; ++i)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int key = col + 8 * i + (e & 1);
      const int query = row + (e >> 1) * 8;
      if (key >= at.kv_len || key > query + at.delta)
        s[4 * i + e] = kNegInf;
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

// Online softmax over one S tile: new running max per row (r = 0: row g, r = 1: row g + 8),
// P = exp2((S - max) * sm_scale * log2 e) in place, the correction factor of the old O and sum.
// The row sum stays a per-thread partial (one quarter of the row); the quad sums it at the end.
__device__ __forceinline__ void online_softmax(float (&s)[64], float (&row_max)[2],
                                               float (&row_sum)[2], float (&correction)[2],
                                               float scale_log2) {
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    float mx = row_max[r];
#pragma unroll
    for (int i = 0; i < 16; ++i)
      mx = fmaxf(mx, fmaxf(s[4 * i + 2 * r], s[4 * i + 2 * r + 1]));
    mx = quad_max(mx);
    const float shift = mx == kNegInf ? 0.0f : mx * scale_log2;
    correction[r] = sm90::exp2_approx_ftz(row_max[r] * scale_log2 - shift);
    row_max[r] = mx;
    float sum = 0.0f;
#pragma unroll
    for (int i = 0; i < 16; ++i) {
      s[4 * i + 2 * r] = sm90::exp2_approx_ftz(fmaf(s[4 * i + 2 * r], scale_log2, -shift));
      s[4 * i + 2 * r + 1] = sm90::exp2_approx_ftz(fmaf(s[4 * i + 2 * r + 1], scale_log2, -shift));
      sum += s[4 * i + 2 * r] + s[4 * i + 2 * r + 1];
    }
    row_sum[r] = row_sum[r] * correction[r] + sum;
  }
}

// P's accumulator fragment, pairs packed to bf16, is the RS A fragment: k16 step t of P V uses
// p[4t..4t+3] = S registers 8t..8t+7.
__device__ __forceinline__ void pack_p(const float (&s)[64], uint32_t (&p)[32]) {
#pragma unroll
  for (int k = 0; k < 32; ++k)
    p[k] = sm90::pack_bf16x2(s[2 * k], s[2 * k + 1]);
}

__device__ __forceinline__ void rescale_o(float (&o)[64], const float (&correction)[2]) {
#pragma unroll
  for (int i = 0; i < 16; ++i) {
    o[4 * i + 0] *= correction[0];
    o[4 * i + 1] *= correction[0];
    o[4 * i + 2] *= correction[1];
    o[4 * i + 3] *= correction[1];
  }
}

// Epilogue: O / l to bf16 and LSE = max * sm_scale * log2 e + log2(l) (base 2). A warpgroup
// whose 64 rows lie inside the sequence stmatrixes them into its own Q rows of both boxes (the
// SW128 layout the O map stores) and TMA-stores them; one whose rows cross the sequence's end
// writes its valid rows from registers, 4 bytes per column pair.
__device__ void store_outputs(float (&o)[64], const float (&row_max)[2], float (&row_sum)[2],
                              const CUtensorMap* map_o, __nv_bfloat16* out, float* lse,
                              uint32_t base, int c, const Coords& at, float scale_log2) {
  const uint32_t t = sm90::thread_index_in_warpgroup();
  const uint32_t w = t / 32, lane = t % 32;
  const int first_row = at.m_block * kBlockM + 64 * c;
  const int row = first_row + 16 * static_cast<int>(w) + static_cast<int>(lane / 4);
  float inv[2];
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const float l = quad_sum(row_sum[r]);
    inv[r] = l > 0.0f ? 1.0f / l : 0.0f;
    const int q_row = row + 8 * r;
    if (lane % 4 == 0 && q_row < at.q_len)
      lse[static_cast<int64_t>(at.q0 + q_row) * kQoHeads + at.head] =
          l > 0.0f ? row_max[r] * scale_log2 + log2f(l) : kNegInf;
  }
  rescale_o(o, inv);
  if (first_row + 64 > at.q_len) {
    const int col = 2 * static_cast<int>(lane % 4);
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      const int q_row = row + 8 * r;
      if (q_row >= at.q_len)
        continue;
      __nv_bfloat16* dst =
          out + (static_cast<int64_t>(at.q0 + q_row) * kQoHeads + at.head) * kHeadDim + col;
#pragma unroll
      for (int i = 0; i < 16; ++i)
        *reinterpret_cast<uint32_t*>(dst + 8 * i) =
            sm90::pack_bf16x2(o[4 * i + 2 * r], o[4 * i + 2 * r + 1]);
    }
    return;
  }
  const uint32_t region = base + kQOffset + c * kWarpgroupRowsBytes;
  const uint32_t j = lane / 8;
  const uint32_t r_local = 16 * w + (j % 2) * 8 + lane % 8;
#pragma unroll
  for (uint32_t i = 0; i < kHeadDim / 8; i += 2) {
    const uint32_t r4[4] = {sm90::pack_bf16x2(o[4 * i], o[4 * i + 1]),
                            sm90::pack_bf16x2(o[4 * i + 2], o[4 * i + 3]),
                            sm90::pack_bf16x2(o[4 * i + 4], o[4 * i + 5]),
                            sm90::pack_bf16x2(o[4 * i + 6], o[4 * i + 7])};
    const uint32_t col = 8 * (i + j / 2);
    const uint32_t box = col / 64;
    const uint32_t offset = sm90::swizzle_offset(Swizzle::k128B, r_local * 128 + (col % 64) * 2);
    sm90::stmatrix_x4(region + box * kBoxBytes + offset, r4);
  }
  sm90::fence_proxy_async_shared_cta();
  sm90::named_barrier_sync(kEpilogueBarrier + c, 128);
  if (t == 0) {
    sm90::tma_store_3d(map_o, region, 0, at.head, at.q0 + first_row);
    sm90::tma_store_3d(map_o, region + kBoxBytes, 64, at.head, at.q0 + first_row);
    sm90::bulk_commit_group();
    sm90::bulk_wait_group<0>();
  }
}

// Consumer warpgroup c (rows 64c..64c+63 of the Q tile): the MHA forward's FA3 loop with
// intra-warpgroup overlap (S_j = Q K_j^T runs while the previous P V is issued behind it) and
// pingpong with the other warpgroup. Rounds: S_0; (S_j, P_{j-1} V_{j-1}) for j = 1..n-1;
// P_{n-1} V_{n-1}. Token counts: each warpgroup syncs its barrier n + 1 times and arrives on
// the other's n + 1 times (warpgroup 1: one arrival up front, none after its last round). A
// tile that sees no key (an empty key sequence) writes zeros and LSE -inf.
__device__ void consume(const CUtensorMap* map_o, __nv_bfloat16* out, float* lse, uint32_t base,
                        int c, const Coords& at, float scale_log2) {
  const uint32_t t = sm90::thread_index_in_warpgroup();
  const int row = at.m_block * kBlockM + 64 * c + 16 * static_cast<int>(t / 32) + (t % 32) / 4;
  const int col = 2 * static_cast<int>(t % 4);
  const uint32_t q_addr = base + kQOffset + c * kWarpgroupRowsBytes;
  const uint32_t my_token = kSchedBarrier + c, other_token = kSchedBarrier + (1 - c);
  const int n = at.n_blocks;
  float s[64], o[64], row_max[2] = {kNegInf, kNegInf}, row_sum[2] = {0.0f, 0.0f}, corr[2];
  uint32_t p[32];
  if (n <= 0) {
#pragma unroll
    for (int i = 0; i < 64; ++i)
      o[i] = 0.0f;
    store_outputs(o, row_max, row_sum, map_o, out, lse, base, c, at, scale_log2);
    return;
  }

  if (c == 1)
    sm90::named_barrier_arrive(other_token, 256);
  sm90::mbar_wait(full_q(base), 0);
  wait_stage(full_k(base, 0), 0);
  sm90::named_barrier_sync(my_token, 256);
  sm90::wgmma_fence();
  gemm_qk(s, q_addr, base + kKOffset);
  sm90::wgmma_commit_group();
  sm90::named_barrier_arrive(other_token, 256);
  sm90::wgmma_wait_group<0>();
  sm90::wgmma_fence_operand(s);
  release_stage(empty_k(base, 0));
  if (needs_mask(0, at))
    mask_scores(s, row, col, at);
  online_softmax(s, row_max, row_sum, corr, scale_log2);
  pack_p(s, p);

  for (int j = 1; j < n; ++j) {
    const int ks = j % kStages, vs = (j - 1) % kStages;
    wait_stage(full_k(base, ks), j);
    wait_stage(full_v(base, vs), j - 1);
    sm90::named_barrier_sync(my_token, 256);
    sm90::wgmma_fence();
    gemm_qk(s, q_addr, base + kKOffset + ks * kTileBytes);
    sm90::wgmma_commit_group();
    gemm_pv(o, p, base + kVOffset + vs * kTileBytes, j == 1);
    sm90::wgmma_commit_group();
    sm90::named_barrier_arrive(other_token, 256);
    sm90::wgmma_wait_group<1>();
    sm90::wgmma_fence_operand(s);
    release_stage(empty_k(base, ks));
    if (needs_mask(j, at))
      mask_scores(s, row, j * kBlockN + col, at);
    online_softmax(s, row_max, row_sum, corr, scale_log2);
    sm90::wgmma_wait_group<0>();
    sm90::wgmma_fence_operand(o);
    release_stage(empty_v(base, vs));
    rescale_o(o, corr);
    pack_p(s, p);
  }

  const int vs = (n - 1) % kStages;
  wait_stage(full_v(base, vs), n - 1);
  sm90::named_barrier_sync(my_token, 256);
  sm90::wgmma_fence();
  gemm_pv(o, p, base + kVOffset + vs * kTileBytes, n == 1);
  sm90::wgmma_commit_group();
  if (c == 0)
    sm90::named_barrier_arrive(other_token, 256);
  sm90::wgmma_wait_group<0>();
  sm90::wgmma_fence_operand(o);
  release_stage(empty_v(base, vs));
  store_outputs(o, row_max, row_sum, map_o, out, lse, base, c, at, scale_log2);
}

} // namespace sm90_gqa_paged

// grid.x: qo head; grid.y: rank of the (sequence, Q tile), heaviest tiles first (find_work).
__global__ void __launch_bounds__(sm90_gqa_paged::kThreads, 1)
    sm90_gqa_paged_prefill_kernel(const __grid_constant__ CUtensorMap map_q,
                                  const __grid_constant__ CUtensorMap map_k,
                                  const __grid_constant__ CUtensorMap map_v,
                                  const __grid_constant__ CUtensorMap map_o,
                                  const int32_t* qo_indptr, const int32_t* kv_indptr,
                                  const int32_t* kv_indices, int batch, __nv_bfloat16* out,
                                  float* lse, float scale_log2) {
  using namespace sm90_gqa_paged;
  extern __shared__ __align__(1024) uint8_t smem[];
  const uint32_t base = sm90::smem_u32(smem);
  int* work = reinterpret_cast<int*>(smem + kWorkOffset);
  if (threadIdx.x < 32) {
    const int2 found = find_work(qo_indptr, batch, static_cast<int>(blockIdx.y));
    if (threadIdx.x == 0) {
      work[0] = found.x;
      work[1] = found.y;
      sm90::mbar_init(full_q(base), 1);
      for (int s = 0; s < kStages; ++s) {
        sm90::mbar_init(full_k(base, s), 1);
        sm90::mbar_init(empty_k(base, s), kConsumerWarps);
        sm90::mbar_init(full_v(base, s), 1);
        sm90::mbar_init(empty_v(base, s), kConsumerWarps);
      }
      sm90::fence_mbarrier_init_release_cluster();
    }
  }
  __syncthreads();
  const int b = work[0];
  if (b < 0)
    return; // a rank past the last tile
  Coords at;
  at.head = static_cast<int>(blockIdx.x);
  at.kv_head = at.head / kGroup;
  at.q0 = qo_indptr[b];
  at.q_len = qo_indptr[b + 1] - at.q0;
  at.pages = kv_indices + kv_indptr[b];
  at.kv_len = kv_indptr[b + 1] - kv_indptr[b];
  at.m_block = work[1];
  at.delta = at.kv_len - at.q_len;
  // Keys 0 .. visible - 1 are visible to the tile's last query row.
  const int visible = min(at.q_len, (at.m_block + 1) * kBlockM) + at.delta;
  at.n_blocks = visible > 0 ? min((at.kv_len + kBlockN - 1) / kBlockN, (visible + kBlockN - 1) / kBlockN)
                            : 0;
  const uint32_t wg = sm90::warpgroup_index();
  if (wg == 0) {
    sm90::setmaxnreg_dec<kProducerRegs>();
    if (at.n_blocks > 0)
      produce(&map_q, &map_k, &map_v, base, at);
  } else {
    sm90::setmaxnreg_inc<kConsumerRegs>();
    consume(&map_o, out, lse, base, static_cast<int>(wg) - 1, at, scale_log2);
  }
}

namespace {

// [tokens, heads, 128] bf16 viewed as 3-D {128, heads, tokens}, box {64, 1, rows}: rows past the
// last token read as zero and are not written. The page-size-1 caches [pages, 1, heads, 128]
// are the same tensor with pages for tokens, gathered with box rows 1.
bool make_nhd_map(CUtensorMap* map, const void* base, int64_t tokens, uint64_t heads,
                  uint32_t box_rows) {
  using namespace sm90_gqa_paged;
  const uint64_t dims[3] = {kHeadDim, heads, static_cast<uint64_t>(tokens > 0 ? tokens : 1)};
  const uint64_t strides[2] = {kHeadDim * 2, heads * kHeadDim * 2};
  const uint32_t box[3] = {64, 1, box_rows};
  return sm90::make_tensor_map_3d(map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, base, dims, strides, box,
                                  CU_TENSOR_MAP_SWIZZLE_128B) == CUDA_SUCCESS;
}

} // namespace

void run(const __nv_bfloat16* q, const __nv_bfloat16* k_cache, const __nv_bfloat16* v_cache,
         const int32_t* qo_indptr, const int32_t* kv_indptr, const int32_t* kv_indices,
         float sm_scale, __nv_bfloat16* output, float* lse, int64_t total_q, int64_t num_pages,
         int64_t len_indptr, int64_t num_kv_indices, cudaStream_t stream) {
  using namespace sm90_gqa_paged;
  const int64_t batch = len_indptr - 1;
  if (batch <= 0 || total_q <= 0)
    return;
  // Sum of ceil(q_len / 128) <= total_q / 128 + batch: ranks past the plan's tiles exit at once.
  const int64_t ranks = (total_q + kBlockM - 1) / kBlockM + batch;
  if (ranks > 65535) {
    std::fprintf(stderr, "gqa_paged_prefill: %lld Q tiles exceed grid.y\n",
                 static_cast<long long>(ranks));
    return;
  }
  (void)num_kv_indices; // every index read is below kv_indptr[batch] == num_kv_indices
  alignas(64) CUtensorMap map_q, map_k, map_v, map_o;
  if (!make_nhd_map(&map_q, q, total_q, kQoHeads, kBlockM) ||
      !make_nhd_map(&map_k, k_cache, num_pages, kKvHeads, 1) ||
      !make_nhd_map(&map_v, v_cache, num_pages, kKvHeads, 1) ||
      !make_nhd_map(&map_o, output, total_q, kQoHeads, 64)) {
    std::fprintf(stderr, "gqa_paged_prefill: cuTensorMapEncodeTiled failed\n");
    return;
  }
  auto* kernel = &sm90_gqa_paged_prefill_kernel;
  cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes);
  const dim3 grid(kQoHeads, static_cast<unsigned>(ranks));
  kernel<<<grid, kThreads, kSmemBytes, stream>>>(map_q, map_k, map_v, map_o, qo_indptr, kv_indptr,
                                                 kv_indices, static_cast<int>(batch), output, lse,
                                                 sm_scale * kLog2e);
}
