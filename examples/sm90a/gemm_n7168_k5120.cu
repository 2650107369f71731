// Expert candidate for gemm_n7168_k5120 on sm_90a, written only with knowledge/sm90a wrappers.
//
// Problem: C[M, 7168] = A[M, 5120] · B[7168, 5120]ᵀ, bf16 in and out, fp32 accumulation; every
// matrix row-major, so A and B are both K-major wgmma operands (no transposition anywhere).
//
// Approach: a persistent, warp-specialized kernel. The grid holds one CTA per SM; each CTA (or
// 2-CTA cluster, kClusterM) walks a static list of output "units" (kClusterM vertically adjacent
// 128 x 256 tiles that share one B tile), rastered in groups of kGroupRows tiles along M so that
// the CTAs resident at one time share their A and B panels in L2. Each CTA has three warpgroups:
//   - producer (setmaxnreg.dec 40): one elected thread runs the k-block ring over all of the
//     CTA's tiles: wait empty[s], arm full[s] with the stage's bytes, TMA the A box (128 x 64,
//     SWIZZLE_128B) and the B box (256 x 64). With kClusterM = 2 each CTA loads its own A and
//     multicasts its half of B (128 rows) into both CTAs, so L2 sends B once per pair.
//   - two consumers (setmaxnreg.inc 232): warpgroup c owns rows 64c..64c+63 of the tile and runs
//     four wgmma.m64n256k16 per k block. It keeps one k block in flight (wait_group 1) and only
//     then releases the previous stage (one arrival per warp on empty[s], in every CTA of the
//     cluster). The epilogue converts the 64 x 256 fp32 fragment to bf16, stmatrix-es it in 64 x
//     64 chunks into SWIZZLE_128B staging buffers (bank-conflict free) and TMA-stores each chunk;
//     the stores drain while the next tile's wgmmas run.
// Configuration (measured on an H200, bench/results/expert_kernels_h200.md): 3 stages with four
// staging chunks per warpgroup beat 4 stages with two; the 2-CTA multicast (kClusterM = 2)
// releases stages to the peer with mbar_arrive_remote_release_slot (.release.cta): 0.761 ms vs
// 0.772 ms for kClusterM = 1. With mbar_arrive_cluster (.release.cluster, a MEMBAR.ALL.GPU per
// k block and warp) the same cluster kernel took 1.10 ms.
//
// Invariants: every swizzled tile and staging buffer starts on a 1024-B boundary; the stage ring
// counter runs across tiles in producer and consumers alike (stage = it % kStages, parity =
// (it / kStages) & 1); full[s] expects A + all of B bytes (TMA counts out-of-bounds rows too);
// empty[s] counts 8 warps x kClusterM CTAs; a staging buffer is rewritten only after the bulk
// group that read it completed (bulk_wait_group_read<kEpiBuffers - 2> before the chunk's barrier).
// Rows past M are zero-filled by the loads and clipped by the stores, so any M >= 1 is correct.
#include "knowledge/sm90a/ptx.cuh"

#include <cstdint>
#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <mutex>

namespace {

using sm90::Bf16Tile;
using sm90::Major;
using sm90::ScaleD;
using sm90::Swizzle;

constexpr uint32_t kN = 7168;
constexpr uint32_t kK = 5120;
constexpr uint32_t kBlockM = 128;
constexpr uint32_t kBlockN = 256;
constexpr uint32_t kBlockK = 64;
constexpr uint32_t kStages = 3;
constexpr uint32_t kClusterM = 2;   // CTAs per cluster along M, sharing one B tile
constexpr uint32_t kGroupRows = 16; // M tiles per raster group
constexpr uint32_t kEpiBuffers = 4; // 64 x 64 staging chunks per consumer warpgroup
constexpr uint32_t kThreads = 384;
constexpr uint32_t kConsumerWarps = 8;

constexpr uint32_t kABytes = kBlockM * kBlockK * 2;
constexpr uint32_t kBBytes = kBlockN * kBlockK * 2;
constexpr uint32_t kStageBytes = kABytes + kBBytes;
constexpr uint32_t kChunkCols = 64;
constexpr uint32_t kChunkBytes = 64 * kChunkCols * 2;
constexpr uint32_t kEpiOffset = kStages * kStageBytes;
constexpr uint32_t kBarOffset = kEpiOffset + 2 * kEpiBuffers * kChunkBytes;
constexpr uint32_t kSmemBytes = kBarOffset + 2 * kStages * 8 + 1024; // + alignment slack
constexpr uint32_t kKBlocks = kK / kBlockK;

static_assert(kN % kBlockN == 0 && kK % kBlockK == 0, "tile divisibility");
static_assert(kBlockK * 2 == 128, "one k block is one 128-B swizzle span");
static_assert(kABytes % 1024 == 0 && kBBytes % 1024 == 0 && kChunkBytes % 1024 == 0,
              "swizzled tiles stay on the 1024-B period");
static_assert(kClusterM == 1 || kClusterM == 2, "cluster of one CTA or a pair");
static_assert(kEpiBuffers >= 2 && kEpiBuffers <= kBlockN / kChunkCols, "staging ring");
static_assert(kSmemBytes <= 232448, "shared-memory budget (227 KB opt-in)");
static_assert(40 * 128 + 2 * 232 * 128 <= 65536, "setmaxnreg budget");

// Static tile order shared by producer and consumers: unit u of a cluster is the kClusterM x 1
// block of tiles at (m_unit, n), raster groups of kGroupRows / kClusterM units along M.
struct Schedule {
  uint32_t m_units;
  uint32_t units;

