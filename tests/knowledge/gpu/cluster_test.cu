// A 2-CTA cluster: each CTA multicasts one half (32 rows) of a 64 x 64 bf16 SW128 tile to both
// CTAs; both CTAs must hold the whole tile at the same offsets, in the TMA swizzle layout. Also
// checks %cluster_ctarank / %cluster_nctarank, a DSMEM read through mapa and a remote mbarrier
// arrival on the peer CTA.
#include "harness.cuh"
#include "knowledge/sm90a/ptx.cuh"

namespace {

using sm90::Bf16Tile;
using sm90::Major;
using sm90::Swizzle;

constexpr uint32_t kRows = 64, kCols = 64, kHalfRows = 32;
constexpr uint32_t kTileBytes = kRows * kCols * 2;
constexpr uint32_t kHalfBytes = kTileBytes / 2;

__global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(128, 1)
    multicast_kernel(const __grid_constant__ CUtensorMap map, uint4* out, uint32_t* info) {
  static_assert(kHalfBytes % 1024 == 0, "each half must start on the SW128 period");
  __shared__ __align__(1024) uint4 tile[kTileBytes / 16];
  __shared__ __align__(8) uint64_t full;
  __shared__ __align__(8) uint64_t done;
  __shared__ uint32_t word;
  const uint32_t rank = sm90::cluster_ctarank();
  const uint32_t peer = rank ^ 1u;
  const uint32_t full_bar = sm90::smem_u32(&full), done_bar = sm90::smem_u32(&done);
  if (threadIdx.x == 0) {
    sm90::mbar_init(full_bar, 1);
    sm90::mbar_init(done_bar, 1);
    sm90::fence_mbarrier_init_release_cluster();
    word = 100 + rank;
  }
  sm90::cluster_sync();
  if (threadIdx.x == 0) {
    sm90::mbar_arrive_expect_tx(full_bar, kTileBytes);
    sm90::tma_load_2d_multicast(sm90::smem_u32(tile) + rank * kHalfBytes, &map, full_bar, 0,
                                static_cast<int32_t>(rank * kHalfRows), 0x3);
  }
  kp::wait_cluster_or_trap(full_bar, 0);
  for (uint32_t i = threadIdx.x; i < kTileBytes / 16; i += 128)
    out[rank * (kTileBytes / 16) + i] = tile[i];
  if (threadIdx.x == 0) {
    info[rank * 4 + 0] =
        sm90::ld_shared_cluster_u32(sm90::mapa_shared(sm90::smem_u32(&word), peer));
    info[rank * 4 + 1] = rank;
    info[rank * 4 + 2] = sm90::cluster_nctarank();
    sm90::mbar_arrive_cluster(sm90::mapa_shared(done_bar, peer));
  }
  kp::wait_cluster_or_trap(done_bar, 0);
  if (threadIdx.x == 0)
    info[rank * 4 + 3] = 1;
  sm90::cluster_sync();
}

std::string multicast_case() {
  std::vector<uint16_t> host(kRows * kCols);
  for (uint32_t i = 0; i < host.size(); ++i)
    host[i] = static_cast<uint16_t>(i * 3 + 1);
  kp::DeviceBuffer<uint16_t> src(host.size());
  src.upload(host);
  CUtensorMap map;
  KP_CU(sm90::make_tensor_map_2d(&map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, src.get(), kRows, kCols,
                                 kCols * 2, kHalfRows, kCols, CU_TENSOR_MAP_SWIZZLE_128B));
  kp::DeviceBuffer<uint4> out(2 * kTileBytes / 16);
  kp::DeviceBuffer<uint32_t> info(8);
  KP_CUDA(cudaMemset(info.get(), 0, 8 * 4));
  multicast_kernel<<<2, 128>>>(map, out.get(), info.get());
  if (std::string e = kp::sync_kernel("multicast_kernel"); !e.empty())
    return e;
  const std::vector<uint32_t> inf = info.download();
  for (uint32_t r = 0; r < 2; ++r) {
    if (inf[r * 4 + 0] != 100 + (r ^ 1u))
      return "CTA " + std::to_string(r) + " read the wrong peer word through mapa";
    if (inf[r * 4 + 2] != 2)
      return "cluster_nctarank != 2";
    if (inf[r * 4 + 3] != 1)
      return "remote arrival not seen";
  }
  if (inf[1] + inf[5] != 1)
    return "cluster ranks are not {0, 1}";
  const std::vector<uint4> got = out.download();
  const Bf16Tile tile{Swizzle::k128B, Major::kK, kRows, kCols};
  for (uint32_t cta = 0; cta < 2; ++cta) {
    const auto* smem = reinterpret_cast<const unsigned char*>(got.data()) + cta * kTileBytes;
    for (uint32_t r = 0; r < kRows; ++r)
      for (uint32_t c = 0; c < kCols; ++c) {
        uint16_t v;
        std::memcpy(&v, smem + tile.offset(r, c), 2);
        if (v != host[r * kCols + c])
          return "CTA " + std::to_string(cta) + " element (" + std::to_string(r) + "," +
                 std::to_string(c) + ") wrong";
      }
  }
  return {};
}

const kp::Register reg_multicast("cluster_multicast_tma_2cta", &multicast_case);

} // namespace

