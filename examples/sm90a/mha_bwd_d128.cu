// Expert candidate for mha_bwd_d128 on sm_90a (H100/H200): FlashAttention-3-style backward.
//
// Problem: Q, K, V, O, dO [B=4, H=48, S, D=128] bf16 and L [B, H, S] f32 (natural-log LSE of the
// scaled logits) -> dQ, dK, dV bf16. With scale = 1/sqrt(D), P = exp(scale Q K^T - L),
// Delta = rowsum(dO o O): dV = P^T dO, dP = dO V^T, dS = P o (dP - Delta), dQ = scale dS K,
// dK = scale dS^T Q. This file and mha_bwd_d128_causal.cu are the same source except the kCausal
// line below (a CPU test checks it); causal masks key > query.
//
// Approach (knowledge/patterns/fa3_backward.md, atomic dQ variant), three kernels and a memset:
// 1. Delta = rowsum(dO o O) in f32 (one warp per row); dQacc (f32, [B*H*S, D]) zeroed.
// 2. One CTA of 3 warpgroups per (128-key block j, b*h). Warpgroup 0 (setmaxnreg 24) TMA-loads
//    K_j, V_j once, then Q_i, dO_i (64 queries) with L_i, Delta_i (bulk copies) through a
//    2-stage ring. Consumer warpgroup c (setmaxnreg 240) owns keys 64c..64c+63 and keeps
//    dK_c, dV_c (64 x 128 f32 each) in registers. Per query block i:
//      S^T = K_c Q_i^T, dP^T = V_c dO_i^T          wgmma SS m64n64 (keys x queries)
//      P^T = exp2(S^T scale log2e - L log2e), dS^T = P^T o (dP^T - Delta)   in registers
//      dV_c += P^T dO_i, dK_c += dS^T Q_i           wgmma RS m64n128 (P^T, dS^T as bf16 A
//                                                   fragments; Q_i, dO_i MN-major B)
//      dS^T -> smem (stmatrix, double-buffered), both warpgroups meet on a named barrier, then
//      dQ_i[:, 64c..] = dS K_j[:, 64c..]            wgmma SS m64n64, A = dS MN-major from smem
//      -> f32 staging (SW128) -> TMA reduce-add into dQacc.
//    Causal: key block j visits query blocks i >= 2j only; only the two diagonal blocks mask.
// 3. dQ = bf16(scale * dQacc).
//
// Invariants: SW128 tiles on 1024-B boundaries; full[s] expects Q + dO box bytes + 2 x 256 B;
// a ring stage is released after the wgmmas that read Q_i / dO_i completed (8 warp arrivals);
// a dS^T buffer is rewritten two iterations later, after both warpgroups passed the barrier
// that follows their dQ GEMM of its previous use; a staging buffer is rewritten only after the
// reduce that read it (bulk_wait_group_read). S must be a multiple of 128 (the 2-D f32 reduce
// map would otherwise cross heads); other S are rejected with a message.
//
// PTX is reached only through the knowledge-pack wrappers (knowledge/sm90a, namespace sm90).
#include "knowledge/sm90a/ptx.cuh"

#include <cstdint>
#include <cstdio>
#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

constexpr bool kCausal = false;

