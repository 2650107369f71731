// Expert candidate for mha_with_lse_d128 on sm_90a (H100/H200): FlashAttention-3-style forward.
//
// Problem: Q, K, V [B=4, H=48, S, D=128] bf16 row-major; O = softmax(Q K^T / sqrt(D)) V in bf16
// and LSE = natural-log logsumexp of the scaled logits in f32, per (b, h, query row). This file
// and mha_with_lse_d128_causal.cu are the same source except the kCausal line below (a CPU
// test checks it): in the causal variant query i attends keys j <= i.
//
// Approach (knowledge/patterns/fa3_forward.md, fa3_pingpong.md, warp_specialization.md):
// - One CTA of 3 warpgroups per (128-row Q tile, b*h). Warpgroup 0 is the producer
//   (setmaxnreg down to 24): one elected thread TMA-loads Q once and K_j, V_j through two
//   2-stage rings with full/empty mbarriers. Warpgroups 1 and 2 (setmaxnreg up to 240) each own
//   64 query rows.
// - Consumers: S = Q K_j^T with wgmma SS (m64n128k16, Q and K K-major, SW128), online softmax
//   in registers with exp2 and the scale folded into one FMA, P packed to bf16 in registers as
//   the A operand of O += P V_j (wgmma RS, V MN-major). S_j is issued together with P_{j-1} V_{j-1}
//   (intra-warpgroup overlap), and a named-barrier token alternates the two warpgroups' GEMM
//   issue (pingpong) so one warpgroup's softmax overlaps the other's tensor-core work.
// - Causal: Q tile m attends K tiles 0..m only; only the diagonal tile is masked. Any S works:
//   the 3-D tensor maps {D, S, B*H} zero-fill K/V rows past S (masked to -inf) and clip O rows.
// - Epilogue: O / l to bf16, stmatrix into the warpgroup's own (no longer needed) Q rows in the
//   SW128 layout, TMA store; LSE = max * scale + ln(l) written by one thread per row.
//
// Invariants: every SW128 tile starts on a 1024-B boundary; expect_tx is the full box bytes;
// a K/V stage is released (one arrival per consumer warp, 8 per phase) only after the wgmma
// that read it completed; the pingpong barriers see matching sync/arrive counts.
//
// PTX is reached only through the knowledge-pack wrappers (knowledge/sm90a, namespace sm90),
// the way a benchmarked model has to write it; the harness resolves the include.
#include "knowledge/sm90a/ptx.cuh"

#include <cstdint>
#include <cstdio>
#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

constexpr bool kCausal = true;

