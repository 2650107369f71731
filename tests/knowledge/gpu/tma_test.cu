// TMA: the shared-memory image of a swizzled box equals the contract's swizzle function; a 3-D
// map lands K-blocks stacked as Bf16Tile says and stores back unchanged; out-of-bounds elements
// of a load read as zero while the full box bytes complete the barrier; out-of-bounds parts of
// a store are dropped and nothing outside the map is written; reduce-add adds; a non-tensor
// bulk copy round-trips; one-row boxes gathered to their rows' addresses make the same SW128
// tile as one box of those rows. Values are distinct 16-bit patterns, so any misplaced element
// shows.
#include "harness.cuh"
#include "knowledge/sm90a/ptx.cuh"

namespace {

using sm90::Bf16Tile;
using sm90::Major;
using sm90::Swizzle;

constexpr uint32_t kRows = 128;
constexpr uint32_t kCols = 256;
constexpr uint32_t kBoxRows = 64;
constexpr uint32_t kMaxBoxBytes = 32768;

uint16_t pattern(uint32_t r, uint32_t c) {
  return static_cast<uint16_t>(r * kCols + c);
}

// One thread loads `bytes` through `map` at (c0, c1[, c2]); everyone copies the raw smem out.
template <int kRank>
__global__ void __launch_bounds__(128, 1)
    tma_load_kernel(const __grid_constant__ CUtensorMap map,
                    const __grid_constant__ CUtensorMap store_map, uint32_t bytes, int c0, int c1,
                    uint4* out) {
  static_assert(kMaxBoxBytes <= 48 * 1024, "static shared-memory budget");
  __shared__ __align__(1024) uint4 tile[kMaxBoxBytes / 16];
  __shared__ __align__(8) uint64_t bar;
  const uint32_t b = sm90::smem_u32(&bar);
  if (threadIdx.x == 0) {
    sm90::mbar_init(b, 1);
    sm90::fence_mbarrier_init_release_cluster();
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    sm90::mbar_arrive_expect_tx(b, bytes);
    if constexpr (kRank == 2)
      sm90::tma_load_2d(sm90::smem_u32(tile), &map, b, c0, c1);
    else
      sm90::tma_load_3d(sm90::smem_u32(tile), &map, b, c0, c1, 0);
  }
  kp::wait_or_trap(b, 0);
  for (uint32_t i = threadIdx.x; i < bytes / 16; i += 128)
    out[i] = tile[i];
  if constexpr (kRank == 3) {
    __syncthreads();
    if (threadIdx.x == 0) {
      sm90::tma_store_3d(&store_map, sm90::smem_u32(tile), 0, 0, 0);
      sm90::bulk_commit_group();
      sm90::bulk_wait_group<0>();
    }
  }
}

CUtensorMapSwizzle tma_swizzle(Swizzle s) {
  switch (s) {
  case Swizzle::k128B:
    return CU_TENSOR_MAP_SWIZZLE_128B;
  case Swizzle::k64B:
    return CU_TENSOR_MAP_SWIZZLE_64B;
  case Swizzle::k32B:
    return CU_TENSOR_MAP_SWIZZLE_32B;
  case Swizzle::kNone:
    return CU_TENSOR_MAP_SWIZZLE_NONE;
  }
  return CU_TENSOR_MAP_SWIZZLE_NONE;
}

template <Swizzle S> std::string swizzled_box_case() {
  std::vector<uint16_t> host(kRows * kCols);
  for (uint32_t r = 0; r < kRows; ++r)
    for (uint32_t c = 0; c < kCols; ++c)
      host[r * kCols + c] = pattern(r, c);
  kp::DeviceBuffer<uint16_t> src(host.size());
  src.upload(host);
  const uint32_t width = S == Swizzle::kNone ? 32u : sm90::swizzle_span_bytes(S) / 2u;
  const uint32_t bytes = width * kBoxRows * 2;
  CUtensorMap map;
  KP_CU(sm90::make_tensor_map_2d(&map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, src.get(), kRows, kCols,
                                 kCols * 2, kBoxRows, width, tma_swizzle(S)));
  kp::DeviceBuffer<uint4> out(bytes / 16);
  const int c0 = 3 * static_cast<int>(width), c1 = 16;
  tma_load_kernel<2><<<1, 128>>>(map, map, bytes, c0, c1, out.get());
  if (std::string e = kp::sync_kernel("tma_load_kernel"); !e.empty())
    return e;
  const std::vector<uint4> got = out.download();
  const auto* smem = reinterpret_cast<const unsigned char*>(got.data());
  const Bf16Tile tile{S, Major::kK, kBoxRows, width};
  for (uint32_t r = 0; r < kBoxRows; ++r)
    for (uint32_t c = 0; c < width; ++c) {
      const uint32_t at = S == Swizzle::kNone ? (r * width + c) * 2 : tile.offset(r, c);
      uint16_t v;
      std::memcpy(&v, smem + at, 2);
      if (v != pattern(r + c1, c + c0))
        return "element (" + std::to_string(r) + "," + std::to_string(c) + ") not at byte " +
               std::to_string(at);
    }
  return {};
}

// A [64 x 256] K-major operand loaded as a 3-D box {64, 64, 4} = four 64-wide K-blocks.
std::string three_d_case() {
  constexpr uint32_t kRowsA = 64, kDepth = 256;
  std::vector<uint16_t> host(kRowsA * kDepth);
  for (uint32_t r = 0; r < kRowsA; ++r)
    for (uint32_t k = 0; k < kDepth; ++k)
      host[r * kDepth + k] = pattern(r, k);
  kp::DeviceBuffer<uint16_t> src(host.size()), back(host.size());
  src.upload(host);
  KP_CUDA(cudaMemset(back.get(), 0, host.size() * 2));
  const uint64_t dims[3] = {64, kRowsA, kDepth / 64};
  const uint64_t strides[2] = {kDepth * 2, 128};
  const uint32_t box[3] = {64, kRowsA, kDepth / 64};
  CUtensorMap map, store_map;
  KP_CU(sm90::make_tensor_map_3d(&map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, src.get(), dims, strides,
                                 box, CU_TENSOR_MAP_SWIZZLE_128B));
  KP_CU(sm90::make_tensor_map_3d(&store_map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, back.get(), dims,
                                 strides, box, CU_TENSOR_MAP_SWIZZLE_128B));
  const uint32_t bytes = kRowsA * kDepth * 2;
  kp::DeviceBuffer<uint4> out(bytes / 16);
  tma_load_kernel<3><<<1, 128>>>(map, store_map, bytes, 0, 0, out.get());
  if (std::string e = kp::sync_kernel("tma_load_kernel<3>"); !e.empty())
    return e;
  const std::vector<uint4> got = out.download();
  const auto* smem = reinterpret_cast<const unsigned char*>(got.data());
  const Bf16Tile tile{Swizzle::k128B, Major::kK, kRowsA, kDepth};
  for (uint32_t r = 0; r < kRowsA; ++r)
    for (uint32_t k = 0; k < kDepth; ++k) {
      uint16_t v;
      std::memcpy(&v, smem + tile.offset(r, k), 2);
      if (v != pattern(r, k))
        return "3-D box: element (" + std::to_string(r) + "," + std::to_string(k) + ") misplaced";
    }
  if (back.download() != host)
    return "3-D store did not write the loaded box back unchanged";
  return {};
}

constexpr uint32_t kMapRows = 50, kMapCols = 40; // the tensor the maps describe
constexpr uint32_t kAllocRows = 60, kPitch = 64; // the allocation around it (floats)
constexpr uint32_t kBox = 32;                    // 32 x 32 f32 boxes, 4096 B

float cell(uint32_t r, uint32_t c) {
  return static_cast<float>(r * 1000 + c + 1);
}

__global__ void __launch_bounds__(128, 1)
    oob_load_kernel(const __grid_constant__ CUtensorMap map, float* out) {
  __shared__ __align__(1024) float tiles[2][kBox * kBox];
  __shared__ __align__(8) uint64_t bar;
  const uint32_t b = sm90::smem_u32(&bar);
  if (threadIdx.x == 0) {
    sm90::prefetch_tensormap(&map);
    sm90::mbar_init(b, 1);
    sm90::fence_mbarrier_init_release_cluster();
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    sm90::tma_prefetch_2d(&map, 24, 40);
    sm90::mbar_arrive_expect_tx(b, 2 * kBox * kBox * 4);
    sm90::tma_load_2d(sm90::smem_u32(tiles[0]), &map, b, 24, 40);
    sm90::tma_load_2d(sm90::smem_u32(tiles[1]), &map, b, -8, -4);
  }
  kp::wait_or_trap(b, 0);
  for (uint32_t i = threadIdx.x; i < 2 * kBox * kBox; i += 128)
    out[i] = tiles[i / (kBox * kBox)][i % (kBox * kBox)];
}

std::string oob_load_case() {
  std::vector<float> host(kAllocRows * kPitch, -5.0f);
  for (uint32_t r = 0; r < kMapRows; ++r)
    for (uint32_t c = 0; c < kMapCols; ++c)
      host[r * kPitch + c] = cell(r, c);
  kp::DeviceBuffer<float> src(host.size()), out(2 * kBox * kBox);
  src.upload(host);
  CUtensorMap map;
  KP_CU(sm90::make_tensor_map_2d(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, src.get(), kMapRows,
                                 kMapCols, kPitch * 4, kBox, kBox, CU_TENSOR_MAP_SWIZZLE_NONE));
  oob_load_kernel<<<1, 128>>>(map, out.get());
  if (std::string e = kp::sync_kernel("oob_load_kernel"); !e.empty())
    return e;
  const std::vector<float> got = out.download();
  const int origin[2][2] = {{24, 40}, {-8, -4}};
  for (int t = 0; t < 2; ++t)
    for (int i = 0; i < static_cast<int>(kBox); ++i)
      for (int j = 0; j < static_cast<int>(kBox); ++j) {
        const int r = origin[t][1] + i, c = origin[t][0] + j;
        const bool inside =
            r >= 0 && c >= 0 && r < static_cast<int>(kMapRows) && c < static_cast<int>(kMapCols);
        const float want = inside ? cell(static_cast<uint32_t>(r), static_cast<uint32_t>(c)) : 0.0f;
        const float g = got[static_cast<size_t>(t) * kBox * kBox + static_cast<size_t>(i) * kBox +
                            static_cast<size_t>(j)];
        if (g != want)
          return "box " + std::to_string(t) + " (" + std::to_string(i) + "," + std::to_string(j) +
                 ") = " + std::to_string(g) + ", want " + std::to_string(want);
      }
  return {};
}

__global__ void __launch_bounds__(128, 1)
    store_reduce_kernel(const __grid_constant__ CUtensorMap map) {
  __shared__ __align__(1024) float tile[kBox * kBox];
  for (uint32_t i = threadIdx.x; i < kBox * kBox; i += 128)
    tile[i] = static_cast<float>(7000 + i);
  sm90::fence_proxy_async_shared_cta();
  __syncthreads();
  if (threadIdx.x == 0) {
    sm90::tma_store_2d(&map, sm90::smem_u32(tile), 24, 40);
    sm90::tma_reduce_add_2d(&map, sm90::smem_u32(tile), 0, 0);
    sm90::bulk_commit_group();
    sm90::bulk_wait_group_read<0>();
    sm90::bulk_wait_group<0>();
  }
}

std::string store_reduce_case() {
  std::vector<float> host(kAllocRows * kPitch, -1.0f);
  kp::DeviceBuffer<float> dst(host.size());
  dst.upload(host);
  CUtensorMap map;
  KP_CU(sm90::make_tensor_map_2d(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, dst.get(), kMapRows,
                                 kMapCols, kPitch * 4, kBox, kBox, CU_TENSOR_MAP_SWIZZLE_NONE));
  store_reduce_kernel<<<1, 128>>>(map);
  if (std::string e = kp::sync_kernel("store_reduce_kernel"); !e.empty())
    return e;
  const std::vector<float> got = dst.download();
  for (uint32_t r = 0; r < kAllocRows; ++r)
    for (uint32_t c = 0; c < kPitch; ++c) {
      const bool in_map = r < kMapRows && c < kMapCols;
      float want = -1.0f;
      if (in_map && r >= 40 && c >= 24)
        want = static_cast<float>(7000 + (r - 40) * kBox + (c - 24));
      if (in_map && r < kBox && c < kBox)
        want = -1.0f + static_cast<float>(7000 + r * kBox + c);
      if (got[r * kPitch + c] != want)
        return "dst(" + std::to_string(r) + "," + std::to_string(c) +
               ") = " + std::to_string(got[r * kPitch + c]) + ", want " + std::to_string(want);
    }
  return {};
}

constexpr uint32_t kBulkBytes = 4096;

__global__ void __launch_bounds__(128, 1) bulk_copy_kernel(const uint4* src, uint4* dst) {
  __shared__ __align__(128) uint4 buf[kBulkBytes / 16];
  __shared__ __align__(8) uint64_t bar;
  const uint32_t b = sm90::smem_u32(&bar);
  if (threadIdx.x == 0) {
    sm90::mbar_init(b, 1);
    sm90::fence_mbarrier_init_release_cluster();
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    sm90::mbar_arrive_expect_tx(b, kBulkBytes);
    sm90::bulk_copy_g2s(sm90::smem_u32(buf), src, kBulkBytes, b);
  }
  kp::wait_or_trap(b, 0);
  if (threadIdx.x == 0) {
    sm90::bulk_copy_s2g(dst, sm90::smem_u32(buf), kBulkBytes);
    sm90::bulk_commit_group();
    sm90::bulk_wait_group<0>();
  }
}

std::string bulk_copy_case() {
  std::vector<uint4> host(kBulkBytes / 16);
  for (uint32_t i = 0; i < host.size(); ++i)
    host[i] = make_uint4(i, ~i, i * 7u, i ^ 0x5a5a5a5au);
  kp::DeviceBuffer<uint4> src(host.size()), dst(host.size());
  src.upload(host);
  KP_CUDA(cudaMemset(dst.get(), 0, kBulkBytes));
  bulk_copy_kernel<<<1, 128>>>(src.get(), dst.get());
  if (std::string e = kp::sync_kernel("bulk_copy_kernel"); !e.empty())
    return e;
  const std::vector<uint4> got = dst.download();
  return std::memcmp(got.data(), host.data(), kBulkBytes) == 0 ? std::string()
                                                               : "bulk copy round trip differs";
}

// Row gather (examples/sm90a/gqa_paged_*: K/V rows from a page-size-1 cache): 128 threads each
// load one row of one head as two {64, 1, 1} boxes of a 3-D SW128 map {128, heads, pages}, to
// row * 128 B of the two 16-KiB halves of a tile; the tile must equal what one 128-row box of
// the same rows would make (Bf16Tile's K-major SW128 layout), because TMA swizzles by the
// destination's shared address, not by the row within the box.
constexpr uint32_t kPages = 40, kHeads = 8, kDim = 128, kGatherRows = 128, kGatherHead = 5;

__host__ __device__ uint32_t gathered_page(uint32_t row) {
  return (row * 7u + 3u) % kPages; // pages out of order, some twice
}

uint16_t cache_value(uint32_t page, uint32_t head, uint32_t d) {
  return static_cast<uint16_t>((page * kHeads + head) * kDim + d);
}

__global__ void __launch_bounds__(kGatherRows, 1)
    tma_row_gather_kernel(const __grid_constant__ CUtensorMap map, uint4* out) {
  constexpr uint32_t kBytes = kGatherRows * kDim * 2, kHalf = kBytes / 2;
  __shared__ __align__(1024) uint4 tile[kBytes / 16];
  __shared__ __align__(8) uint64_t bar;
  const uint32_t b = sm90::smem_u32(&bar), base = sm90::smem_u32(tile);
  if (threadIdx.x == 0) {
    sm90::mbar_init(b, 1);
    sm90::fence_mbarrier_init_release_cluster();
    sm90::mbar_arrive_expect_tx(b, kBytes);
  }
  __syncthreads();
  const uint32_t row = threadIdx.x;
  const int page = static_cast<int>(gathered_page(row));
  sm90::tma_load_3d(base + row * 128, &map, b, 0, kGatherHead, page);
  sm90::tma_load_3d(base + kHalf + row * 128, &map, b, 64, kGatherHead, page);
  kp::wait_or_trap(b, 0);
  for (uint32_t i = threadIdx.x; i < kBytes / 16; i += kGatherRows)
    out[i] = tile[i];
}

std::string row_gather_case() {
  std::vector<uint16_t> host(kPages * kHeads * kDim);
  for (uint32_t p = 0; p < kPages; ++p)
    for (uint32_t h = 0; h < kHeads; ++h)
      for (uint32_t d = 0; d < kDim; ++d)
        host[(p * kHeads + h) * kDim + d] = cache_value(p, h, d);
  kp::DeviceBuffer<uint16_t> src(host.size());
  src.upload(host);
  const uint64_t dims[3] = {kDim, kHeads, kPages};
  const uint64_t strides[2] = {kDim * 2, kHeads * kDim * 2};
  const uint32_t box[3] = {64, 1, 1};
  CUtensorMap map;
  KP_CU(sm90::make_tensor_map_3d(&map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, src.get(), dims, strides,
                                 box, CU_TENSOR_MAP_SWIZZLE_128B));
  const uint32_t bytes = kGatherRows * kDim * 2;
  kp::DeviceBuffer<uint4> out(bytes / 16);
  tma_row_gather_kernel<<<1, kGatherRows>>>(map, out.get());
  if (std::string e = kp::sync_kernel("tma_row_gather_kernel"); !e.empty())
    return e;
  const std::vector<uint4> got = out.download();
  const auto* smem = reinterpret_cast<const unsigned char*>(got.data());
  const Bf16Tile tile{Swizzle::k128B, Major::kK, kGatherRows, kDim};
  for (uint32_t r = 0; r < kGatherRows; ++r)
    for (uint32_t d = 0; d < kDim; ++d) {
      uint16_t v;
      std::memcpy(&v, smem + tile.offset(r, d), 2);
      if (v != cache_value(gathered_page(r), kGatherHead, d))
        return "row gather: element (" + std::to_string(r) + "," + std::to_string(d) +
               ") is not where a 128-row box would put it";
    }
  return {};
}

const kp::Register reg_none("tma_box_layout_none", &swizzled_box_case<Swizzle::kNone>);
const kp::Register reg_32("tma_box_layout_sw32", &swizzled_box_case<Swizzle::k32B>);
const kp::Register reg_64("tma_box_layout_sw64", &swizzled_box_case<Swizzle::k64B>);
const kp::Register reg_128("tma_box_layout_sw128", &swizzled_box_case<Swizzle::k128B>);
const kp::Register reg_3d("tma_3d_kblocks_sw128_load_store", &three_d_case);
const kp::Register reg_oob("tma_oob_load_zero_fill_full_tx", &oob_load_case);
const kp::Register reg_store("tma_store_oob_dropped_reduce_add", &store_reduce_case);
const kp::Register reg_bulk("bulk_copy_roundtrip", &bulk_copy_case);
const kp::Register reg_gather("tma_row_gather_sw128_matches_box", &row_gather_case);
} // namespace