namespace sm90_fa3_bwd {

using sm90::Bf16Tile;
using sm90::Major;
using sm90::ScaleD;
using sm90::Swizzle;

constexpr int kBatch = 4;
constexpr int kHeads = 48;
constexpr int kHeadDim = 128;
constexpr int kBlockM = 64;  // queries per iteration
constexpr int kBlockN = 128; // keys per CTA: two consumer warpgroups of 64
constexpr int kStages = 2;
constexpr int kThreads = 384;
constexpr int kProducerRegs = 24;
constexpr int kConsumerRegs = 240;
constexpr uint32_t kConsumerWarps = 8;

constexpr float kScale = 0.08838834764831845f; // 1 / sqrt(128)
constexpr float kLog2e = 1.4426950408889634f;
constexpr float kScaleLog2 = kScale * kLog2e;

// Shared memory. K_j and V_j: 128 keys x 128 d, two SW128 boxes of 64 d (16 KB each). A ring
// stage: Q_i and dO_i (64 queries x 128 d, two 8 KB boxes each), then L_i and Delta_i (64 f32
// each). dS^T: two buffers of 128 keys x 64 queries bf16 (one SW128 span per key). dQ staging:
// per consumer warpgroup 64 queries x 64 d f32 as two SW128 boxes of 32 floats.
constexpr uint32_t kKvBytes = kBlockN * kHeadDim * 2;
constexpr uint32_t kKvBoxBytes = kKvBytes / 2;
constexpr uint32_t kQBytes = kBlockM * kHeadDim * 2;
constexpr uint32_t kQBoxBytes = kQBytes / 2;
constexpr uint32_t kRowStatBytes = kBlockM * 4;
constexpr uint32_t kStageBytes = 2 * kQBytes + 1024; // Q, dO, L, Delta; 1024-B aligned
constexpr uint32_t kDsBytes = kBlockN * kBlockM * 2;
constexpr uint32_t kDqBoxBytes = kBlockM * 32 * 4;
constexpr uint32_t kDqStageBytes = 2 * kDqBoxBytes;
constexpr uint32_t kKOffset = 0;
constexpr uint32_t kVOffset = kKOffset + kKvBytes;
constexpr uint32_t kStageOffset = kVOffset + kKvBytes;
constexpr uint32_t kDsOffset = kStageOffset + kStages * kStageBytes;
constexpr uint32_t kDqOffset = kDsOffset + 2 * kDsBytes;
constexpr uint32_t kBarOffset = kDqOffset + 2 * kDqStageBytes;
constexpr uint32_t kNumBarriers = 1 + 2 * kStages; // full_kv, full[s], empty[s]
constexpr uint32_t kSmemBytes = kBarOffset + 8 * kNumBarriers;

// Named barriers: 1 = dS^T exchange between the consumer warpgroups, 2 + c = warpgroup c's
// dQ staging.
constexpr uint32_t kDsBarrier = 1;
constexpr uint32_t kDqBarrier = 2;

// Operand layouts (contract.md section 2).
__host__ __device__ constexpr Bf16Tile kv_kmajor() { // A of S^T, dP^T: keys x d
  return {Swizzle::k128B, Major::kK, kBlockN, kHeadDim};
}
__host__ __device__ constexpr Bf16Tile q_kmajor() { // B of S^T, dP^T: queries x d
  return {Swizzle::k128B, Major::kK, kBlockM, kHeadDim};
}
__host__ __device__ constexpr Bf16Tile q_mnmajor() { // B of dV, dK: N = d, K = queries
  return {Swizzle::k128B, Major::kMN, kHeadDim, kBlockM};
}
__host__ __device__ constexpr Bf16Tile ds_mnmajor() { // A of dQ: M = queries, K = keys
  return {Swizzle::k128B, Major::kMN, kBlockM, kBlockN};
}
__host__ __device__ constexpr Bf16Tile k_mnmajor() { // B of dQ: N = 64 d of one box, K = keys
  return {Swizzle::k128B, Major::kMN, 64, kBlockN};
}

static_assert(q_kmajor().k_step_offset(4) == kQBoxBytes, "Q: d 64..127 is the second box");
static_assert(q_mnmajor().lbo() == kQBoxBytes, "dO as MN-major B: next 64 d = second box");
static_assert(ds_mnmajor().offset(0, 8) == 8 * 128, "dS^T: one 128-B row per key");
static_assert(k_mnmajor().offset(0, 8) == 8 * 128, "K as MN-major B: one 128-B row per key");
static_assert(kStageBytes % 1024 == 0 && kDsBytes % 1024 == 0 && kDqBoxBytes % 1024 == 0 &&
                  kKvBoxBytes % 1024 == 0 && kQBoxBytes % 1024 == 0,
              "every SW128 tile starts on a 1024-B period");
static_assert(2 * kQBytes + 2 * kRowStatBytes <= kStageBytes, "stage holds Q, dO, L, Delta");
static_assert(kSmemBytes <= 232448, "sm_90 opt-in shared memory per block");
static_assert(kProducerRegs * 128 + 2 * kConsumerRegs * 128 <= 65536, "setmaxnreg budget");
static_assert(kBlockN == 2 * kBlockM, "causal: key block j starts at query block 2j");

struct Coords {
  int key_block;
  int head;
  int first_query_block;
  int query_blocks; // iterations
  int seq_len;
};

__device__ __forceinline__ uint32_t full_kv(uint32_t base) {
  return base + kBarOffset;
}
__device__ __forceinline__ uint32_t full_stage(uint32_t base, int s) {
  return base + kBarOffset + 8 * (1 + s);
}
__device__ __forceinline__ uint32_t empty_stage(uint32_t base, int s) {
  return base + kBarOffset + 8 * (1 + kStages + s);
}
__device__ __forceinline__ uint32_t stage_addr(uint32_t base, int s) {
  return base + kStageOffset + s * kStageBytes;
}

// Producer (one thread): K_j, V_j once; then Q_i, dO_i, L_i, Delta_i per query block.
__device__ void produce(const CUtensorMap* map_q, const CUtensorMap* map_k,
                        const CUtensorMap* map_v, const CUtensorMap* map_do, const float* lse,
                        const float* delta, uint32_t base, const Coords& at) {
  const int key0 = at.key_block * kBlockN;
  sm90::mbar_arrive_expect_tx(full_kv(base), 2 * kKvBytes);
  for (int box = 0; box < 2; ++box) {
    sm90::tma_load_3d(base + kKOffset + box * kKvBoxBytes, map_k, full_kv(base), 64 * box, key0,
                      at.head);
    sm90::tma_load_3d(base + kVOffset + box * kKvBoxBytes, map_v, full_kv(base), 64 * box, key0,
                      at.head);
  }
  for (int it = 0; it < at.query_blocks; ++it) {
    const int s = it % kStages;
    const int query0 = (at.first_query_block + it) * kBlockM;
    const uint32_t full = full_stage(base, s), dst = stage_addr(base, s);
    sm90::mbar_wait(empty_stage(base, s), ((it / kStages) & 1) ^ 1);
    sm90::mbar_arrive_expect_tx(full, 2 * kQBytes + 2 * kRowStatBytes);
    for (int box = 0; box < 2; ++box) {
      sm90::tma_load_3d(dst + box * kQBoxBytes, map_q, full, 64 * box, query0, at.head);
      sm90::tma_load_3d(dst + kQBytes + box * kQBoxBytes, map_do, full, 64 * box, query0, at.head);
    }
    const int64_t row = static_cast<int64_t>(at.head) * at.seq_len + query0;
    sm90::bulk_copy_g2s(dst + 2 * kQBytes, lse + row, kRowStatBytes, full);
    sm90::bulk_copy_g2s(dst + 2 * kQBytes + kRowStatBytes, delta + row, kRowStatBytes, full);
  }
}

// D(64 x 64) = A B^T over d = 128 (SS, both K-major): S^T (A = K_c) or dP^T (A = V_c).
__device__ __forceinline__ void gemm_keys_x_queries(float (&d)[32], uint32_t a_addr,
                                                    uint32_t b_addr) {
#pragma unroll
  for (uint32_t step = 0; step < kHeadDim / 16; ++step)
    sm90::wgmma_bf16_ss<kBlockM, Major::kK, Major::kK>(
        d, kv_kmajor().desc(a_addr, step), q_kmajor().desc(b_addr, step),
        step == 0 ? ScaleD::kZero : ScaleD::kAccumulate);
}

// acc(64 keys x 128 d) += A(64 keys x 64 queries, registers) B(64 queries x 128 d, MN-major).
__device__ __forceinline__ void gemm_keys_x_d(float (&acc)[64], const uint32_t (&a)[16],
                                              uint32_t b_addr, bool first) {
#pragma unroll
  for (uint32_t step = 0; step < kBlockM / 16; ++step) {
    const uint32_t frag[4] = {a[4 * step], a[4 * step + 1], a[4 * step + 2], a[4 * step + 3]};
    sm90::wgmma_bf16_rs<kHeadDim, Major::kMN>(acc, frag, q_mnmajor().desc(b_addr, step),
                                              first && step == 0 ? ScaleD::kZero
                                                                 : ScaleD::kAccumulate);
  }
}

// dQ(64 queries x 64 d) = dS(64 x 128 keys, MN-major smem) K(128 keys x 64 d, MN-major smem).
__device__ __forceinline__ void gemm_dq(float (&d)[32], uint32_t ds_addr, uint32_t k_addr) {
#pragma unroll
  for (uint32_t step = 0; step < kBlockN / 16; ++step)
    sm90::wgmma_bf16_ss<64, Major::kMN, Major::kMN>(
        d, ds_mnmajor().desc(ds_addr, step), k_mnmajor().desc(k_addr, step),
        step == 0 ? ScaleD::kZero : ScaleD::kAccumulate);
}

__device__ __forceinline__ uint32_t pack_bf16(float lo, float hi) {
  const __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<const uint32_t*>(&v);
}

// P^T (in s) and dS^T (in dp) for one 64 x 64 block; register 4i+e is key `key` (+8 for e >= 2),
// query `query` + 8i + (e & 1). L and Delta of the 64 queries come from the ring stage.
template <bool kIsCausal>
__device__ __forceinline__ void probabilities_and_ds(float (&s)[32], float (&dp)[32],
                                                     const float* lse, const float* delta, int key,
                                                     int query, int q_local, bool mask) {
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const float2 l2 = *reinterpret_cast<const float2*>(lse + q_local + 8 * i);
    const float2 d2 = *reinterpret_cast<const float2*>(delta + q_local + 8 * i);
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const float l = (e & 1) ? l2.y : l2.x;
      float p = exp2f(fmaf(s[4 * i + e], kScaleLog2, -l * kLog2e));
      if (kIsCausal && mask && key + (e >> 1) * 8 > query + 8 * i + (e & 1))
        p = 0.0f;
      s[4 * i + e] = p;
      dp[4 * i + e] = p * (dp[4 * i + e] - ((e & 1) ? d2.y : d2.x));
    }
  }
}

