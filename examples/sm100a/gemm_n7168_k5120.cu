// Expert candidate for gemm_n7168_k5120 on sm_100a (Blackwell), written only with
// knowledge/sm100a wrappers. NOT RUN: there is no Blackwell GPU in this project; it compiles for
// -gencode arch=compute_100a,code=sm_100a and `ptxbench check --arch sm_100a` finds tcgen05
// (UTCHMMA, UTCBAR, LDTM) and TMA in its SASS, but its numbers are unproven.
//
// Problem: C[M, 7168] = A[M, 5120] · B[7168, 5120]ᵀ, bf16 in and out, fp32 accumulation; A and B
// row-major, i.e. both K-major UMMA operands.
//
// Approach: persistent (one CTA per SM walks a static list of 128 x 256 output tiles, rastered in
// groups of kGroupRows tiles along M for L2 reuse) and warp-specialized, 256 threads:
//   - warp 0, TMA producer: one elected thread runs the k-block ring over all of the CTA's tiles:
//     wait empty[s], arm full[s] with A + B bytes, TMA the A box (128 x 64) and the B box (256 x
//     64), both SWIZZLE_128B into 1024-B aligned stage buffers (the K-major SW128 UMMA layout).
//   - warp 1, MMA issuer: allocates all 512 TMEM columns (two 128 x 256 fp32 accumulators), then
//     one elected thread waits full[s], issues four tcgen05.mma m128n256k16 per k block
//     (descriptor start +32 B per k16 step, kOverwrite only on a tile's first step) and
//     tcgen05.commit(empty[s]) to free the stage once they finished; after a tile's last k block
//     tcgen05.commit(tmem_full[acc]). Before a tile it waits tmem_empty[acc], so the MMAs of
//     tile i + 1 run while the epilogue drains tile i from the other accumulator.
//   - warps 4-7, epilogue: warp w reads TMEM lanes 32(w % 4).. (its tile rows) with
//     tcgen05.ld 32x32b.x32, converts to bf16, writes 32 x 64 chunks into SWIZZLE_128B staging
//     buffers (conflict-free 16-B stores) and TMA-stores them; after the last tcgen05.ld of a
//     tile, fence::before_thread_sync and one arrival per warp on tmem_empty[acc].
//
// Invariants: tile counter t and stage counter run identically in all roles; accumulator
// acc = t % 2 with parity (t / 2) & 1; every tcgen05 op after a barrier wait is preceded by
// fence::after_thread_sync and every hand-off of TMEM by fence::before_thread_sync; a staging
// buffer is rewritten only after bulk_wait_group_read<1> (two buffers per warp); TMEM is
// deallocated by warp 1 after a CTA barrier that every TMEM user passed. Rows past M are
// zero-filled by TMA loads and clipped by TMA stores, so any M >= 1 is correct.
#include "knowledge/sm100a/ptx.cuh"

#include <cstdint>
#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <mutex>

namespace {

using sm100::Accumulate;
using sm100::Major;
using sm100::TmemShape;
using sm100::UmmaBf16Tile;
using sm100::UmmaSwizzle;

constexpr uint32_t kN = 7168;
constexpr uint32_t kK = 5120;
constexpr uint32_t kBlockM = 128;
constexpr uint32_t kBlockN = 256;
constexpr uint32_t kBlockK = 64;
constexpr uint32_t kStages = 4;
constexpr uint32_t kGroupRows = 16;
constexpr uint32_t kThreads = 256;
constexpr uint32_t kEpilogueWarp0 = 4;
constexpr uint32_t kAccumulators = 2;
constexpr uint32_t kTmemCols = kAccumulators * kBlockN;
constexpr uint32_t kKBlocks = kK / kBlockK;

constexpr uint32_t kABytes = kBlockM * kBlockK * 2;
constexpr uint32_t kBBytes = kBlockN * kBlockK * 2;
constexpr uint32_t kStageBytes = kABytes + kBBytes;
constexpr uint32_t kChunkCols = 64;                   // one 128-B swizzle span of bf16
constexpr uint32_t kChunkBytes = 32 * kChunkCols * 2; // one warp's 32 rows
constexpr uint32_t kEpiOffset = kStages * kStageBytes;
constexpr uint32_t kBarOffset = kEpiOffset + 4 * 2 * kChunkBytes;
// full[kStages], empty[kStages], tmem_full[2], tmem_empty[2], then the TMEM address slot.
constexpr uint32_t kSlotOffset = kBarOffset + (2 * kStages + 2 * kAccumulators) * 8;
constexpr uint32_t kSmemBytes = kSlotOffset + 16 + 1024; // + alignment slack

constexpr uint32_t kIdesc = sm100::make_idesc_f16(kBlockM, kBlockN, Major::kK, Major::kK);

static_assert(sm100::valid_f16_shape(sm100::CtaGroup::k1, kBlockM, kBlockN));
static_assert(kTmemCols <= 512 && (kTmemCols & (kTmemCols - 1)) == 0, "TMEM allocation");
static_assert(kN % kBlockN == 0 && kK % kBlockK == 0 && kBlockN % kChunkCols == 0,
              "tile divisibility");
static_assert(kBlockK * 2 == 128, "one k block is one 128-B swizzle span");
static_assert(kABytes % 1024 == 0 && kBBytes % 1024 == 0 && kChunkBytes % 1024 == 0,
              "swizzled buffers stay on the 1024-B period");
static_assert(kSmemBytes <= 232448, "shared-memory budget (227 KB opt-in)");

struct Schedule {
  uint32_t m_tiles;
  uint32_t tiles;

