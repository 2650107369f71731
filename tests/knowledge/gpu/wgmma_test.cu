// wgmma m64nNk16 bf16 -> f32 against a host GEMM, for every swizzle mode and both major-ness
// cases, SS and RS forms, scale-d and imm-scale-a.
//
// The host writes A (64 x K) and B (K x N) into byte images laid out by sm90::Bf16Tile (the
// contract); the kernel copies the images into shared memory with ordinary stores, fences them
// into the async proxy and runs K/16 wgmmas whose descriptors come from the same Bf16Tile. The
// accumulators start as NaN, so the first step proves scale-d = 0 overwrites D. Every thread
// writes its accumulators to global memory at the (row, col) the documented fragment layout
// gives, so one exact comparison checks layouts, descriptors and the fragment map at once.
// Inputs are small integers: every product and sum is exact in f32.
#include "harness.cuh"
#include "knowledge/sm90a/ptx.cuh"

#include <cmath>

namespace {

using sm90::Bf16Tile;
using sm90::Major;
using sm90::Swizzle;

enum class AFrom { kSmem, kRegs };

// Negative controls: descriptors edited away from the contract. kSwapStrides must break the
// product (wrong values or a fault: so the tests tell LBO from SBO); kJunkLbo (LBO = max field
// value) must not matter for swizzled K-major operands, whose LBO the hardware ignores.
enum class DescEdit { kAsContract, kSwapStrides, kJunkLbo };

template <DescEdit E>
__host__ __device__ constexpr uint64_t edited_desc(const Bf16Tile& t, uint32_t addr,
                                                   uint32_t step) {
  if constexpr (E == DescEdit::kSwapStrides)
    return sm90::make_smem_desc(addr + t.k_step_offset(step), t.sbo(), t.lbo(), t.swizzle);
  else if constexpr (E == DescEdit::kJunkLbo)
    return sm90::make_smem_desc(addr + t.k_step_offset(step), 0x3FFFu << 4, t.sbo(), t.swizzle);
  else
    return t.desc(addr, step);
}

constexpr uint32_t kM = 64;
constexpr uint32_t kK = 128;

template <int N> __host__ __device__ constexpr uint32_t smem_bytes() {
  return kM * kK * 2 + static_cast<uint32_t>(N) * kK * 2;
}

__device__ uint32_t pack_bf16(float lo, float hi) {
  const __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<const uint32_t*>(&v);
}

template <int N, Swizzle S, Major MA, Major MB, AFrom AF, int kScaleA, DescEdit E>
__global__ void __launch_bounds__(128, 1)
    wgmma_tile_kernel(const uint4* a_img, const uint4* b_img, const float* a_rows, float* out) {
  static_assert(N % 16 == 0 && kK % 16 == 0 && kM == 64, "m64nNk16 tiles");
  static_assert(smem_bytes<N>() <= 227u * 1024u, "shared-memory budget");
  static_assert((kM * kK * 2) % 1024 == 0, "B tile must start on the 1024-B swizzle period");
  extern __shared__ __align__(1024) unsigned char smem[];
  constexpr Bf16Tile a_tile{S, MA, kM, kK};
  constexpr Bf16Tile b_tile{S, MB, N, kK};
  const uint32_t a_addr = sm90::smem_u32(smem);
  const uint32_t b_addr = a_addr + a_tile.bytes();
  auto* words = reinterpret_cast<uint4*>(smem);
  for (uint32_t i = threadIdx.x; i < a_tile.bytes() / 16; i += 128)
    words[i] = a_img[i];
  for (uint32_t i = threadIdx.x; i < b_tile.bytes() / 16; i += 128)
    words[a_tile.bytes() / 16 + i] = b_img[i];
  sm90::fence_proxy_async_shared_cta();
  __syncthreads();

  const uint32_t w = threadIdx.x / 32, g = (threadIdx.x % 32) / 4, q = threadIdx.x % 4;
  const uint32_t r0 = 16 * w + g;
  uint32_t a_frag[kK / 16][4];
#pragma unroll
  for (uint32_t s = 0; s < kK / 16; ++s) {
    const uint32_t k0 = 16 * s + 2 * q;
    a_frag[s][0] = pack_bf16(a_rows[r0 * kK + k0], a_rows[r0 * kK + k0 + 1]);
    a_frag[s][1] = pack_bf16(a_rows[(r0 + 8) * kK + k0], a_rows[(r0 + 8) * kK + k0 + 1]);
    a_frag[s][2] = pack_bf16(a_rows[r0 * kK + k0 + 8], a_rows[r0 * kK + k0 + 9]);
    a_frag[s][3] = pack_bf16(a_rows[(r0 + 8) * kK + k0 + 8], a_rows[(r0 + 8) * kK + k0 + 9]);
  }

  float d[N / 2];
#pragma unroll
  for (int i = 0; i < N / 2; ++i)
    d[i] = __int_as_float(0x7fc00000);
  sm90::wgmma_fence();
#pragma unroll
  for (uint32_t s = 0; s < kK / 16; ++s) {
    const sm90::ScaleD sd = s == 0 ? sm90::ScaleD::kZero : sm90::ScaleD::kAccumulate;
    if constexpr (AF == AFrom::kRegs)
      sm90::wgmma_bf16_rs<N, MB, kScaleA>(d, a_frag[s], edited_desc<E>(b_tile, b_addr, s), sd);
    else
      sm90::wgmma_bf16_ss<N, MA, MB, kScaleA>(d, edited_desc<E>(a_tile, a_addr, s),
                                              edited_desc<E>(b_tile, b_addr, s), sd);
  }
  sm90::wgmma_commit_group();
  sm90::wgmma_wait_group<0>();
  sm90::wgmma_fence_operand(d);
#pragma unroll
  for (int i = 0; i < N / 8; ++i) {
    out[r0 * N + 8 * i + 2 * q] = d[4 * i + 0];
    out[r0 * N + 8 * i + 2 * q + 1] = d[4 * i + 1];
    out[(r0 + 8) * N + 8 * i + 2 * q] = d[4 * i + 2];
    out[(r0 + 8) * N + 8 * i + 2 * q + 1] = d[4 * i + 3];
  }
}

// Byte image of a (mn x k) operand whose element (i, kk) is value(i, kk).
template <typename F> std::vector<uint4> tile_image(const Bf16Tile& tile, F value) {
  std::vector<uint4> img(tile.bytes() / 16);
  auto* bytes = reinterpret_cast<unsigned char*>(img.data());
  for (uint32_t i = 0; i < tile.mn; ++i)
    for (uint32_t kk = 0; kk < tile.k; ++kk) {
      const uint16_t bits = kp::bf16_bits(value(i, kk));
      std::memcpy(bytes + tile.offset(i, kk), &bits, 2);
    }
  return img;
}

template <int N, Swizzle S, Major MA, Major MB, AFrom AF, int kScaleA,
          DescEdit E = DescEdit::kAsContract>
std::string wgmma_case() {
  const std::vector<float> a = kp::small_ints(kM * kK, 11u + N, 3); // A[m][k], row-major
  const std::vector<float> b = kp::small_ints(kK * N, 29u + N, 3);  // B[k][n], row-major
  const Bf16Tile a_tile{S, MA, kM, kK};
  const Bf16Tile b_tile{S, MB, N, kK};
  kp::DeviceBuffer<uint4> a_img(a_tile.bytes() / 16), b_img(b_tile.bytes() / 16);
  kp::DeviceBuffer<float> a_rows(a.size()), out(kM * N);
  a_img.upload(tile_image(a_tile, [&](uint32_t m, uint32_t k) { return a[m * kK + k]; }));
  b_img.upload(tile_image(b_tile, [&](uint32_t n, uint32_t k) { return b[k * N + n]; }));
  a_rows.upload(a);
  auto kernel = wgmma_tile_kernel<N, S, MA, MB, AF, kScaleA, E>;
  KP_CUDA(
      cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_bytes<N>()));
  kernel<<<1, 128, smem_bytes<N>()>>>(a_img.get(), b_img.get(), a_rows.get(), out.get());
  if (std::string e = kp::sync_kernel("wgmma_tile_kernel"); !e.empty())
    return E == DescEdit::kSwapStrides ? std::string() : e; // a fault also shows the edit broke it
  const std::vector<float> got = out.download();
  int bad = 0;
  std::string first;
  for (uint32_t m = 0; m < kM; ++m)
    for (int n = 0; n < N; ++n) {
      float want = 0;
      for (uint32_t k = 0; k < kK; ++k)
        want += a[m * kK + k] * b[k * N + n];
      want *= static_cast<float>(kScaleA);
      const float g = got[m * N + n];
      if (!(g == want) && bad++ == 0)
        first = "D(" + std::to_string(m) + "," + std::to_string(n) + ") = " + std::to_string(g) +
                ", want " + std::to_string(want);
    }
  if constexpr (E == DescEdit::kSwapStrides)
    return bad > 0
               ? std::string()
               : "swapping LBO and SBO did not change the product: the test cannot tell them apart";
  return bad == 0 ? std::string() : std::to_string(bad) + " wrong elements; first " + first;
}

