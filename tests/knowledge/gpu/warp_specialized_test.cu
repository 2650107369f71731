// The canonical Hopper pipeline end to end: C = A * B (128 x 128 x 512, bf16 in, bf16 out) in one
// CTA of three warpgroups. Warpgroup 0 is the producer: setmaxnreg.dec, one elected thread
// loops over K-blocks through a 2-stage full/empty mbarrier ring (parity flips on wrap) and
// issues SW128 TMA loads (A K-major, B MN-major as two 64-wide boxes). Warpgroups 1 and 2 are
// consumers: setmaxnreg.inc, each runs m64n128k16 wgmmas on its 64 rows, releases stages,
// converts to bf16, stmatrix-es into a staging tile, fences into the async proxy and TMA-stores.
// The host compares every output bit with its own GEMM rounded to bf16.
#include "harness.cuh"
#include "knowledge/sm90a/ptx.cuh"

namespace {

using sm90::Bf16Tile;
using sm90::Major;
using sm90::ScaleD;
using sm90::Swizzle;

constexpr uint32_t kM = 128, kN = 128, kK = 512, kBK = 64, kStages = 2;
constexpr uint32_t kABytes = kM * kBK * 2, kBBytes = kN * kBK * 2, kStageBytes = kABytes + kBBytes;
constexpr uint32_t kCOffset = kStages * kStageBytes, kCBytes = kM * kN * 2;
constexpr uint32_t kBarOffset = kCOffset + kCBytes;
constexpr uint32_t kSmemBytes = kBarOffset + 2 * kStages * 8;
constexpr uint32_t kThreads = 384;

static_assert(kSmemBytes <= 227u * 1024u, "shared-memory budget");
static_assert(kABytes % 1024 == 0 && kStageBytes % 1024 == 0 && kCOffset % 1024 == 0,
              "1024-B aligned SW128 tiles");
static_assert(kK % kBK == 0 && kBK % 16 == 0 && kM == 128 && kN % 64 == 0, "tile divisibility");
static_assert(40 * 128 + 2 * 232 * 128 <= 65536, "setmaxnreg budget");

__device__ uint32_t pack_bf16(float lo, float hi) {
  const __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<const uint32_t*>(&v);
}

__device__ void produce(const CUtensorMap* map_a, const CUtensorMap* map_b, uint32_t base) {
  for (uint32_t kb = 0; kb < kK / kBK; ++kb) {
    const uint32_t s = kb % kStages, parity = (kb / kStages) & 1u;
    const uint32_t full = base + kBarOffset + 8 * s, empty = full + 8 * kStages;
    const uint32_t a = base + s * kStageBytes, b = a + kABytes;
    kp::wait_or_trap(empty, parity ^ 1u);
    sm90::mbar_arrive_expect_tx(full, kStageBytes);
    sm90::tma_load_2d(a, map_a, full, static_cast<int32_t>(kb * kBK), 0);
    sm90::tma_load_2d(b, map_b, full, 0, static_cast<int32_t>(kb * kBK));
    sm90::tma_load_2d(b + kBBytes / 2, map_b, full, 64, static_cast<int32_t>(kb * kBK));
  }
}

__device__ void consume(const CUtensorMap* map_c, uint32_t base, uint32_t c) {
  constexpr Bf16Tile a_tile{Swizzle::k128B, Major::kK, 64, kBK};
  constexpr Bf16Tile b_tile{Swizzle::k128B, Major::kMN, kN, kBK};
  float d[kN / 2];
  for (uint32_t kb = 0; kb < kK / kBK; ++kb) {
    const uint32_t s = kb % kStages, parity = (kb / kStages) & 1u;
    const uint32_t full = base + kBarOffset + 8 * s, empty = full + 8 * kStages;
    const uint32_t a = base + s * kStageBytes + c * (kABytes / 2),
                   b = base + s * kStageBytes + kABytes;
    kp::wait_or_trap(full, parity);
    sm90::wgmma_fence();
#pragma unroll
    for (uint32_t step = 0; step < kBK / 16; ++step)
      sm90::wgmma_bf16_ss<kN, Major::kK, Major::kMN>(d, a_tile.desc(a, step), b_tile.desc(b, step),
                                                     kb == 0 && step == 0 ? ScaleD::kZero
                                                                          : ScaleD::kAccumulate);
    sm90::wgmma_commit_group();
    sm90::wgmma_wait_group<0>();
    sm90::wgmma_fence_operand(d);
    if (sm90::lane_id() == 0)
      sm90::mbar_arrive(empty);
  }
  const uint32_t w = sm90::warp_index_in_warpgroup(), lane = sm90::lane_id();
  const uint32_t j = lane / 8, row = 64 * c + 16 * w + (j % 2) * 8 + lane % 8;
#pragma unroll
  for (uint32_t i = 0; i < kN / 8; i += 2) {
    const uint32_t r[4] = {pack_bf16(d[4 * i], d[4 * i + 1]), pack_bf16(d[4 * i + 2], d[4 * i + 3]),
                           pack_bf16(d[4 * i + 4], d[4 * i + 5]),
                           pack_bf16(d[4 * i + 6], d[4 * i + 7])};
    sm90::stmatrix_x4(base + kCOffset + row * kN * 2 + 8 * (i + j / 2) * 2, r);
  }
  sm90::fence_proxy_async_shared_cta();
  sm90::named_barrier_sync(1 + c, 128);
  if (sm90::thread_index_in_warpgroup() == 0) {
    sm90::tma_store_2d(map_c, base + kCOffset + c * (kCBytes / 2), 0, static_cast<int32_t>(64 * c));
    sm90::bulk_commit_group();
    sm90::bulk_wait_group<0>();
  }
}

__global__ void __launch_bounds__(kThreads, 1)
    ws_gemm_kernel(const __grid_constant__ CUtensorMap map_a,
                   const __grid_constant__ CUtensorMap map_b,
                   const __grid_constant__ CUtensorMap map_c) {
  extern __shared__ __align__(1024) unsigned char smem[];
  const uint32_t base = sm90::smem_u32(smem);
  if (threadIdx.x == 0) {
    for (uint32_t s = 0; s < kStages; ++s) {
      sm90::mbar_init(base + kBarOffset + 8 * s, 1);
      sm90::mbar_init(base + kBarOffset + 8 * (kStages + s), 8);
    }
    sm90::fence_mbarrier_init_release_cluster();
  }
  __syncthreads();
  const uint32_t wg = sm90::warpgroup_index();
  if (wg == 0) {
    sm90::setmaxnreg_dec<40>();
    if (sm90::warp_index_in_warpgroup() == 0 && sm90::elect_one_sync())
      produce(&map_a, &map_b, base);
  } else {
    sm90::setmaxnreg_inc<232>();
    consume(&map_c, base, wg - 1);
  }
}

std::string ws_gemm_case() {
  const std::vector<float> a = kp::small_ints(kM * kK, 5, 2); // A[m][k]
  const std::vector<float> b = kp::small_ints(kK * kN, 9, 2); // B[k][n]
  std::vector<uint16_t> a_bits(a.size()), b_bits(b.size());
  for (size_t i = 0; i < a.size(); ++i)
    a_bits[i] = kp::bf16_bits(a[i]);
  for (size_t i = 0; i < b.size(); ++i)
    b_bits[i] = kp::bf16_bits(b[i]);
  kp::DeviceBuffer<uint16_t> da(a.size()), db(b.size()), dc(kM * kN);
  da.upload(a_bits);
  db.upload(b_bits);
  KP_CUDA(cudaMemset(dc.get(), 0xff, kM * kN * 2));
  CUtensorMap map_a, map_b, map_c;
  KP_CU(sm90::make_tensor_map_2d(&map_a, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, da.get(), kM, kK, kK * 2,
                                 kM, kBK, CU_TENSOR_MAP_SWIZZLE_128B));
  KP_CU(sm90::make_tensor_map_2d(&map_b, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, db.get(), kK, kN, kN * 2,
                                 kBK, 64, CU_TENSOR_MAP_SWIZZLE_128B));
  KP_CU(sm90::make_tensor_map_2d(&map_c, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, dc.get(), kM, kN, kN * 2,
                                 64, kN, CU_TENSOR_MAP_SWIZZLE_NONE));
  KP_CUDA(cudaFuncSetAttribute(ws_gemm_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                               kSmemBytes));
  ws_gemm_kernel<<<1, kThreads, kSmemBytes>>>(map_a, map_b, map_c);
  if (std::string e = kp::sync_kernel("ws_gemm_kernel"); !e.empty())
    return e;
  const std::vector<uint16_t> got = dc.download();
  int bad = 0;
  std::string first;
  for (uint32_t m = 0; m < kM; ++m)
    for (uint32_t n = 0; n < kN; ++n) {
      float want = 0;
      for (uint32_t k = 0; k < kK; ++k)
        want += a[m * kK + k] * b[k * kN + n];
      if (got[m * kN + n] != kp::bf16_bits(want) && bad++ == 0)
        first = "C(" + std::to_string(m) + "," + std::to_string(n) +
                ") = " + std::to_string(kp::bf16_value(got[m * kN + n])) + ", want " +
                std::to_string(want);
    }
  return bad == 0 ? std::string() : std::to_string(bad) + " wrong elements; first " + first;
}

const kp::Register reg_ws("warp_specialized_setmaxnreg_tma_wgmma_stmatrix_gemm", &ws_gemm_case);

} // namespace