  __device__ void coords(uint32_t t, uint32_t& m_tile, uint32_t& n_tile) const {
    constexpr uint32_t kTilesN = kN / kBlockN;
    const uint32_t group = t / (kGroupRows * kTilesN);
    const uint32_t first = group * kGroupRows;
    const uint32_t rows = min(kGroupRows, m_tiles - first);
    const uint32_t in_group = t - group * kGroupRows * kTilesN;
    m_tile = first + in_group % rows;
    n_tile = in_group / rows;
  }
};

struct Ring {
  uint32_t stage = 0;
  uint32_t parity = 0;
  __device__ void advance() {
    if (++stage == kStages) {
      stage = 0;
      parity ^= 1u;
    }
  }
};

struct Barriers {
  uint32_t base;
  __device__ uint32_t full(uint32_t s) const { return base + 8 * s; }
  __device__ uint32_t empty(uint32_t s) const { return base + 8 * (kStages + s); }
  __device__ uint32_t tmem_full(uint32_t a) const { return base + 8 * (2 * kStages + a); }
  __device__ uint32_t tmem_empty(uint32_t a) const {
    return base + 8 * (2 * kStages + kAccumulators + a);
  }
};

__device__ __forceinline__ uint32_t pack_bf16(uint32_t lo, uint32_t hi) {
  const __nv_bfloat162 v = __floats2bfloat162_rn(__uint_as_float(lo), __uint_as_float(hi));
  return *reinterpret_cast<const uint32_t*>(&v);
}

__device__ void produce(const CUtensorMap* map_a, const CUtensorMap* map_b, Schedule sched,
                        uint32_t smem, Barriers bars) {
  Ring ring;
  for (uint32_t t = blockIdx.x; t < sched.tiles; t += gridDim.x) {
    uint32_t m_tile, n_tile;
    sched.coords(t, m_tile, n_tile);
    for (uint32_t kb = 0; kb < kKBlocks; ++kb) {
      const uint32_t a = smem + ring.stage * kStageBytes;
      const int32_t k0 = static_cast<int32_t>(kb * kBlockK);
      sm100::mbar_wait(bars.empty(ring.stage), ring.parity ^ 1u);
      sm100::mbar_arrive_expect_tx(bars.full(ring.stage), kStageBytes);
      sm100::tma_load_2d(a, map_a, bars.full(ring.stage), k0,
                         static_cast<int32_t>(m_tile * kBlockM));
      sm100::tma_load_2d(a + kABytes, map_b, bars.full(ring.stage), k0,
                         static_cast<int32_t>(n_tile * kBlockN));
      ring.advance();
    }
  }
}

__device__ void issue_mma(Schedule sched, uint32_t smem, Barriers bars, uint32_t tmem) {
  constexpr UmmaBf16Tile kTileA{UmmaSwizzle::k128B, Major::kK, kBlockM, kBlockK};
  constexpr UmmaBf16Tile kTileB{UmmaSwizzle::k128B, Major::kK, kBlockN, kBlockK};
  Ring ring;
  uint32_t local = 0;
  for (uint32_t t = blockIdx.x; t < sched.tiles; t += gridDim.x, ++local) {
    const uint32_t acc = local % kAccumulators, acc_parity = (local / kAccumulators) & 1u;
    const uint32_t d = tmem + acc * kBlockN;
    sm100::mbar_wait(bars.tmem_empty(acc), acc_parity ^ 1u);
    sm100::tcgen05_fence_after_thread_sync();
    for (uint32_t kb = 0; kb < kKBlocks; ++kb) {
      const uint32_t a = smem + ring.stage * kStageBytes, b = a + kABytes;
      sm100::mbar_wait(bars.full(ring.stage), ring.parity);
      sm100::tcgen05_fence_after_thread_sync();
#pragma unroll
      for (uint32_t step = 0; step < kBlockK / 16; ++step)
        sm100::mma_f16_ss(d, kTileA.desc(a, step), kTileB.desc(b, step), kIdesc,
                          kb == 0 && step == 0 ? Accumulate::kOverwrite : Accumulate::kAccumulate);
      sm100::tcgen05_commit(bars.empty(ring.stage));
      ring.advance();
    }
    sm100::tcgen05_commit(bars.tmem_full(acc));
  }
}

// Warp `quarter` of the epilogue warpgroup: tile rows 32 * quarter + lane.
// `smem_ptr` is the generic pointer of shared offset `smem` (the staging stores are plain C++).
__device__ void drain(const CUtensorMap* map_c, Schedule sched, unsigned char* smem_ptr,
                      uint32_t smem, Barriers bars, uint32_t tmem, uint32_t quarter) {
  const uint32_t lane = threadIdx.x % 32;
  const uint32_t row_base = 32 * quarter;
  uint32_t local = 0, chunk_count = 0;
  for (uint32_t t = blockIdx.x; t < sched.tiles; t += gridDim.x, ++local) {
    uint32_t m_tile, n_tile;
    sched.coords(t, m_tile, n_tile);
    const uint32_t acc = local % kAccumulators, acc_parity = (local / kAccumulators) & 1u;
    sm100::mbar_wait(bars.tmem_full(acc), acc_parity);
    sm100::tcgen05_fence_after_thread_sync();
    for (uint32_t h = 0; h < kBlockN / kChunkCols; ++h, ++chunk_count) {
      const uint32_t buf_offset = kEpiOffset + (quarter * 2 + chunk_count % 2) * kChunkBytes;
      const uint32_t buf = smem + buf_offset;
      if (lane == 0)
        sm100::bulk_wait_group_read<1>(); // the store that last read `buf` is done
      __syncwarp();
#pragma unroll
      for (uint32_t half = 0; half < 2; ++half) {
        uint32_t r[32];
        sm100::tmem_ld<TmemShape::k32x32b, 32>(tmem + sm100::tmem_lane_offset(row_base) +
                                                   acc * kBlockN + h * kChunkCols + half * 32,
                                               r);
        sm100::tmem_wait_ld(r);
#pragma unroll
        for (uint32_t v = 0; v < 4; ++v) { // four 16-B pieces of 8 columns
          const uint32_t piece = half * 4 + v;
          const uint32_t offset = buf_offset + lane * 128 + ((piece ^ (lane % 8)) * 16);
          *reinterpret_cast<uint4*>(smem_ptr + offset) =
              uint4{pack_bf16(r[8 * v], r[8 * v + 1]), pack_bf16(r[8 * v + 2], r[8 * v + 3]),
                    pack_bf16(r[8 * v + 4], r[8 * v + 5]), pack_bf16(r[8 * v + 6], r[8 * v + 7])};
        }
      }
      if (h + 1 == kBlockN / kChunkCols) { // every column of this accumulator has been read
        sm100::tcgen05_fence_before_thread_sync();
        if (lane == 0)
          sm100::mbar_arrive(bars.tmem_empty(acc));
      }
      sm100::fence_proxy_async_shared_cta();
      __syncwarp();
      if (lane == 0) {
        sm100::tma_store_2d(map_c, buf, static_cast<int32_t>(n_tile * kBlockN + h * kChunkCols),
                            static_cast<int32_t>(m_tile * kBlockM + row_base));
        sm100::bulk_commit_group();
      }
    }
  }
  if (lane == 0)
    sm100::bulk_wait_group<0>();
}

} // namespace