  __device__ void coords(uint32_t u, uint32_t& m_unit, uint32_t& n) const {
    constexpr uint32_t kGroup = kGroupRows / kClusterM;
    constexpr uint32_t kTilesN = kN / kBlockN;
    const uint32_t group = u / (kGroup * kTilesN);
    const uint32_t first = group * kGroup;
    const uint32_t rows = min(kGroup, m_units - first);
    const uint32_t in_group = u - group * kGroup * kTilesN;
    m_unit = first + in_group % rows;
    n = in_group / rows;
  }
};

__device__ __forceinline__ uint32_t pack_bf16(float lo, float hi) {
  const __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<const uint32_t*>(&v);
}

__device__ __forceinline__ void wait_barrier(uint32_t bar, uint32_t parity) {
  if constexpr (kClusterM > 1) {
    while (!sm90::mbar_try_wait_cluster(bar, parity)) {
    }
  } else {
    sm90::mbar_wait(bar, parity);
  }
}

// Ring position shared by producer and consumers.
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

__device__ void produce(const CUtensorMap* map_a, const CUtensorMap* map_b, Schedule sched,
                        uint32_t base, uint32_t rank) {
  Ring ring;
  const uint32_t clusters = gridDim.x / kClusterM;
  for (uint32_t u = blockIdx.x / kClusterM; u < sched.units; u += clusters) {
    uint32_t m_unit, n;
    sched.coords(u, m_unit, n);
    const int32_t m0 = static_cast<int32_t>((m_unit * kClusterM + rank) * kBlockM);
    const int32_t n0 = static_cast<int32_t>(n * kBlockN);
    for (uint32_t kb = 0; kb < kKBlocks; ++kb) {
      const uint32_t full = base + kBarOffset + 8 * ring.stage, empty = full + 8 * kStages;
      const uint32_t a = base + ring.stage * kStageBytes, b = a + kABytes;
      const int32_t k0 = static_cast<int32_t>(kb * kBlockK);
      wait_barrier(empty, ring.parity ^ 1u);
      sm90::mbar_arrive_expect_tx(full, kStageBytes);
      sm90::tma_load_2d(a, map_a, full, k0, m0);
      if constexpr (kClusterM == 1) {
        sm90::tma_load_2d(b, map_b, full, k0, n0);
      } else {
        constexpr uint32_t kHalf = kBlockN / 2;
        sm90::tma_load_2d_multicast(b + rank * (kBBytes / 2), map_b, full, k0,
                                    n0 + static_cast<int32_t>(rank * kHalf), 0b11);
      }
      ring.advance();
    }
  }
}

// One arrival per warp on empty[stage] of every CTA of the cluster (the peer's through mapa).
__device__ __forceinline__ void release_stage(uint32_t base, uint32_t stage, uint32_t rank) {
  if (sm90::lane_id() != 0)
    return;
  const uint32_t empty = base + kBarOffset + 8 * (kStages + stage);
  sm90::mbar_arrive(empty);
  if constexpr (kClusterM > 1)
    sm90::mbar_arrive_remote_release_slot(sm90::mapa_shared(empty, rank ^ 1u));
}

__device__ __forceinline__ void mainloop(float (&d)[kBlockN / 2], uint32_t base, uint32_t rank,
                                         uint32_t c, Ring& ring) {
  constexpr Bf16Tile kTileA{Swizzle::k128B, Major::kK, kBlockM, kBlockK};
  constexpr Bf16Tile kTileB{Swizzle::k128B, Major::kK, kBlockN, kBlockK};
  uint32_t previous = 0;
  for (uint32_t kb = 0; kb < kKBlocks; ++kb) {
    const uint32_t full = base + kBarOffset + 8 * ring.stage;
    const uint32_t a = base + ring.stage * kStageBytes + c * (kABytes / 2);
    const uint32_t b = base + ring.stage * kStageBytes + kABytes;
    wait_barrier(full, ring.parity);
    sm90::wgmma_fence();
#pragma unroll
    for (uint32_t step = 0; step < kBlockK / 16; ++step)
      sm90::wgmma_bf16_ss<kBlockN>(d, kTileA.desc(a, step), kTileB.desc(b, step),
                                   kb == 0 && step == 0 ? ScaleD::kZero : ScaleD::kAccumulate);
    sm90::wgmma_commit_group();
    sm90::wgmma_wait_group<1>();
    if (kb > 0)
      release_stage(base, previous, rank);
    previous = ring.stage;
    ring.advance();
  }
  sm90::wgmma_wait_group<0>();
  sm90::wgmma_fence_operand(d);
  release_stage(base, previous, rank);
}

// 64 x 256 fp32 fragment -> bf16 -> four 64 x 64 SWIZZLE_128B chunks -> TMA stores.
__device__ __forceinline__ void epilogue(const float (&d)[kBlockN / 2], const CUtensorMap* map_c,
                                         uint32_t base, uint32_t c, int32_t m0, int32_t n0) {
  const uint32_t w = sm90::warp_index_in_warpgroup(), lane = sm90::lane_id();
  const uint32_t j = lane / 8, row = 16 * w + (j % 2) * 8 + lane % 8;
  const bool leader = sm90::thread_index_in_warpgroup() == 0;
#pragma unroll
  for (uint32_t h = 0; h < kBlockN / kChunkCols; ++h) {
    const uint32_t buf = base + kEpiOffset + (c * kEpiBuffers + h % kEpiBuffers) * kChunkBytes;
#pragma unroll
    for (uint32_t p = 0; p < kChunkCols / 16; ++p) {
      const uint32_t i = h * (kChunkCols / 8) + 2 * p; // 8-column group of d
      const uint32_t r[4] = {
          pack_bf16(d[4 * i], d[4 * i + 1]), pack_bf16(d[4 * i + 2], d[4 * i + 3]),
          pack_bf16(d[4 * i + 4], d[4 * i + 5]), pack_bf16(d[4 * i + 6], d[4 * i + 7])};
      const uint32_t chunk16 = 2 * p + j / 2;
      sm90::stmatrix_x4(buf + row * 128 + ((chunk16 ^ (row % 8)) * 16), r);
    }
    sm90::fence_proxy_async_shared_cta();
    if (leader)
      sm90::bulk_wait_group_read<kEpiBuffers - 2>(); // the buffer of chunk h + 1 is free
    sm90::named_barrier_sync(1 + c, 128);
    if (leader) {
      sm90::tma_store_2d(map_c, buf, n0 + static_cast<int32_t>(h * kChunkCols),
                         m0 + static_cast<int32_t>(64 * c));
      sm90::bulk_commit_group();
    }
  }
}

__device__ void consume(const CUtensorMap* map_c, Schedule sched, uint32_t base, uint32_t rank,
                        uint32_t c) {
  Ring ring;
  float d[kBlockN / 2];
  const uint32_t clusters = gridDim.x / kClusterM;
  for (uint32_t u = blockIdx.x / kClusterM; u < sched.units; u += clusters) {
    uint32_t m_unit, n;
    sched.coords(u, m_unit, n);
    mainloop(d, base, rank, c, ring);
    epilogue(d, map_c, base, c, static_cast<int32_t>((m_unit * kClusterM + rank) * kBlockM),
             static_cast<int32_t>(n * kBlockN));
  }
  if (sm90::thread_index_in_warpgroup() == 0)
    sm90::bulk_wait_group<0>();
}

} // namespace