// stmatrix a 64 x 64 bf16 block (rows = this warpgroup's keys, columns = queries) into a
// SW128 region of 128-B rows.
__device__ __forceinline__ void store_block_sw128(const uint32_t (&v)[16], uint32_t region) {
  const uint32_t t = sm90::thread_index_in_warpgroup();
  const uint32_t lane = t % 32, j = lane / 8;
  const uint32_t row = 16 * (t / 32) + (j % 2) * 8 + lane % 8;
#pragma unroll
  for (uint32_t i = 0; i < 8; i += 2) {
    const uint32_t r4[4] = {v[2 * i], v[2 * i + 1], v[2 * i + 2], v[2 * i + 3]};
    const uint32_t col = 8 * (i + j / 2);
    sm90::stmatrix_x4(region + sm90::swizzle_offset(Swizzle::k128B, row * 128 + col * 2), r4);
  }
}

// Warpgroup c's dQ partial (64 queries x 64 d, f32) -> SW128 staging -> TMA reduce-add.
__device__ void reduce_dq(const float (&dq)[32], uint8_t* smem, uint32_t base, int c,
                          const CUtensorMap* map_dq, int64_t row0) {
  const uint32_t t = sm90::thread_index_in_warpgroup();
  const uint32_t stage = kDqOffset + c * kDqStageBytes;
  if (t == 0)
    sm90::bulk_wait_group_read<0>();
  sm90::named_barrier_sync(kDqBarrier + c, 128);
  const uint32_t row = 16 * (t / 32) + (t % 32) / 4, q = t % 4;
#pragma unroll
  for (int i = 0; i < 8; ++i)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const uint32_t col = 8 * (i % 4) + 2 * q; // within the 32-float box
      const uint32_t off = stage + (i / 4) * kDqBoxBytes +
                           sm90::swizzle_offset(Swizzle::k128B, (row + 8 * h) * 128 + col * 4);
      *reinterpret_cast<float2*>(smem + off) =
          make_float2(dq[4 * i + 2 * h], dq[4 * i + 2 * h + 1]);
    }
  sm90::fence_proxy_async_shared_cta();
  sm90::named_barrier_sync(kDqBarrier + c, 128);
  if (t == 0) {
    for (int box = 0; box < 2; ++box)
      sm90::tma_reduce_add_2d(map_dq, base + stage + box * kDqBoxBytes, 64 * c + 32 * box,
                              static_cast<int32_t>(row0));
    sm90::bulk_commit_group();
  }
}