__global__ void __launch_bounds__(kThreads, 1)
    sm100_gemm_tcgen05_persistent(const __grid_constant__ CUtensorMap map_a,
                                  const __grid_constant__ CUtensorMap map_b,
                                  const __grid_constant__ CUtensorMap map_c, uint32_t m_tiles) {
  extern __shared__ unsigned char smem_raw[];
  unsigned char* smem_ptr = smem_raw + ((1024u - (sm100::smem_u32(smem_raw) & 1023u)) & 1023u);
  const uint32_t smem = sm100::smem_u32(smem_ptr);
  const Barriers bars{smem + kBarOffset};
  const uint32_t slot = smem + kSlotOffset;
  const Schedule sched{m_tiles, m_tiles * (kN / kBlockN)};
  const uint32_t warp = sm100::warp_index();
  if (warp == 1) {
    sm100::tmem_alloc<kTmemCols>(slot);
    sm100::tmem_relinquish_alloc_permit();
  }
  if (threadIdx.x == 0) {
    for (uint32_t s = 0; s < kStages; ++s) {
      sm100::mbar_init(bars.full(s), 1);
      sm100::mbar_init(bars.empty(s), 1);
    }
    for (uint32_t a = 0; a < kAccumulators; ++a) {
      sm100::mbar_init(bars.tmem_full(a), 1);
      sm100::mbar_init(bars.tmem_empty(a), 4); // one arrival per epilogue warp
    }
    sm100::fence_mbarrier_init_release_cluster();
    sm100::prefetch_tensormap(&map_a);
    sm100::prefetch_tensormap(&map_b);
    sm100::prefetch_tensormap(&map_c);
  }
  sm100::tcgen05_fence_before_thread_sync();
  __syncthreads();
  sm100::tcgen05_fence_after_thread_sync();
  const uint32_t tmem = *reinterpret_cast<volatile uint32_t*>(smem_ptr + kSlotOffset);

  if (warp == 0) {
    if (sm100::elect_one_sync())
      produce(&map_a, &map_b, sched, smem, bars);
    __syncwarp();
  } else if (warp == 1) {
    if (sm100::elect_one_sync())
      issue_mma(sched, smem, bars, tmem);
    __syncwarp();
  } else if (warp >= kEpilogueWarp0) {
    drain(&map_c, sched, smem_ptr, smem, bars, tmem, warp % 4);
  }
  sm100::tcgen05_fence_before_thread_sync();
  __syncthreads();
  if (warp == 1) {
    sm100::tcgen05_fence_after_thread_sync();
    sm100::tmem_dealloc<kTmemCols>(tmem);
  }
}

