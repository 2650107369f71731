// A small C = A * B^T bf16 GEMM for sm_100a written only with knowledge/sm100a wrappers: the
// static check of the pack (knowledge_sm100a_sass) asserts that its SASS holds UTCHMMA
// (tcgen05.mma), UTCBAR (tcgen05.commit) and LDTM (tcgen05.ld). NOT RUN: there is no Blackwell GPU
// here.
//
// A [M, K] and B [N, K] row-major (both K-major), C [M, N] row-major f32; M, N multiples of 128,
// K a multiple of 64. One 128-thread CTA per 128 x 128 tile, 2-stage TMA ring:
//   thread 0: for each K block kb: wait empty[s] (parity of the previous lap), arm full[s] with
//     both boxes' bytes, TMA A and B boxes (128 x 64 bf16, SWIZZLE_128B) into stage s;
//     wait full[s], fence_after, 4 x tcgen05.mma m128n128k16 (descriptor start +32 B per k16),
//     tcgen05.commit(empty[s]) frees the stage when those MMAs finish; after the last block
//     tcgen05.commit(done).
//   all warps: wait done, fence_after, warp w reads TMEM lanes 32w..32w+31 (rows) with
//     tcgen05.ld 32x32b.x32 per 32 columns, stores f32 rows to C.
//   teardown: fence_before, __syncthreads, warp 0 deallocates.
#include "knowledge/sm100a/ptx.cuh"

#include <cuda.h>

namespace {

using namespace sm100;

constexpr uint32_t kBlockM = 128;
constexpr uint32_t kBlockN = 128;
constexpr uint32_t kBlockK = 64;
constexpr uint32_t kStages = 2;
constexpr uint32_t kTileBytes = kBlockM * kBlockK * 2;
constexpr uint32_t kStageBytes = 2 * kTileBytes;
constexpr uint32_t kSmemBytes = kStages * kStageBytes + 1024;
constexpr uint32_t kIdesc = make_idesc_f16(kBlockM, kBlockN, Major::kK, Major::kK);

static_assert(valid_f16_shape(CtaGroup::k1, kBlockM, kBlockN));
static_assert(kBlockK * 2 == 128, "one K block is one 128-B swizzle span");
static_assert(kTileBytes % 1024 == 0, "tiles stay on the 1024-B swizzle period");
static_assert(kSmemBytes <= 232448, "shared-memory budget");

__global__ void __launch_bounds__(128, 1)
    sm100a_tcgen05_gemm(const __grid_constant__ CUtensorMap map_a,
                        const __grid_constant__ CUtensorMap map_b, float* c, uint32_t n,
                        uint32_t k) {
  extern __shared__ __align__(1024) unsigned char smem[];
  __shared__ __align__(8) uint64_t full[kStages];
  __shared__ __align__(8) uint64_t empty[kStages];
  __shared__ __align__(8) uint64_t done;
  __shared__ uint32_t tmem_slot;
  const uint32_t base = (smem_u32(smem) + 1023u) & ~1023u;
  const UmmaBf16Tile tile{UmmaSwizzle::k128B, Major::kK, kBlockM, kBlockK};
  const uint32_t m0 = blockIdx.y * kBlockM;
  const uint32_t n0 = blockIdx.x * kBlockN;

  if (warp_index() == 0)
    tmem_alloc<kBlockN>(smem_u32(&tmem_slot));
  if (threadIdx.x == 0) {
    for (uint32_t s = 0; s < kStages; ++s) {
      mbar_init(smem_u32(&full[s]), 1);
      mbar_init(smem_u32(&empty[s]), 1);
    }
    mbar_init(smem_u32(&done), 1);
    fence_mbarrier_init_release_cluster();
  }
  tcgen05_fence_before_thread_sync();
  __syncthreads();
  tcgen05_fence_after_thread_sync();
  const uint32_t d = tmem_slot;

  if (threadIdx.x == 0) {
    const uint32_t blocks = k / kBlockK;
    for (uint32_t kb = 0; kb < blocks; ++kb) {
      const uint32_t s = kb % kStages;
      const uint32_t parity = (kb / kStages) & 1u;
      const uint32_t a = base + s * kStageBytes;
      mbar_wait(smem_u32(&empty[s]), parity ^ 1u);
      mbar_arrive_expect_tx(smem_u32(&full[s]), kStageBytes);
      tma_load_2d(a, &map_a, smem_u32(&full[s]), static_cast<int32_t>(kb * kBlockK),
                  static_cast<int32_t>(m0));
      tma_load_2d(a + kTileBytes, &map_b, smem_u32(&full[s]), static_cast<int32_t>(kb * kBlockK),
                  static_cast<int32_t>(n0));
      mbar_wait(smem_u32(&full[s]), parity);
      tcgen05_fence_after_thread_sync();
      for (uint32_t step = 0; step < kBlockK / 16; ++step)
        mma_f16_ss(d, tile.desc(a, step), tile.desc(a + kTileBytes, step), kIdesc,
                   kb == 0 && step == 0 ? Accumulate::kOverwrite : Accumulate::kAccumulate);
      tcgen05_commit(smem_u32(&empty[s]));
    }
    tcgen05_commit(smem_u32(&done));
  }
  __syncwarp();

  mbar_wait(smem_u32(&done), 0);
  tcgen05_fence_after_thread_sync();
  const uint32_t row = m0 + tmem_warp_lane_base(warp_index()) + (threadIdx.x % 32u);
  for (uint32_t col = 0; col < kBlockN; col += 32) {
    uint32_t r[32];
    tmem_ld<TmemShape::k32x32b, 32>(d + tmem_lane_offset(tmem_warp_lane_base(warp_index())) + col,
                                    r);
    tmem_wait_ld(r);
    for (uint32_t j = 0; j < 32; ++j)
      c[static_cast<size_t>(row) * n + n0 + col + j] = __uint_as_float(r[j]);
  }
  tcgen05_fence_before_thread_sync();
  __syncthreads();
  if (warp_index() == 0)
    tmem_dealloc<kBlockN>(d);
}

} // namespace

void* knowledge_sm100a_gemm_kernel = reinterpret_cast<void*>(&sm100a_tcgen05_gemm);