// dK_c (scaled) and dV_c to global, bf16, straight from the accumulator fragments.
__device__ void store_dkdv(const float (&dk)[64], const float (&dv)[64], __nv_bfloat16* dK,
                           __nv_bfloat16* dV, int c, const Coords& at) {
  const uint32_t t = sm90::thread_index_in_warpgroup();
  const int key = at.key_block * kBlockN + 64 * c + 16 * static_cast<int>(t / 32) +
                  static_cast<int>(t % 32) / 4;
  const int64_t row = static_cast<int64_t>(at.head) * at.seq_len + key;
#pragma unroll
  for (int i = 0; i < 16; ++i)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int64_t off = (row + 8 * h) * kHeadDim + 8 * i + 2 * static_cast<int>(t % 4);
      *reinterpret_cast<__nv_bfloat162*>(dK + off) =
          __floats2bfloat162_rn(dk[4 * i + 2 * h] * kScale, dk[4 * i + 2 * h + 1] * kScale);
      *reinterpret_cast<__nv_bfloat162*>(dV + off) =
          __floats2bfloat162_rn(dv[4 * i + 2 * h], dv[4 * i + 2 * h + 1]);
    }
}

template <bool kIsCausal>
__device__ void consume(const CUtensorMap* map_dq, __nv_bfloat16* dK, __nv_bfloat16* dV,
                        uint8_t* smem, uint32_t base, int c, const Coords& at) {
  const uint32_t t = sm90::thread_index_in_warpgroup();
  const int key = at.key_block * kBlockN + 64 * c + 16 * static_cast<int>(t / 32) +
                  static_cast<int>(t % 32) / 4;
  const int q_local = 2 * static_cast<int>(t % 4);
  const uint32_t k_rows = base + kKOffset + c * 64 * 128, v_rows = base + kVOffset + c * 64 * 128;
  float dk[64], dv[64];
  sm90::mbar_wait(full_kv(base), 0);
  for (int it = 0; it < at.query_blocks; ++it) {
    const int s = it % kStages;
    const int query0 = (at.first_query_block + it) * kBlockM;
    const uint32_t q_addr = stage_addr(base, s), do_addr = q_addr + kQBytes;
    const float* lse = reinterpret_cast<const float*>(smem + (q_addr - base) + 2 * kQBytes);
    const float* delta = lse + kBlockM;
    sm90::mbar_wait(full_stage(base, s), (it / kStages) & 1);
    float sacc[32], dpacc[32];
    sm90::wgmma_fence();
    gemm_keys_x_queries(sacc, k_rows, q_addr);
    sm90::wgmma_commit_group();
    gemm_keys_x_queries(dpacc, v_rows, do_addr);
    sm90::wgmma_commit_group();
    sm90::wgmma_wait_group<0>();
    sm90::wgmma_fence_operand(sacc);
    sm90::wgmma_fence_operand(dpacc);
    const bool diagonal = query0 < at.key_block * kBlockN + kBlockN;
    probabilities_and_ds<kIsCausal>(sacc, dpacc, lse, delta, key, query0 + q_local, q_local,
                                    diagonal);
    uint32_t pb[16], dsb[16];
#pragma unroll
    for (int k = 0; k < 16; ++k) {
      pb[k] = pack_bf16(sacc[2 * k], sacc[2 * k + 1]);
      dsb[k] = pack_bf16(dpacc[2 * k], dpacc[2 * k + 1]);
    }
    sm90::wgmma_fence();
    gemm_keys_x_d(dv, pb, do_addr, it == 0);
    gemm_keys_x_d(dk, dsb, q_addr, it == 0);
    sm90::wgmma_commit_group();
    const uint32_t ds_buf = base + kDsOffset + (it % 2) * kDsBytes;
    store_block_sw128(dsb, ds_buf + c * 64 * 128);
    sm90::fence_proxy_async_shared_cta();
    sm90::named_barrier_sync(kDsBarrier, 256);
    float dq[32];
    gemm_dq(dq, ds_buf, base + kKOffset + c * kKvBoxBytes);
    sm90::wgmma_commit_group();
    sm90::wgmma_wait_group<1>();
    if (sm90::lane_id() == 0)
      sm90::mbar_arrive(empty_stage(base, s));
    sm90::wgmma_wait_group<0>();
    sm90::wgmma_fence_operand(dq);
    reduce_dq(dq, smem, base, c, map_dq, static_cast<int64_t>(at.head) * at.seq_len + query0);
  }
  sm90::wgmma_fence_operand(dk);
  sm90::wgmma_fence_operand(dv);
  store_dkdv(dk, dv, dK, dV, c, at);
  if (t == 0)
    sm90::bulk_wait_group<0>();
}