#define KP_WGMMA(name, N, S, MA, MB, AF, SA)                                                       \
  const kp::Register reg_##name("wgmma_" #name,                                                    \
                                &wgmma_case<N, Swizzle::S, Major::MA, Major::MB, AFrom::AF, SA>)

KP_WGMMA(ss_none_aK_bK_n128, 128, kNone, kK, kK, kSmem, 1);
KP_WGMMA(ss_none_aK_bMN_n128, 128, kNone, kK, kMN, kSmem, 1);
KP_WGMMA(ss_sw32_aK_bK_n128, 128, k32B, kK, kK, kSmem, 1);
KP_WGMMA(ss_sw32_aK_bMN_n128, 128, k32B, kK, kMN, kSmem, 1);
KP_WGMMA(ss_sw64_aK_bK_n128, 128, k64B, kK, kK, kSmem, 1);
KP_WGMMA(ss_sw64_aK_bMN_n128, 128, k64B, kK, kMN, kSmem, 1);
KP_WGMMA(ss_sw128_aK_bK_n128, 128, k128B, kK, kK, kSmem, 1);
KP_WGMMA(ss_sw128_aK_bMN_n128, 128, k128B, kK, kMN, kSmem, 1);
KP_WGMMA(ss_sw128_aK_bK_n64, 64, k128B, kK, kK, kSmem, 1);
KP_WGMMA(ss_sw128_aK_bMN_n64, 64, k128B, kK, kMN, kSmem, 1);
KP_WGMMA(ss_sw128_aK_bK_n256, 256, k128B, kK, kK, kSmem, 1);
KP_WGMMA(ss_sw128_aK_bMN_n256, 256, k128B, kK, kMN, kSmem, 1);
KP_WGMMA(ss_sw64_aK_bMN_n256, 256, k64B, kK, kMN, kSmem, 1);
KP_WGMMA(ss_none_aK_bK_n256, 256, kNone, kK, kK, kSmem, 1);
KP_WGMMA(ss_none_aMN_bMN_n64, 64, kNone, kMN, kMN, kSmem, 1);
KP_WGMMA(ss_sw32_aMN_bK_n64, 64, k32B, kMN, kK, kSmem, 1);
KP_WGMMA(ss_sw64_aMN_bMN_n128, 128, k64B, kMN, kMN, kSmem, 1);
KP_WGMMA(ss_sw128_aMN_bMN_n128, 128, k128B, kMN, kMN, kSmem, 1);
KP_WGMMA(ss_sw128_aK_bK_n32, 32, k128B, kK, kK, kSmem, 1);
KP_WGMMA(ss_sw128_aK_bK_n192, 192, k128B, kK, kK, kSmem, 1);
KP_WGMMA(ss_sw128_aK_bK_n128_negA, 128, k128B, kK, kK, kSmem, -1);
KP_WGMMA(rs_sw128_bK_n64, 64, k128B, kK, kK, kRegs, 1);
KP_WGMMA(rs_sw128_bMN_n256, 256, k128B, kK, kMN, kRegs, 1);
KP_WGMMA(rs_none_bK_n128, 128, kNone, kK, kK, kRegs, 1);
KP_WGMMA(rs_sw32_bMN_n128, 128, k32B, kK, kMN, kRegs, 1);

