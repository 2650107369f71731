// Test candidate for gemm_n7168_k5120: a plain SIMT tiled GEMM, no tensor cores (negative
// control for the static check on both sm_90a and sm_100a).
//
// C[M,7168] = A[M,5120] · B[7168,5120]ᵀ, bf16 row-major, fp32 accumulation. A 256-thread CTA
// computes a 64x64 tile of C; each K step of 16 stages A and B tiles in shared memory as fp32,
// stored K-major (tile[k][row]) so a thread reads its 4 rows and 4 columns contiguously. Thread
// (ty, tx) = (tid/16, tid%16) owns the 4x4 block at rows 4*ty.., columns 4*tx... Rows past M
// are read as zero and never stored; N and K divide the tile sizes.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace {

constexpr int kN = 7168;
constexpr int kK = 5120;
constexpr int kBlockM = 64;
constexpr int kBlockN = 64;
constexpr int kBlockK = 16;
constexpr int kThreads = 256;
constexpr int kSmemBytes = 2 * kBlockK * (kBlockM + 4) * 4;

static_assert(kN % kBlockN == 0 && kK % kBlockK == 0, "tile divisibility");
static_assert(kBlockM * kBlockK == 4 * kThreads, "each thread stages 4 elements per operand");
static_assert((kBlockM / 4) * (kBlockN / 4) == kThreads, "one 4x4 block per thread");
static_assert(kSmemBytes <= 48 * 1024, "static shared memory budget");

}  // namespace

__global__ void __launch_bounds__(kThreads)
    simt_gemm_kernel(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int M) {
  __shared__ float tile_a[kBlockK][kBlockM + 4];
  __shared__ float tile_b[kBlockK][kBlockN + 4];
  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  const int m0 = blockIdx.y * kBlockM, n0 = blockIdx.x * kBlockN;
  float acc[4][4] = {};
  for (int k0 = 0; k0 < kK; k0 += kBlockK) {
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const int idx = threadIdx.x + i * kThreads, r = idx / kBlockK, c = idx % kBlockK;
      tile_a[c][r] = m0 + r < M ? __bfloat162float(A[int64_t(m0 + r) * kK + k0 + c]) : 0.0f;
      tile_b[c][r] = __bfloat162float(B[int64_t(n0 + r) * kK + k0 + c]);
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < kBlockK; ++k) {
      float a[4], b[4];
#pragma unroll
      for (int i = 0; i < 4; ++i) a[i] = tile_a[k][4 * ty + i], b[i] = tile_b[k][4 * tx + i];
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const int row = m0 + 4 * ty + i;
    if (row >= M) continue;
#pragma unroll
    for (int j = 0; j < 4; ++j)
      C[int64_t(row) * kN + n0 + 4 * tx + j] = __float2bfloat16_rn(acc[i][j]);
  }
}

void run(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int64_t M,
         cudaStream_t stream) {
  if (M <= 0) return;
  const dim3 grid(kN / kBlockN, unsigned((M + kBlockM - 1) / kBlockM));
  simt_gemm_kernel<<<grid, kThreads, 0, stream>>>(A, B, C, int(M));
}
