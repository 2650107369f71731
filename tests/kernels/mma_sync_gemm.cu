// Test candidate for gemm_n7168_k5120 using legacy warp-level tensor cores:
// mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 (SASS HMMA). It must read as "absent"
// for the Hopper/Blackwell target check while showing HMMA in the legacy family.
//
// C[M,7168] = A[M,5120] · B[7168,5120]ᵀ, bf16 row-major, fp32 accumulation. A 128-thread CTA
// computes a 64x64 tile; warp w owns the 32x32 sub-tile at rows 32*(w/2), columns 32*(w%2), as
// 2 (M16) x 4 (N8) mma tiles. Each K block of 32 is staged in shared memory as bf16 rows padded
// to 40 elements. Fragments (g = lane/4, q = lane%4): A a0..a3 = rows g, g+8 at k 2q..2q+1 and
// 2q+8..; B ("col", i.e. B stored [n][k]) b0, b1 = row n = g at k 2q.. and 2q+8..; accumulator
// c0,c1 = (g, 2q..2q+1), c2,c3 = (g+8, 2q..). Rows past M load zeros and are not stored.
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace {

constexpr int kN = 7168;
constexpr int kK = 5120;
constexpr int kBlockM = 64;
constexpr int kBlockN = 64;
constexpr int kBlockK = 32;
constexpr int kPitch = kBlockK + 8;  // bf16 elements per staged row (80 B, 16-B aligned)
constexpr int kThreads = 128;
constexpr int kSmemBytes = (kBlockM + kBlockN) * kPitch * 2;

static_assert(kN % kBlockN == 0 && kK % kBlockK == 0, "tile divisibility");
static_assert((kPitch * 2) % 16 == 0, "staged rows keep 16-B alignment for uint4 stores");
static_assert(kBlockM * kBlockK / 8 == 2 * kThreads, "two 16-B chunks per thread per operand");
static_assert(kSmemBytes <= 48 * 1024, "static shared memory budget");

__device__ __forceinline__ uint32_t ld_pair(const __nv_bfloat16* p) {
  return *reinterpret_cast<const uint32_t*>(p);
}

__device__ __forceinline__ void mma_bf16(float (&c)[4], const uint32_t (&a)[4], uint32_t b0,
                                         uint32_t b1) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
               "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};"
               : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

}  // namespace

__global__ void __launch_bounds__(kThreads)
    mma_sync_gemm_kernel(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C,
                         int M) {
  __shared__ __align__(16) __nv_bfloat16 tile_a[kBlockM][kPitch];
  __shared__ __align__(16) __nv_bfloat16 tile_b[kBlockN][kPitch];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, q = lane % 4;
  const int m0 = blockIdx.y * kBlockM, n0 = blockIdx.x * kBlockN;
  const int wm = 32 * (warp / 2), wn = 32 * (warp % 2);
  float acc[2][4][4] = {};
  for (int k0 = 0; k0 < kK; k0 += kBlockK) {
#pragma unroll
    for (int i = 0; i < 2; ++i) {
      const int idx = threadIdx.x + i * kThreads, r = idx / 4, c = 8 * (idx % 4);
      const uint4 zero = make_uint4(0, 0, 0, 0);
      *reinterpret_cast<uint4*>(&tile_a[r][c]) =
          m0 + r < M ? *reinterpret_cast<const uint4*>(A + int64_t(m0 + r) * kK + k0 + c) : zero;
      *reinterpret_cast<uint4*>(&tile_b[r][c]) =
          *reinterpret_cast<const uint4*>(B + int64_t(n0 + r) * kK + k0 + c);
    }
    __syncthreads();
#pragma unroll
    for (int ks = 0; ks < kBlockK; ks += 16) {
      uint32_t a[2][4];
#pragma unroll
      for (int mi = 0; mi < 2; ++mi) {
        const int r = wm + 16 * mi + g;
        a[mi][0] = ld_pair(&tile_a[r][ks + 2 * q]);
        a[mi][1] = ld_pair(&tile_a[r + 8][ks + 2 * q]);
        a[mi][2] = ld_pair(&tile_a[r][ks + 2 * q + 8]);
        a[mi][3] = ld_pair(&tile_a[r + 8][ks + 2 * q + 8]);
      }
#pragma unroll
      for (int ni = 0; ni < 4; ++ni) {
        const int n = wn + 8 * ni + g;
        const uint32_t b0 = ld_pair(&tile_b[n][ks + 2 * q]);
        const uint32_t b1 = ld_pair(&tile_b[n][ks + 2 * q + 8]);
#pragma unroll
        for (int mi = 0; mi < 2; ++mi) mma_bf16(acc[mi][ni], a[mi], b0, b1);
      }
    }
    __syncthreads();
  }
#pragma unroll
  for (int mi = 0; mi < 2; ++mi)
#pragma unroll
    for (int ni = 0; ni < 4; ++ni) {
      const int row = m0 + wm + 16 * mi + g, col = n0 + wn + 8 * ni + 2 * q;
      if (row < M)
        *reinterpret_cast<__nv_bfloat162*>(C + int64_t(row) * kN + col) =
            __floats2bfloat162_rn(acc[mi][ni][0], acc[mi][ni][1]);
      if (row + 8 < M)
        *reinterpret_cast<__nv_bfloat162*>(C + int64_t(row + 8) * kN + col) =
            __floats2bfloat162_rn(acc[mi][ni][2], acc[mi][ni][3]);
    }
}

void run(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int64_t M,
         cudaStream_t stream) {
  if (M <= 0) return;
  const dim3 grid(kN / kBlockN, unsigned((M + kBlockM - 1) / kBlockM));
  mma_sync_gemm_kernel<<<grid, kThreads, 0, stream>>>(A, B, C, int(M));
}