__global__ void __launch_bounds__(kThreads, 1)
    sm90_gemm_ws_persistent(const __grid_constant__ CUtensorMap map_a,
                            const __grid_constant__ CUtensorMap map_b,
                            const __grid_constant__ CUtensorMap map_c, uint32_t m_units) {
  extern __shared__ unsigned char smem_raw[];
  const uint32_t base = (sm90::smem_u32(smem_raw) + 1023u) & ~1023u;
  const uint32_t rank = kClusterM > 1 ? sm90::cluster_ctarank() : 0u;
  const Schedule sched{m_units, m_units * (kN / kBlockN)};
  if (threadIdx.x == 0) {
    for (uint32_t s = 0; s < kStages; ++s) {
      sm90::mbar_init(base + kBarOffset + 8 * s, 1);
      sm90::mbar_init(base + kBarOffset + 8 * (kStages + s), kConsumerWarps * kClusterM);
    }
    sm90::fence_mbarrier_init_release_cluster();
    sm90::prefetch_tensormap(&map_a);
    sm90::prefetch_tensormap(&map_b);
    sm90::prefetch_tensormap(&map_c);
  }
  if constexpr (kClusterM > 1)
    sm90::cluster_sync();
  else
    __syncthreads();
  const uint32_t wg = sm90::warpgroup_index();
  if (wg == 0) {
    sm90::setmaxnreg_dec<40>();
    if (sm90::warp_index_in_warpgroup() == 0) {
      if (sm90::elect_one_sync())
        produce(&map_a, &map_b, sched, base, rank);
      __syncwarp();
    }
  } else {
    sm90::setmaxnreg_inc<232>();
    consume(&map_c, sched, base, rank, wg - 1);
  }
  if constexpr (kClusterM > 1)
    sm90::cluster_sync(); // no CTA leaves while its peer may still multicast or arrive here
}