namespace {

// A 2-CTA multicast ring of one slot over 8 rounds: each CTA multicasts its half of round k's
// tile into both CTAs, the consumers of both CTAs copy the whole tile out and release the slot
// to both producers (local mbar_arrive + mbar_arrive_remote_release_slot on the peer), and a
// producer refills only after both CTAs released. Any round that saw the next round's data
// (a refill before the release) or a lost arrival (hang) fails the case.
constexpr uint32_t kRounds = 8;

__global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(128, 1)
    ring_kernel(const __grid_constant__ CUtensorMap map, uint4* out) {
  __shared__ __align__(1024) uint4 tile[kTileBytes / 16];
  __shared__ __align__(8) uint64_t full;
  __shared__ __align__(8) uint64_t empty;
  const uint32_t rank = sm90::cluster_ctarank();
  const uint32_t peer = rank ^ 1u;
  const uint32_t full_bar = sm90::smem_u32(&full), empty_bar = sm90::smem_u32(&empty);
  if (threadIdx.x == 0) {
    sm90::mbar_init(full_bar, 1);
    sm90::mbar_init(empty_bar, 2); // this CTA's consumers and the peer's
    sm90::fence_mbarrier_init_release_cluster();
  }
  sm90::cluster_sync();
  for (uint32_t k = 0; k < kRounds; ++k) {
    if (threadIdx.x == 0) {
      if (k > 0)
        kp::wait_cluster_or_trap(empty_bar, (k - 1) & 1u);
      sm90::mbar_arrive_expect_tx(full_bar, kTileBytes);
      sm90::tma_load_2d_multicast(sm90::smem_u32(tile) + rank * kHalfBytes, &map, full_bar, 0,
                                  static_cast<int32_t>(k * kRows + rank * kHalfRows), 0x3);
    }
    kp::wait_cluster_or_trap(full_bar, k & 1u);
    uint4* dst = out + (rank * kRounds + k) * (kTileBytes / 16);
    for (uint32_t i = threadIdx.x; i < kTileBytes / 16; i += 128)
      dst[i] = tile[i];
    __syncthreads(); // every read of the slot has returned
    if (threadIdx.x == 0) {
      sm90::mbar_arrive(empty_bar);
      sm90::mbar_arrive_remote_release_slot(sm90::mapa_shared(empty_bar, peer));
    }
  }
  sm90::cluster_sync();
}

std::string ring_case() {
  std::vector<uint16_t> host(kRounds * kRows * kCols);
  for (uint32_t i = 0; i < host.size(); ++i)
    host[i] = static_cast<uint16_t>(i * 7 + 3);
  kp::DeviceBuffer<uint16_t> src(host.size());
  src.upload(host);
  CUtensorMap map;
  KP_CU(sm90::make_tensor_map_2d(&map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, src.get(), kRounds * kRows,
                                 kCols, kCols * 2, kHalfRows, kCols, CU_TENSOR_MAP_SWIZZLE_128B));
  kp::DeviceBuffer<uint4> out(2 * kRounds * kTileBytes / 16);
  ring_kernel<<<2, 128>>>(map, out.get());
  if (std::string e = kp::sync_kernel("ring_kernel"); !e.empty())
    return e;
  const std::vector<uint4> got = out.download();
  const Bf16Tile layout{Swizzle::k128B, Major::kK, kRows, kCols};
  for (uint32_t cta = 0; cta < 2; ++cta)
    for (uint32_t k = 0; k < kRounds; ++k) {
      const auto* smem =
          reinterpret_cast<const unsigned char*>(got.data()) + (cta * kRounds + k) * kTileBytes;
      for (uint32_t r = 0; r < kRows; ++r)
        for (uint32_t c = 0; c < kCols; ++c) {
          uint16_t v;
          std::memcpy(&v, smem + layout.offset(r, c), 2);
          if (v != host[(k * kRows + r) * kCols + c])
            return "CTA " + std::to_string(cta) + " round " + std::to_string(k) + " element (" +
                   std::to_string(r) + "," + std::to_string(c) + ") wrong";
        }
    }
  return {};
}

const kp::Register reg_ring("cluster_multicast_ring_remote_release_8_rounds", &ring_case);

} // namespace