namespace {

struct LaunchPlan {
  const void* a = nullptr;
  const void* b = nullptr;
  const void* c = nullptr;
  int64_t m = 0;
  int device = -1;
  CUtensorMap map_a{}, map_b{}, map_c{};
  uint32_t m_tiles = 0;
  uint32_t grid = 0;
};

bool prepare(LaunchPlan& plan, const void* a, const void* b, const void* c, int64_t m) {
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess)
    return false;
  if (plan.a == a && plan.b == b && plan.c == c && plan.m == m && plan.device == device)
    return true;
  static std::once_flag attribute_once;
  std::call_once(attribute_once, [] {
    cudaFuncSetAttribute(sm100_gemm_tcgen05_persistent, cudaFuncAttributeMaxDynamicSharedMemorySize,
                         kSmemBytes);
  });
  plan = LaunchPlan{a, b, c, m, device};
  plan.m_tiles = static_cast<uint32_t>((m + kBlockM - 1) / kBlockM);
  const auto rows = static_cast<uint64_t>(m);
  constexpr CUtensorMapDataType kBf16 = CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
  constexpr CUtensorMapSwizzle kSw128 = CU_TENSOR_MAP_SWIZZLE_128B;
  int sms = 0;
  const bool ok =
      sm100::make_tensor_map_2d(&plan.map_a, kBf16, a, rows, kK, kK * 2, kBlockM, kBlockK,
                                kSw128) == CUDA_SUCCESS &&
      sm100::make_tensor_map_2d(&plan.map_b, kBf16, b, kN, kK, kK * 2, kBlockN, kBlockK, kSw128) ==
          CUDA_SUCCESS &&
      sm100::make_tensor_map_2d(&plan.map_c, kBf16, c, rows, kN, kN * 2, 32, kChunkCols, kSw128) ==
          CUDA_SUCCESS &&
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) == cudaSuccess &&
      sms > 0;
  if (!ok) {
    plan = LaunchPlan{};
    return false;
  }
  plan.grid = min(static_cast<uint32_t>(sms), plan.m_tiles * (kN / kBlockN));
  return true;
}

} // namespace

void run(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int64_t M,
         cudaStream_t stream) {
  static std::mutex mutex;
  static LaunchPlan plan;
  if (M <= 0)
    return;
  std::lock_guard lock(mutex);
  if (!prepare(plan, A, B, C, M))
    return;
  sm100_gemm_tcgen05_persistent<<<plan.grid, kThreads, kSmemBytes, stream>>>(
      plan.map_a, plan.map_b, plan.map_c, plan.m_tiles);
}