#define KP_WGMMA_EDIT(name, N, S, MA, MB, E)                                                       \
  const kp::Register reg_##name(                                                                   \
      "wgmma_" #name,                                                                              \
      &wgmma_case<N, Swizzle::S, Major::MA, Major::MB, AFrom::kSmem, 1, DescEdit::E>)

KP_WGMMA_EDIT(control_swapped_strides_fail_none_aK_bK, 128, kNone, kK, kK, kSwapStrides);
KP_WGMMA_EDIT(control_swapped_strides_fail_none_aMN_bMN, 128, kNone, kMN, kMN, kSwapStrides);
KP_WGMMA_EDIT(control_swapped_strides_fail_sw128_aMN_bMN, 256, k128B, kMN, kMN, kSwapStrides);
KP_WGMMA_EDIT(control_swapped_strides_fail_sw32_aK_bMN, 128, k32B, kK, kMN, kSwapStrides);
KP_WGMMA_EDIT(control_junk_lbo_ignored_sw128_aK_bK, 128, k128B, kK, kK, kJunkLbo);
KP_WGMMA_EDIT(control_junk_lbo_ignored_sw64_aK_bK, 128, k64B, kK, kK, kJunkLbo);
KP_WGMMA_EDIT(control_junk_lbo_ignored_sw32_aK_bK, 256, k32B, kK, kK, kJunkLbo);

} // namespace