namespace {

// Tensor maps and launch shape for one (A, B, C, M); rebuilt only when those change.
struct LaunchPlan {
  const void* a = nullptr;
  const void* b = nullptr;
  const void* c = nullptr;
  int64_t m = 0;
  int device = -1;
  CUtensorMap map_a{}, map_b{}, map_c{};
  uint32_t m_units = 0;
  uint32_t grid = 0;
};

bool encode_maps(LaunchPlan& plan) {
  const auto rows = static_cast<uint64_t>(plan.m);
  constexpr CUtensorMapDataType kBf16 = CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
  constexpr CUtensorMapSwizzle kSw128 = CU_TENSOR_MAP_SWIZZLE_128B;
  return sm90::make_tensor_map_2d(&plan.map_a, kBf16, plan.a, rows, kK, kK * 2, kBlockM, kBlockK,
                                  kSw128) == CUDA_SUCCESS &&
         sm90::make_tensor_map_2d(&plan.map_b, kBf16, plan.b, kN, kK, kK * 2, kBlockN / kClusterM,
                                  kBlockK, kSw128) == CUDA_SUCCESS &&
         sm90::make_tensor_map_2d(&plan.map_c, kBf16, plan.c, rows, kN, kN * 2, 64, kChunkCols,
                                  kSw128) == CUDA_SUCCESS;
}

cudaLaunchConfig_t launch_config(const LaunchPlan& plan, cudaStream_t stream,
                                 cudaLaunchAttribute* attr) {
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(plan.grid);
  config.blockDim = dim3(kThreads);
  config.dynamicSmemBytes = kSmemBytes;
  config.stream = stream;
  attr->id = cudaLaunchAttributeClusterDimension;
  attr->val.clusterDim.x = kClusterM;
  attr->val.clusterDim.y = 1;
  attr->val.clusterDim.z = 1;
  config.attrs = attr;
  config.numAttrs = 1;
  return config;
}

// Persistent grid: one CTA per SM, capped by the clusters that fit at once and by the work.
bool size_grid(LaunchPlan& plan) {
  int sms = 0;
  if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, plan.device) != cudaSuccess)
    return false;
  uint32_t slots = static_cast<uint32_t>(sms) / kClusterM;
  if constexpr (kClusterM > 1) {
    cudaLaunchAttribute attr;
    cudaLaunchConfig_t config = launch_config(plan, nullptr, &attr);
    config.gridDim = dim3(static_cast<uint32_t>(sms) / kClusterM * kClusterM);
    int clusters = 0;
    if (cudaOccupancyMaxActiveClusters(&clusters, sm90_gemm_ws_persistent, &config) ==
            cudaSuccess &&
        clusters > 0)
      slots = min(slots, static_cast<uint32_t>(clusters));
  }
  const uint32_t units = plan.m_units * (kN / kBlockN);
  plan.grid = min(slots, units) * kClusterM;
  return plan.grid > 0;
}

bool prepare(LaunchPlan& plan, const void* a, const void* b, const void* c, int64_t m) {
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess)
    return false;
  if (plan.a == a && plan.b == b && plan.c == c && plan.m == m && plan.device == device)
    return true;
  static std::once_flag attribute_once;
  std::call_once(attribute_once, [] {
    cudaFuncSetAttribute(sm90_gemm_ws_persistent, cudaFuncAttributeMaxDynamicSharedMemorySize,
                         kSmemBytes);
  });
  plan = LaunchPlan{a, b, c, m, device};
  plan.m_units = static_cast<uint32_t>((m + kBlockM * kClusterM - 1) / (kBlockM * kClusterM));
  if (!encode_maps(plan) || !size_grid(plan)) {
    plan = LaunchPlan{};
    return false;
  }
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
  cudaLaunchAttribute attr;
  const cudaLaunchConfig_t config = launch_config(plan, stream, &attr);
  cudaLaunchKernelEx(&config, sm90_gemm_ws_persistent, plan.map_a, plan.map_b, plan.map_c,
                     plan.m_units);
}