// Delta[row] = sum_d dO[row, d] * O[row, d] in f32; one warp per row, 4 elements per lane.
__global__ void delta_kernel(const __nv_bfloat16* O, const __nv_bfloat16* dO, float* delta,
                             int64_t rows) {
  const int64_t row = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const int lane = threadIdx.x % 32;
  if (row >= rows)
    return;
  const uint2 o = *reinterpret_cast<const uint2*>(O + row * kHeadDim + 4 * lane);
  const uint2 g = *reinterpret_cast<const uint2*>(dO + row * kHeadDim + 4 * lane);
  const float2 o0 = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&o.x));
  const float2 o1 = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&o.y));
  const float2 g0 = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&g.x));
  const float2 g1 = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&g.y));
  float sum = o0.x * g0.x + o0.y * g0.y + o1.x * g1.x + o1.y * g1.y;
#pragma unroll
  for (int m = 16; m > 0; m /= 2)
    sum += __shfl_xor_sync(0xffffffffu, sum, m);
  if (lane == 0)
    delta[row] = sum;
}

// dQ = bf16(scale * dQacc), 8 elements per thread.
__global__ void dq_convert_kernel(const float* acc, __nv_bfloat16* dq, int64_t n) {
  const int64_t i = (static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) * 8;
  if (i >= n)
    return;
  const float4 a = *reinterpret_cast<const float4*>(acc + i);
  const float4 b = *reinterpret_cast<const float4*>(acc + i + 4);
  uint4 out;
  out.x = pack_bf16(a.x * kScale, a.y * kScale);
  out.y = pack_bf16(a.z * kScale, a.w * kScale);
  out.z = pack_bf16(b.x * kScale, b.y * kScale);
  out.w = pack_bf16(b.z * kScale, b.w * kScale);
  *reinterpret_cast<uint4*>(dq + i) = out;
}

} // namespace sm90_fa3_bwd

