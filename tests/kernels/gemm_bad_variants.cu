// Deliberately wrong or misbehaving candidates for gemm_n7168_k5120 (C = A·Bᵀ, bf16), used by
// tests/unit/exec to prove each evaluator invariant. The test prepends
// `#define PTXBENCH_VARIANT <n>` to pick one; with no define this is a correct SIMT GEMM.
//   1 transpose      reads B as [K, N] instead of [N, K]                 → INCORRECT_NUMERICAL
//   2 no_write       launches nothing                                    → INCORRECT_NUMERICAL
//   3 first_set      computes once, then replays a cached C             → INCORRECT_NUMERICAL
//   4 illegal        writes through a wild pointer                       → RUNTIME_ERROR
//   5 trap           __trap()                                            → RUNTIME_ERROR
//   6 hang           spins forever                                       → TIMEOUT
//   7 exit           exit(0) inside run                                  → RUNTIME_ERROR
//   8 side_stream    computes on its own stream, synchronised in run    → PASSED (time charged)
//   9 late_work      computes on its own stream, returns at once         → RUNTIME_ERROR (timing)
//  10 mutate_input   computes correctly, then overwrites A[0]            → INCORRECT_NUMERICAL
//  11 oob_tail       only writes one element past the end of C          → RUNTIME_ERROR under
//                    --sanitize, memcheck naming the line (no GEMM: memcheck stays fast);
//                    without it, whatever the memory after C allows
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstdlib>

#ifndef PTXBENCH_VARIANT
#define PTXBENCH_VARIANT 0
#endif

namespace {

constexpr int kN = 7168;
constexpr int kK = 5120;
constexpr int kTile = 64;
constexpr int kStep = 16;
constexpr int kThreads = 256;
static_assert(kN % kTile == 0 && kK % kStep == 0, "tile divisibility");
static_assert(kTile * kStep == 4 * kThreads, "each thread stages 4 elements per operand");

// 64x64 tile of C per CTA; thread (ty, tx) owns rows 4ty.. and columns 4tx.. of the tile.
// With `b_is_kn` the B operand is indexed as [K, N] (the transpose bug).
__global__ void __launch_bounds__(kThreads)
    tiled_gemm(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int M,
               bool b_is_kn) {
  __shared__ float a_tile[kStep][kTile + 4];
  __shared__ float b_tile[kStep][kTile + 4];
  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  const int m0 = blockIdx.y * kTile, n0 = blockIdx.x * kTile;
  float acc[4][4] = {};
  for (int k0 = 0; k0 < kK; k0 += kStep) {
    for (int i = 0; i < 4; ++i) {
      const int idx = threadIdx.x + i * kThreads, row = idx / kStep, k = idx % kStep;
      a_tile[k][row] = m0 + row < M ? __bfloat162float(A[int64_t(m0 + row) * kK + k0 + k]) : 0.f;
      const int64_t b_index = b_is_kn ? int64_t(k0 + k) * kN + n0 + row
                                      : int64_t(n0 + row) * kK + k0 + k;
      b_tile[k][row] = __bfloat162float(B[b_index]); // in bounds either way: K*N elements
    }
    __syncthreads();
    for (int k = 0; k < kStep; ++k)
      for (int i = 0; i < 4; ++i)
        for (int j = 0; j < 4; ++j) acc[i][j] += a_tile[k][4 * ty + i] * b_tile[k][4 * tx + j];
    __syncthreads();
  }
  for (int i = 0; i < 4; ++i) {
    const int row = m0 + 4 * ty + i;
    if (row >= M) continue;
    for (int j = 0; j < 4; ++j)
      C[int64_t(row) * kN + n0 + 4 * tx + j] = __float2bfloat16_rn(acc[i][j]);
  }
}

__global__ void wild_write() { *reinterpret_cast<volatile int*>(uintptr_t(0x10)) = 1; }
__global__ void trap_kernel() { __trap(); }
__global__ void spin_kernel(volatile int* never) {
  while (*never == 0) {
  }
}
__global__ void poke_input(__nv_bfloat16* a) { a[0] = __float2bfloat16_rn(12345.0f); }
__global__ void tail_write(__nv_bfloat16* c, int64_t elements) {
  c[elements] = __float2bfloat16_rn(1.0f); // out of bounds: one past the end of C
}

void launch(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int64_t M,
            cudaStream_t stream, bool b_is_kn = false) {
  const dim3 grid(kN / kTile, unsigned((M + kTile - 1) / kTile));
  tiled_gemm<<<grid, kThreads, 0, stream>>>(A, B, C, int(M), b_is_kn);
}

cudaStream_t side_stream() {
  static cudaStream_t stream = [] {
    cudaStream_t s = nullptr;
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    return s;
  }();
  return stream;
}

}  // namespace

void run(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int64_t M,
         cudaStream_t stream) {
  if (M <= 0) return;
#if PTXBENCH_VARIANT == 1
  launch(A, B, C, M, stream, true);
#elif PTXBENCH_VARIANT == 2
  (void)A, (void)B, (void)C, (void)stream;
#elif PTXBENCH_VARIANT == 3
  static __nv_bfloat16* cache = nullptr;
  const size_t bytes = size_t(M) * kN * sizeof(__nv_bfloat16);
  if (cache == nullptr) {
    cudaMalloc(&cache, bytes);
    launch(A, B, C, M, stream);
    cudaMemcpyAsync(cache, C, bytes, cudaMemcpyDeviceToDevice, stream);
  } else {
    cudaMemcpyAsync(C, cache, bytes, cudaMemcpyDeviceToDevice, stream);
  }
#elif PTXBENCH_VARIANT == 4
  (void)A, (void)B, (void)C;
  wild_write<<<1, 1, 0, stream>>>();
#elif PTXBENCH_VARIANT == 5
  (void)A, (void)B, (void)C;
  trap_kernel<<<1, 1, 0, stream>>>();
#elif PTXBENCH_VARIANT == 6
  static int* zero = nullptr;
  if (zero == nullptr) {
    cudaMalloc(&zero, sizeof(int));
    cudaMemset(zero, 0, sizeof(int));
  }
  (void)A, (void)B, (void)C;
  spin_kernel<<<1, 1, 0, stream>>>(zero);
#elif PTXBENCH_VARIANT == 7
  (void)A, (void)B, (void)C, (void)stream;
  std::exit(0);
#elif PTXBENCH_VARIANT == 8
  (void)stream;
  launch(A, B, C, M, side_stream());
  cudaStreamSynchronize(side_stream());
#elif PTXBENCH_VARIANT == 9
  (void)stream;
  launch(A, B, C, M, side_stream());
#elif PTXBENCH_VARIANT == 10
  launch(A, B, C, M, stream);
  poke_input<<<1, 1, 0, stream>>>(const_cast<__nv_bfloat16*>(A));
#elif PTXBENCH_VARIANT == 11
  (void)A, (void)B;
  tail_write<<<1, 1, 0, stream>>>(C, M * kN);
#else
  launch(A, B, C, M, stream);
#endif
}
