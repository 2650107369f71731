// Naive GEMM: C[M,N] = A[M,K] · B[N,K]ᵀ, bf16 in and out, fp32 accumulation, all row-major.
//
// The independent check of the cuBLASLt reference: one thread per output element, SIMT fp32
// FMAs over K staged through 16×16 shared-memory tiles (only so the full-size problem finishes
// in well under a second), K summed in natural order, one rounding to bf16 at the end. No
// tensor cores, no split-K, nothing shared with cuBLASLt's algorithm.
#include "reference/naive_kernels.hpp"

#include <cstdint>
#include <cuda_bf16.h>

namespace ptxbench::reference {
namespace {

constexpr int kTile = 16;
static_assert(2 * kTile * (kTile + 1) * sizeof(float) <= 48 * 1024, "static shared memory");

__global__ void naive_gemm_kernel(const __nv_bfloat16* a, const __nv_bfloat16* b, __nv_bfloat16* c,
                                  std::int64_t m, std::int64_t n, std::int64_t k) {
  __shared__ float a_tile[kTile][kTile + 1]; // [m_local][k_local]
  __shared__ float b_tile[kTile][kTile + 1]; // [n_local][k_local]
  const int tx = static_cast<int>(threadIdx.x);
  const int ty = static_cast<int>(threadIdx.y);
  const std::int64_t row = static_cast<std::int64_t>(blockIdx.y) * kTile + ty;
  const std::int64_t col = static_cast<std::int64_t>(blockIdx.x) * kTile + tx;
  const std::int64_t b_row = static_cast<std::int64_t>(blockIdx.x) * kTile + ty;
  float acc = 0.0f;
  for (std::int64_t k0 = 0; k0 < k; k0 += kTile) {
    const std::int64_t kk = k0 + tx;
    a_tile[ty][tx] = row < m && kk < k ? __bfloat162float(a[row * k + kk]) : 0.0f;
    b_tile[ty][tx] = b_row < n && kk < k ? __bfloat162float(b[b_row * k + kk]) : 0.0f;
    __syncthreads();
    for (int i = 0; i < kTile; ++i)
      acc = fmaf(a_tile[ty][i], b_tile[tx][i], acc);
    __syncthreads();
  }
  if (row < m && col < n)
    c[row * n + col] = __float2bfloat16(acc);
}

} // namespace

cudaError_t launch_naive_gemm(const GemmShape& shape, const void* a, const void* b, void* c,
                              cudaStream_t stream) {
  const dim3 block(kTile, kTile);
  const dim3 grid(static_cast<unsigned>((shape.n + kTile - 1) / kTile),
                  static_cast<unsigned>((shape.m + kTile - 1) / kTile));
  naive_gemm_kernel<<<grid, block, 0, stream>>>(
      static_cast<const __nv_bfloat16*>(a), static_cast<const __nv_bfloat16*>(b),
      static_cast<__nv_bfloat16*>(c), shape.m, shape.n, shape.k);
  return cudaGetLastError();
}

namespace {

// A hash of the index (splitmix64's finaliser) as a bf16 in [-1, 1): inputs whose bits vary as
// real data's do, so the autotuning's timings see the power draw of real operands, not of zeros.
__global__ void fill_bf16_kernel(__nv_bfloat16* data, std::int64_t count, std::uint64_t seed) {
  const std::int64_t i = blockIdx.x * std::int64_t{blockDim.x} + threadIdx.x;
  if (i >= count)
    return;
  std::uint64_t x = seed + static_cast<std::uint64_t>(i) * 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  x ^= x >> 31;
  data[i] = __float2bfloat16(static_cast<float>(x >> 40) / static_cast<float>(1 << 23) - 1.0f);
}

} // namespace

cudaError_t launch_fill_bf16(void* data, std::int64_t count, std::uint64_t seed,
                             cudaStream_t stream) {
  constexpr unsigned kThreads = 256;
  const auto blocks = static_cast<unsigned>((count + kThreads - 1) / kThreads);
  if (blocks > 0)
    fill_bf16_kernel<<<blocks, kThreads, 0, stream>>>(static_cast<__nv_bfloat16*>(data), count,
                                                      seed);
  return cudaGetLastError();
}

} // namespace ptxbench::reference