// One CTA per (128-key block, batch x head); blockIdx.x ascending = most query blocks first
// under the causal mask.
template <bool kIsCausal>
__global__ void __launch_bounds__(sm90_fa3_bwd::kThreads, 1)
    sm90_fa3_backward_kernel(const __grid_constant__ CUtensorMap map_q,
                             const __grid_constant__ CUtensorMap map_k,
                             const __grid_constant__ CUtensorMap map_v,
                             const __grid_constant__ CUtensorMap map_do,
                             const __grid_constant__ CUtensorMap map_dq, const float* lse,
                             const float* delta, __nv_bfloat16* dK, __nv_bfloat16* dV,
                             int seq_len) {
  using namespace sm90_fa3_bwd;
  extern __shared__ __align__(1024) uint8_t smem[];
  const uint32_t base = sm90::smem_u32(smem);
  Coords at;
  at.key_block = static_cast<int>(blockIdx.x);
  at.head = static_cast<int>(blockIdx.y);
  at.seq_len = seq_len;
  at.first_query_block = kIsCausal ? at.key_block * (kBlockN / kBlockM) : 0;
  at.query_blocks = seq_len / kBlockM - at.first_query_block;
  if (threadIdx.x == 0) {
    sm90::mbar_init(full_kv(base), 1);
    for (int s = 0; s < kStages; ++s) {
      sm90::mbar_init(full_stage(base, s), 1);
      sm90::mbar_init(empty_stage(base, s), kConsumerWarps);
    }
    sm90::fence_mbarrier_init_release_cluster();
  }
  __syncthreads();
  const uint32_t wg = sm90::warpgroup_index();
  if (wg == 0) {
    sm90::setmaxnreg_dec<kProducerRegs>();
    if (sm90::warp_index_in_warpgroup() == 0 && sm90::elect_one_sync())
      produce(&map_q, &map_k, &map_v, &map_do, lse, delta, base, at);
  } else {
    sm90::setmaxnreg_inc<kConsumerRegs>();
    consume<kIsCausal>(&map_dq, dK, dV, smem, base, static_cast<int>(wg) - 1, at);
  }
}

