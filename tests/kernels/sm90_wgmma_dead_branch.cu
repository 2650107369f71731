// Test candidate for gemm_n7168_k5120 on sm_90a: a correct SIMT GEMM whose kernel ALSO holds a
// complete wgmma path behind a runtime kernel argument that run() always passes as 0.
//
// Purpose: the static SASS check must report "present" (HGMMA is in the binary and the compiler
// cannot prove the branch dead) while the GPU evaluator must report "not executed". The SIMT
// path is the one from simt_gemm.cu (64x64 tile per 256-thread CTA, fp32 accumulation); the
// dormant path computes the same tile with two warpgroups of wgmma.m64n32k16 over
// 128B-swizzled shared tiles staged by ordinary loads. C = A·Bᵀ, A [M,5120], B [7168,5120],
// C [M,7168], bf16 row-major.
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

constexpr int kTcBlockK = 64;                  // one 128-B swizzle span of bf16
constexpr int kTcTileBytes = 64 * kTcBlockK * 2;  // 64 rows x 128 B
constexpr int kTcSmemBytes = 2 * kTcTileBytes + 1024;
static_assert(kK % kTcBlockK == 0, "K divides the tensor-core K block");
static_assert(kTcSmemBytes + kSmemBytes <= 48 * 1024, "static shared memory budget");

__device__ __forceinline__ uint32_t smem_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// K-major, 128B swizzle: LBO unused (1), SBO = 8 rows x 128 B, layout type 1 in bits 62-63.
__device__ __forceinline__ uint64_t sw128_desc(uint32_t addr) {
  return ((addr & 0x3FFFF) >> 4) | (uint64_t(1) << 16) | (uint64_t(1024 >> 4) << 32) |
         (uint64_t(1) << 62);
}

__device__ __forceinline__ void wgmma_m64n32k16(float (&d)[16], uint64_t desc_a,
                                                uint64_t desc_b) {
  asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %18, 0;\n"
               " wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16 "
               "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}, "
               "%16, %17, p, 1, 1, 0, 0;\n}\n"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]),
                 "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]),
                 "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15])
               : "l"(desc_a), "l"(desc_b), "r"(1));
}

__device__ __forceinline__ void fence_operands(float (&d)[16]) {
#pragma unroll
  for (int i = 0; i < 16; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

// Copies rows [r0, r0+64) x [k0, k0+64) of a [rows, kK] matrix into a 128B-swizzled tile
// (16-B chunk c of row r lands at chunk c ^ (r % 8)); rows >= rows_valid become zeros.
__device__ __forceinline__ void stage_sw128(uint8_t* tile, const __nv_bfloat16* src, int r0,
                                            int rows_valid, int k0) {
#pragma unroll
  for (int i = 0; i < 2; ++i) {
    const int idx = threadIdx.x + i * 256, r = idx / 8, c = idx % 8;
    const uint4 v = r0 + r < rows_valid
                        ? *reinterpret_cast<const uint4*>(src + int64_t(r0 + r) * kK + k0 + 8 * c)
                        : make_uint4(0, 0, 0, 0);
    *reinterpret_cast<uint4*>(tile + r * 128 + 16 * (c ^ (r % 8))) = v;
  }
}

// The same 64x64 C tile as the SIMT path, on wgmma: warpgroup wg (of 2) computes columns
// [32*wg, 32*wg+32) with m64n32k16; operands are staged by all 256 threads through the generic
// proxy, so fence.proxy.async precedes the barrier that releases them to wgmma.
__device__ __forceinline__ void wgmma_tile(const __nv_bfloat16* A, const __nv_bfloat16* B,
                                           __nv_bfloat16* C, int M, uint8_t* smem) {
  const int m0 = blockIdx.y * kBlockM, n0 = blockIdx.x * kBlockN;
  const int wg = threadIdx.x / 128, warp = (threadIdx.x / 32) % 4, lane = threadIdx.x % 32;
  float d[16] = {};
  for (int k0 = 0; k0 < kK; k0 += kTcBlockK) {
    stage_sw128(smem, A, m0, M, k0);
    stage_sw128(smem + kTcTileBytes, B, n0, kN, k0);
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    __syncthreads();
    const uint32_t a = smem_addr(smem), b = smem_addr(smem + kTcTileBytes) + wg * 32 * 128;
    fence_operands(d);
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
#pragma unroll
    for (int kk = 0; kk < kTcBlockK / 16; ++kk)
      wgmma_m64n32k16(d, sw128_desc(a + 32 * kk), sw128_desc(b + 32 * kk));
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
    asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
    fence_operands(d);
    __syncthreads();
  }
  const int row = m0 + 16 * warp + lane / 4;
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const int col = n0 + 32 * wg + 8 * i + 2 * (lane % 4);
    if (row < M)
      *reinterpret_cast<__nv_bfloat162*>(C + int64_t(row) * kN + col) =
          __floats2bfloat162_rn(d[4 * i], d[4 * i + 1]);
    if (row + 8 < M)
      *reinterpret_cast<__nv_bfloat162*>(C + int64_t(row + 8) * kN + col) =
          __floats2bfloat162_rn(d[4 * i + 2], d[4 * i + 3]);
  }
}

__device__ __forceinline__ uint8_t* align_1024(uint8_t* p) {
  return reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(p) + 1023) & ~uintptr_t(1023));
}

}  // namespace

__global__ void __launch_bounds__(kThreads)
    dead_branch_gemm_kernel(const __nv_bfloat16* A, const __nv_bfloat16* B,
                            __nv_bfloat16* C, int M, int use_tensor_cores) {
  if (use_tensor_cores != 0) {  // never true: run() passes 0
    __shared__ __align__(1024) uint8_t tc_smem[kTcSmemBytes];
    wgmma_tile(A, B, C, M, align_1024(tc_smem));
    return;
  }
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
  dead_branch_gemm_kernel<<<grid, kThreads, 0, stream>>>(A, B, C, int(M), 0);
}