namespace sm90_fa3 {

using sm90::Bf16Tile;
using sm90::Major;
using sm90::ScaleD;
using sm90::Swizzle;

constexpr int kBatch = 4;
constexpr int kHeads = 48;
constexpr int kHeadDim = 128;
constexpr int kBlockM = 128; // query rows per CTA: two consumer warpgroups of 64 rows
constexpr int kBlockN = 128; // keys per K/V tile
constexpr int kStages = 2;   // K ring and V ring depth
constexpr int kThreads = 384;
constexpr int kProducerRegs = 24;
constexpr int kConsumerRegs = 240;

// log2(e) / sqrt(D): scores are kept raw, exponents are taken in base 2.
constexpr float kScale = 0.08838834764831845f; // 1 / sqrt(128)
constexpr float kScaleLog2 = kScale * 1.4426950408889634f;
constexpr float kNegInf = -__builtin_huge_valf();

// Shared memory: Q tile, K ring, V ring (each tile 128 rows x 128 bf16 as two SW128 boxes of
// 64 columns), then the mbarriers. The O tile of each warpgroup is staged in its own Q rows.
constexpr uint32_t kTileBytes = kBlockN * kHeadDim * 2;
constexpr uint32_t kBoxBytes = kTileBytes / 2;     // 128 rows x 64 columns
constexpr uint32_t kWarpgroupRowsBytes = 64 * 128; // 64 rows of one box
constexpr uint32_t kQOffset = 0;
constexpr uint32_t kKOffset = kQOffset + kTileBytes;
constexpr uint32_t kVOffset = kKOffset + kStages * kTileBytes;
constexpr uint32_t kBarOffset = kVOffset + kStages * kTileBytes;
constexpr uint32_t kNumBarriers = 1 + 4 * kStages; // full_q, full_k, empty_k, full_v, empty_v
constexpr uint32_t kSmemBytes = kBarOffset + 8 * kNumBarriers;
constexpr uint32_t kConsumerWarps = 8; // arrivals that free one K or V stage

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

static_assert(kBlockM == kBlockN, "causal: the diagonal tile is the last one of a Q tile");
static_assert(kHeadDim == 128 && kHeadDim * 2 == 2 * 128, "D = 2 boxes of one 128-B span");
static_assert(kTileBytes % 1024 == 0 && kBoxBytes % 1024 == 0 && kWarpgroupRowsBytes % 1024 == 0,
              "every SW128 tile and sub-tile starts on a 1024-B period");
static_assert(v_tile().lbo() == kBoxBytes, "V: the next 64-wide d block is the second box");
static_assert(kSmemBytes <= 232448, "sm_90 opt-in shared memory per block");
static_assert(kProducerRegs * 128 + 2 * kConsumerRegs * 128 <= 65536, "setmaxnreg budget");
static_assert(kThreads == 3 * 128, "one producer and two consumer warpgroups");

struct Coords {
  int m_block;  // Q tile index within the head
  int head;     // b * H + h
  int n_blocks; // K/V tiles this Q tile attends
  int seq_len;
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

// One 128-row tile of a [B*H, S, D] tensor as two 64-column SW128 boxes.
__device__ __forceinline__ void load_tile(const CUtensorMap* map, uint32_t dst, uint32_t bar,
                                          int row0, int head) {
  sm90::tma_load_3d(dst, map, bar, 0, row0, head);
  sm90::tma_load_3d(dst + kBoxBytes, map, bar, 64, row0, head);
}

// Tile j of K or V into its ring stage once both consumer warpgroups released the stage.
__device__ __forceinline__ void load_stage(const CUtensorMap* map, uint32_t ring, uint32_t full,
                                           uint32_t empty, int j, int head) {
  const uint32_t parity = (j / kStages) & 1;
  sm90::mbar_wait(empty, parity ^ 1);
  sm90::mbar_arrive_expect_tx(full, kTileBytes);
  load_tile(map, ring + (j % kStages) * kTileBytes, full, j * kBlockN, head);
}

// Producer (one thread): Q, K_0, then K_j before V_{j-1}, the order the consumers use them.
__device__ void produce(const CUtensorMap* map_q, const CUtensorMap* map_k,
                        const CUtensorMap* map_v, uint32_t base, const Coords& at) {
  sm90::mbar_arrive_expect_tx(full_q(base), kTileBytes);
  load_tile(map_q, base + kQOffset, full_q(base), at.m_block * kBlockM, at.head);
  for (int j = 0; j < at.n_blocks; ++j) {
    load_stage(map_k, base + kKOffset, full_k(base, j % kStages), empty_k(base, j % kStages), j,
               at.head);
    if (j > 0)
      load_stage(map_v, base + kVOffset, full_v(base, (j - 1) % kStages),
                 empty_v(base, (j - 1) % kStages), j - 1, at.head);
  }
  const int last = at.n_blocks - 1;
  load_stage(map_v, base + kVOffset, full_v(base, last % kStages), empty_v(base, last % kStages),
             last, at.head);
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

// Scores of keys the row may not see become -inf: keys past S, and (causal) keys after the
// query. `row` is the query of registers 4i, 4i+1 (row + 8 for 4i+2, 4i+3), `col` the key of 4i.
__device__ __forceinline__ void mask_scores(float (&s)[64], int row, int col, int seq_len,
                                            bool causal) {
#pragma unroll
  for (int i = 0; i < 16; ++i)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int key = col + 8 * i + (e & 1);
      const int query = row + (e >> 1) * 8;
      if (key >= seq_len || (causal && key > query))
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
// P = exp2((S - max) * scale * log2 e) in place, the correction factor of the old O and sum.
// The row sum stays a per-thread partial (one quarter of the row); the quad sums it at the end.
__device__ __forceinline__ void online_softmax(float (&s)[64], float (&row_max)[2],
                                               float (&row_sum)[2], float (&correction)[2]) {
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    float mx = row_max[r];
#pragma unroll
    for (int i = 0; i < 16; ++i)
      mx = fmaxf(mx, fmaxf(s[4 * i + 2 * r], s[4 * i + 2 * r + 1]));
    mx = quad_max(mx);
    const float shift = mx == kNegInf ? 0.0f : mx * kScaleLog2;
    correction[r] = sm90::exp2_approx_ftz(row_max[r] * kScaleLog2 - shift);
    row_max[r] = mx;
    float sum = 0.0f;
#pragma unroll
    for (int i = 0; i < 16; ++i) {
      s[4 * i + 2 * r] = sm90::exp2_approx_ftz(fmaf(s[4 * i + 2 * r], kScaleLog2, -shift));
      s[4 * i + 2 * r + 1] = sm90::exp2_approx_ftz(fmaf(s[4 * i + 2 * r + 1], kScaleLog2, -shift));
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

// Epilogue: O / l to bf16, stmatrix into this warpgroup's 64 Q rows of both boxes (the SW128
// layout the O map stores), TMA store (rows past S are clipped); LSE = max * scale + ln(l).
__device__ void store_outputs(float (&o)[64], const float (&row_max)[2], float (&row_sum)[2],
                              const CUtensorMap* map_o, float* lse, uint32_t base, int c,
                              const Coords& at) {
  const uint32_t t = sm90::thread_index_in_warpgroup();
  const uint32_t w = t / 32, lane = t % 32;
  const int row = at.m_block * kBlockM + 64 * c + 16 * static_cast<int>(w) + lane / 4;
  float inv[2];
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const float l = quad_sum(row_sum[r]);
    inv[r] = l > 0.0f ? 1.0f / l : 0.0f;
    const int q_row = row + 8 * r;
    if (lane % 4 == 0 && q_row < at.seq_len)
      lse[static_cast<int64_t>(at.head) * at.seq_len + q_row] =
          l > 0.0f ? row_max[r] * kScale + logf(l) : kNegInf;
  }
  rescale_o(o, inv);
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
    const int row0 = at.m_block * kBlockM + 64 * c;
    sm90::tma_store_3d(map_o, region, 0, row0, at.head);
    sm90::tma_store_3d(map_o, region + kBoxBytes, 64, row0, at.head);
    sm90::bulk_commit_group();
    sm90::bulk_wait_group<0>();
  }
}

// Consumer warpgroup c (rows 64c..64c+63 of the Q tile): the corrected FA3 loop with
// intra-warpgroup overlap (S_{j} = Q K_j^T runs while the previous P V is issued behind it) and
// pingpong with the other warpgroup (a named-barrier token orders whose GEMMs issue next, so one
// warpgroup's softmax overlaps the other's GEMMs). Rounds: S_0; (S_j, P_{j-1} V_{j-1}) for
// j = 1..n-1; P_{n-1} V_{n-1}. Token counts: each warpgroup syncs its barrier n + 1 times and
// arrives on the other's n + 1 times (warpgroup 1: one arrival up front, none after its last
// round), so no barrier is left with a partial count.
template <bool kIsCausal>
__device__ void consume(const CUtensorMap* map_o, float* lse, uint32_t base, int c,
                        const Coords& at) {
  const uint32_t t = sm90::thread_index_in_warpgroup();
  const int row = at.m_block * kBlockM + 64 * c + 16 * static_cast<int>(t / 32) + (t % 32) / 4;
  const int col = 2 * static_cast<int>(t % 4);
  const uint32_t q_addr = base + kQOffset + c * kWarpgroupRowsBytes;
  const uint32_t my_token = kSchedBarrier + c, other_token = kSchedBarrier + (1 - c);
  const int n = at.n_blocks;
  float s[64], o[64], row_max[2] = {kNegInf, kNegInf}, row_sum[2] = {0.0f, 0.0f}, corr[2];
  uint32_t p[32];

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
  if (kBlockN > at.seq_len || (kIsCausal && n == 1))
    mask_scores(s, row, col, at.seq_len, kIsCausal);
  online_softmax(s, row_max, row_sum, corr);
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
    if ((j + 1) * kBlockN > at.seq_len || (kIsCausal && j == n - 1))
      mask_scores(s, row, j * kBlockN + col, at.seq_len, kIsCausal);
    online_softmax(s, row_max, row_sum, corr);
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
  store_outputs(o, row_max, row_sum, map_o, lse, base, c, at);
}

} // namespace sm90_fa3

// One CTA per (128-row Q tile, batch x head). Causal grids run the longest Q tiles of a head
// first (blockIdx.x counts down the diagonal), which also leaves the short tiles for the tail.
template <bool kIsCausal>
__global__ void __launch_bounds__(sm90_fa3::kThreads, 1)
    sm90_fa3_forward_kernel(const __grid_constant__ CUtensorMap map_q,
                            const __grid_constant__ CUtensorMap map_k,
                            const __grid_constant__ CUtensorMap map_v,
                            const __grid_constant__ CUtensorMap map_o, float* lse, int seq_len) {
  using namespace sm90_fa3;
  extern __shared__ __align__(1024) uint8_t smem[];
  const uint32_t base = sm90::smem_u32(smem);
  Coords at;
  at.m_block =
      kIsCausal ? static_cast<int>(gridDim.x - 1 - blockIdx.x) : static_cast<int>(blockIdx.x);
  at.head = static_cast<int>(blockIdx.y);
  at.seq_len = seq_len;
  const int total_blocks = (seq_len + kBlockN - 1) / kBlockN;
  at.n_blocks = kIsCausal ? min(total_blocks, at.m_block + 1) : total_blocks;
  if (threadIdx.x == 0) {
    sm90::mbar_init(full_q(base), 1);
    for (int s = 0; s < kStages; ++s) {
      sm90::mbar_init(full_k(base, s), 1);
      sm90::mbar_init(empty_k(base, s), kConsumerWarps);
      sm90::mbar_init(full_v(base, s), 1);
      sm90::mbar_init(empty_v(base, s), kConsumerWarps);
    }
    sm90::fence_mbarrier_init_release_cluster();
  }
  __syncthreads();
  const uint32_t wg = sm90::warpgroup_index();
  if (wg == 0) {
    sm90::setmaxnreg_dec<kProducerRegs>();
    if (sm90::warp_index_in_warpgroup() == 0 && sm90::elect_one_sync())
      produce(&map_q, &map_k, &map_v, base, at);
  } else {
    sm90::setmaxnreg_inc<kConsumerRegs>();
    consume<kIsCausal>(&map_o, lse, base, static_cast<int>(wg) - 1, at);
  }
}

namespace {

// [B*H, S, D] bf16 viewed as 3-D {D, S, B*H}: rows past S of a head read as zero and are not
// written, so any S works.
bool make_bhsd_map(CUtensorMap* map, const void* base, int64_t seq_len, uint32_t box_rows) {
  using namespace sm90_fa3;
  const uint64_t dims[3] = {kHeadDim, static_cast<uint64_t>(seq_len), kBatch * kHeads};
  const uint64_t strides[2] = {kHeadDim * 2, static_cast<uint64_t>(seq_len) * kHeadDim * 2};
  const uint32_t box[3] = {64, box_rows, 1};
  return sm90::make_tensor_map_3d(map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, base, dims, strides, box,
                                  CU_TENSOR_MAP_SWIZZLE_128B) == CUDA_SUCCESS;
}

} // namespace

void run(const __nv_bfloat16* Q, const __nv_bfloat16* K, const __nv_bfloat16* V, __nv_bfloat16* O,
         float* LSE, int64_t S, cudaStream_t stream) {
  using namespace sm90_fa3;
  if (S <= 0)
    return;
  alignas(64) CUtensorMap map_q, map_k, map_v, map_o;
  if (!make_bhsd_map(&map_q, Q, S, kBlockM) || !make_bhsd_map(&map_k, K, S, kBlockN) ||
      !make_bhsd_map(&map_v, V, S, kBlockN) || !make_bhsd_map(&map_o, O, S, 64)) {
    std::fprintf(stderr, "mha_with_lse_d128: cuTensorMapEncodeTiled failed\n");
    return;
  }
  auto* kernel = &sm90_fa3_forward_kernel<kCausal>;
  cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes);
  const dim3 grid(static_cast<unsigned>((S + kBlockM - 1) / kBlockM), kBatch * kHeads);
  kernel<<<grid, kThreads, kSmemBytes, stream>>>(map_q, map_k, map_v, map_o, LSE,
                                                 static_cast<int>(S));
}