namespace {

// [B*H, S, D] bf16 as 3-D {D, S, B*H}, SW128 boxes of 64 d x box_rows.
bool make_bhsd_map(CUtensorMap* map, const void* base, int64_t seq_len, uint32_t box_rows) {
  using namespace sm90_fa3_bwd;
  const uint64_t dims[3] = {kHeadDim, static_cast<uint64_t>(seq_len), kBatch * kHeads};
  const uint64_t strides[2] = {kHeadDim * 2, static_cast<uint64_t>(seq_len) * kHeadDim * 2};
  const uint32_t box[3] = {64, box_rows, 1};
  return sm90::make_tensor_map_3d(map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, base, dims, strides, box,
                                  CU_TENSOR_MAP_SWIZZLE_128B) == CUDA_SUCCESS;
}

// Scratch kept across calls (grown on demand): dQacc [B*H*S, D] f32 and Delta [B*H*S] f32.
struct Scratch {
  float* dq_acc = nullptr;
  float* delta = nullptr;
  int64_t rows = 0;
};

bool ensure_scratch(Scratch& s, int64_t rows) {
  if (rows <= s.rows)
    return true;
  cudaFree(s.dq_acc);
  cudaFree(s.delta);
  s = Scratch{};
  if (cudaMalloc(&s.dq_acc, rows * sm90_fa3_bwd::kHeadDim * sizeof(float)) != cudaSuccess ||
      cudaMalloc(&s.delta, rows * sizeof(float)) != cudaSuccess)
    return false;
  s.rows = rows;
  return true;
}

} // namespace

void run(const __nv_bfloat16* Q, const __nv_bfloat16* K, const __nv_bfloat16* V,
         const __nv_bfloat16* O, const __nv_bfloat16* dO, const float* L, __nv_bfloat16* dQ,
         __nv_bfloat16* dK, __nv_bfloat16* dV, int64_t S, cudaStream_t stream) {
  using namespace sm90_fa3_bwd;
  if (S <= 0)
    return;
  if (S % kBlockN != 0) {
    std::fprintf(stderr, "mha_bwd_d128: S = %lld is not a multiple of %d\n",
                 static_cast<long long>(S), kBlockN);
    return;
  }
  static Scratch scratch;
  const int64_t rows = static_cast<int64_t>(kBatch) * kHeads * S;
  if (!ensure_scratch(scratch, rows)) {
    std::fprintf(stderr, "mha_bwd_d128: cannot allocate %lld scratch rows\n",
                 static_cast<long long>(rows));
    return;
  }
  alignas(64) CUtensorMap map_q, map_k, map_v, map_do, map_dq;
  const uint64_t dq_dims[2] = {kHeadDim, static_cast<uint64_t>(rows)};
  const uint64_t dq_strides[1] = {kHeadDim * sizeof(float)};
  const uint32_t dq_box[2] = {32, kBlockM};
  if (!make_bhsd_map(&map_q, Q, S, kBlockM) || !make_bhsd_map(&map_do, dO, S, kBlockM) ||
      !make_bhsd_map(&map_k, K, S, kBlockN) || !make_bhsd_map(&map_v, V, S, kBlockN) ||
      sm90::make_tensor_map(&map_dq, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, scratch.dq_acc, dq_dims,
                            dq_strides, dq_box, CU_TENSOR_MAP_SWIZZLE_128B) != CUDA_SUCCESS) {
    std::fprintf(stderr, "mha_bwd_d128: cuTensorMapEncodeTiled failed\n");
    return;
  }
  cudaMemsetAsync(scratch.dq_acc, 0, rows * kHeadDim * sizeof(float), stream);
  delta_kernel<<<static_cast<unsigned>((rows * 32 + 255) / 256), 256, 0, stream>>>(
      O, dO, scratch.delta, rows);
  auto* kernel = &sm90_fa3_backward_kernel<kCausal>;
  cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, kSmemBytes);
  const dim3 grid(static_cast<unsigned>(S / kBlockN), kBatch * kHeads);
  kernel<<<grid, kThreads, kSmemBytes, stream>>>(map_q, map_k, map_v, map_do, map_dq, L,
                                                 scratch.delta, dK, dV, static_cast<int>(S));
  const int64_t n = rows * kHeadDim;
  dq_convert_kernel<<<static_cast<unsigned>((n / 8 + 255) / 256), 256, 0, stream>>>(scratch.dq_acc,
                                                                                    dQ, n);
}
