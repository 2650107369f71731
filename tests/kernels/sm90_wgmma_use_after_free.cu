// Test candidate for gemm_n7168_k5120 on sm_90a: the paper's "undefined behaviour during
// profiling" case (§5, a stream-ordered use-after-free) around the wgmma+TMA GEMM of
// sm90_wgmma_tma_gemm.cu (issue 29 item 6).
//
// Purpose: a candidate that is functionally correct in practice but whose call has undefined
// behaviour under the CUDA API. Every call does, on the call's stream:
//
//   cudaMallocAsync(&tmp, …, stream);
//   uaf_producer_kernel<<<…, stream>>>(tmp);               writes zeros into tmp
//   sm90_wgmma_uaf_gemm_kernel<<<…, stream>>>(…, tmp);     consumer 1: the GEMM, adds tmp[j] (0)
//   cudaFreeAsync(tmp, stream);
//   uaf_consumer_2_kernel<<<…, stream>>>(tmp, C);          reads tmp after the free
//
// The last kernel reads memory the stream has already freed. It turns what it read into an
// exact zero that it adds to a few elements of C (bit 0 of each word, times 0.0f: finite
// whatever the freed bytes hold), so C stays correct however the freed block is reused; the
// read itself is an `ld.volatile` the compiler cannot drop. The default memory pool's release
// threshold is raised to its maximum once, so the freed block stays mapped and the read cannot
// fault: the undefined behaviour stays silent, as in the paper's case. compute-sanitizer memcheck
// (--track-stream-ordered-races all) reports it as a stream-ordered use-after-free, or, where it
// attributes the read to no live allocation, as an invalid __global__ read.
//
// The GEMM (tiles, pipeline, fragment layout) is the one described in sm90_wgmma_tma_gemm.cu:
// C[M,7168] = A[M,5120] · B[7168,5120]ᵀ, bf16 row-major, fp32 accumulation, one warpgroup per
// 64x128 tile of C; here its epilogue also adds tmp[(column tile) % kTmpElems], which the
// producer set to 0.0f, so consumer 1 reads tmp while it is alive.
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace {

constexpr int kN = 7168;
constexpr int kK = 5120;
constexpr int kBlockM = 64;
constexpr int kBlockN = 128;
constexpr int kBlockK = 64;
constexpr int kStages = 2;
constexpr int kThreads = 128;
constexpr int kTileABytes = kBlockM * kBlockK * 2;
constexpr int kTileBBytes = kBlockN * kBlockK * 2;
constexpr int kStageBytes = kTileABytes + kTileBBytes;
constexpr int kDynamicSmemBytes = kStages * kStageBytes + 1024;  // + slack for 1024-B alignment
constexpr int kTmpElems = 4096; // the temporary: 16 KiB of fp32
constexpr int kConsumer2Elems = 256; // elements of C that consumer 2 touches

static_assert(kN % kBlockN == 0, "N must be a multiple of the CTA tile width");
static_assert(kK % kBlockK == 0, "K must be a multiple of the K block");
static_assert(kBlockK * 2 == 128, "a K block must be exactly one 128-B swizzle span");
static_assert(kTileABytes % 1024 == 0 && kTileBBytes % 1024 == 0, "tiles keep 1024-B alignment");
static_assert(kDynamicSmemBytes <= 227 * 1024, "shared memory budget of sm_90");
static_assert(kTmpElems % 256 == 0, "the producer writes the temporary in blocks of 256");
static_assert(kConsumer2Elems <= kTmpElems && kConsumer2Elems <= 1024,
              "consumer 2 is one block reading inside the temporary");

__device__ __forceinline__ uint32_t smem_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// K-major, 128B swizzle: LBO unused (1), SBO = 8 rows x 128 B, layout type 1 in bits 62-63.
__device__ __forceinline__ uint64_t sw128_desc(uint32_t addr) {
  uint64_t desc = (addr & 0x3FFFF) >> 4;
  desc |= uint64_t(1) << 16;
  desc |= uint64_t(1024 >> 4) << 32;
  desc |= uint64_t(1) << 62;
  return desc;
}

__device__ __forceinline__ void mbar_init(uint64_t* bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_addr(bar)), "r"(count));
}

__device__ __forceinline__ void mbar_arrive_expect_tx(uint64_t* bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_addr(bar)),
               "r"(bytes)
               : "memory");
}

__device__ __forceinline__ void mbar_wait(uint64_t* bar, uint32_t parity) {
  uint32_t done = 0;
  do {
    asm volatile("{\n .reg .pred p;\n"
                 " mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n"
                 " selp.u32 %0, 1, 0, p;\n}"
                 : "=r"(done)
                 : "r"(smem_addr(bar)), "r"(parity)
                 : "memory");
  } while (done == 0);
}

__device__ __forceinline__ void tma_load_2d(void* dst, const CUtensorMap* map, uint64_t* bar,
                                            int x, int y) {
  asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes"
               " [%0], [%1, {%2, %3}], [%4];" ::"r"(smem_addr(dst)),
               "l"(reinterpret_cast<uint64_t>(map)), "r"(x), "r"(y), "r"(smem_addr(bar))
               : "memory");
}

__device__ __forceinline__ void wgmma_m64n128k16(float (&d)[64], uint64_t desc_a,
                                                 uint64_t desc_b) {
  asm volatile(
      "{\n .reg .pred p;\n setp.ne.b32 p, %66, 0;\n"
      " wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, "
      "%19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, "
      "%37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, "
      "%55, %56, %57, %58, %59, %60, %61, %62, %63}, %64, %65, p, 1, 1, 0, 0;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),
        "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]),
        "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]),
        "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]),
        "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]),
        "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]),
        "+f"(d[38]), "+f"(d[39]), "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]),
        "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), "+f"(d[48]), "+f"(d[49]),
        "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]),
        "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]),
        "+f"(d[62]), "+f"(d[63])
      : "l"(desc_a), "l"(desc_b), "r"(1));
}

// Keeps the compiler from moving accumulator reads/writes across the wgmma fences.
__device__ __forceinline__ void fence_operands(float (&d)[64]) {
#pragma unroll
  for (int i = 0; i < 64; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

__device__ __forceinline__ void issue_stage(uint8_t* stage, uint64_t* bar, const CUtensorMap* a,
                                            const CUtensorMap* b, int kb, int m0, int n0) {
  mbar_arrive_expect_tx(bar, kStageBytes);
  tma_load_2d(stage, a, bar, kb * kBlockK, m0);
  tma_load_2d(stage + kTileABytes, b, bar, kb * kBlockK, n0);
}

__device__ __forceinline__ void store_tile(const float (&d)[64], __nv_bfloat16* C, int M, int m0,
                                           int n0, float zero) {
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int row = m0 + 16 * warp + lane / 4;
#pragma unroll
  for (int i = 0; i < kBlockN / 8; ++i) {
    const int col = n0 + 8 * i + 2 * (lane % 4);
    if (row < M)
      *reinterpret_cast<__nv_bfloat162*>(C + int64_t(row) * kN + col) =
          __floats2bfloat162_rn(d[4 * i + 0] + zero, d[4 * i + 1] + zero);
    if (row + 8 < M)
      *reinterpret_cast<__nv_bfloat162*>(C + int64_t(row + 8) * kN + col) =
          __floats2bfloat162_rn(d[4 * i + 2] + zero, d[4 * i + 3] + zero);
  }
}

}  // namespace

// Outside the anonymous namespace so its mangled name does not depend on the file path.
__global__ void __launch_bounds__(kThreads, 1)
    sm90_wgmma_uaf_gemm_kernel(const __grid_constant__ CUtensorMap map_a,
                               const __grid_constant__ CUtensorMap map_b, __nv_bfloat16* C,
                               int M, const float* __restrict__ tmp) {
  extern __shared__ uint8_t smem_raw[];
  __shared__ __align__(8) uint64_t full_bar[kStages];
  uint8_t* smem = reinterpret_cast<uint8_t*>(
      (reinterpret_cast<uintptr_t>(smem_raw) + 1023) & ~uintptr_t(1023));
  const int m0 = blockIdx.y * kBlockM, n0 = blockIdx.x * kBlockN;
  constexpr int kNumK = kK / kBlockK;
  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) mbar_init(&full_bar[s], 1);
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    for (int s = 0; s < kStages; ++s)
      issue_stage(smem + s * kStageBytes, &full_bar[s], &map_a, &map_b, s, m0, n0);
  }
  __syncthreads();
  float d[64];
#pragma unroll
  for (int i = 0; i < 64; ++i) d[i] = 0.0f;
  for (int kb = 0; kb < kNumK; ++kb) {
    const int s = kb % kStages;
    mbar_wait(&full_bar[s], (kb / kStages) & 1);
    const uint32_t a_base = smem_addr(smem + s * kStageBytes);
    const uint32_t b_base = a_base + kTileABytes;
    fence_operands(d);
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
#pragma unroll
    for (int kk = 0; kk < kBlockK / 16; ++kk)
      wgmma_m64n128k16(d, sw128_desc(a_base + kk * 32), sw128_desc(b_base + kk * 32));
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
    asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
    fence_operands(d);
    __syncthreads();  // every warp is done reading stage s before it is refilled
    if (threadIdx.x == 0 && kb + kStages < kNumK)
      issue_stage(smem + s * kStageBytes, &full_bar[s], &map_a, &map_b, kb + kStages, m0, n0);
  }
  store_tile(d, C, M, m0, n0, tmp[blockIdx.x % kTmpElems]);
}

// Writes zeros into the temporary.
__global__ void uaf_producer_kernel(float* tmp) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < kTmpElems)
    tmp[i] = 0.0f;
}

// Reads the temporary after cudaFreeAsync (the undefined behaviour) and adds an exact zero made
// from it to the first kConsumer2Elems elements of C.
__global__ void uaf_consumer_2_kernel(const float* tmp, __nv_bfloat16* C, int64_t elements) {
  const int i = threadIdx.x;
  if (i >= elements)
    return;
  uint32_t bits = 0;
  asm volatile("ld.volatile.global.u32 %0, [%1];" : "=r"(bits) : "l"(tmp + i) : "memory");
  const float zero = 0.0f * static_cast<float>(bits & 1u);
  C[i] = __float2bfloat16(__bfloat162float(C[i]) + zero);
}

namespace {

// rows x 5120 bf16, row-major; box = box_rows x 64 with 128B swizzle.
bool make_map(CUtensorMap* map, const void* base, uint64_t rows, uint32_t box_rows) {
  static PFN_cuTensorMapEncodeTiled_v12000 encode = [] {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult found{};
    cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault,
                                     &found);
    return found == cudaDriverEntryPointSuccess
               ? reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(fn)
               : nullptr;
  }();
  if (encode == nullptr) return false;
  const cuuint64_t dims[2] = {cuuint64_t(kK), rows};
  const cuuint64_t strides[1] = {cuuint64_t(kK) * 2};
  const cuuint32_t box[2] = {cuuint32_t(kBlockK), box_rows};
  const cuuint32_t elem_strides[2] = {1, 1};
  return encode(map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, const_cast<void*>(base), dims, strides,
                box, elem_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) == CUDA_SUCCESS;
}

}  // namespace

namespace {

// Keeps every block the default pool frees mapped for the process (release threshold: max).
bool keep_pool_mapped() {
  int device = 0;
  cudaMemPool_t pool = nullptr;
  uint64_t threshold = UINT64_MAX;
  return cudaGetDevice(&device) == cudaSuccess &&
         cudaDeviceGetDefaultMemPool(&pool, device) == cudaSuccess &&
         cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &threshold) ==
             cudaSuccess;
}

} // namespace

void run(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int64_t M,
         cudaStream_t stream) {
  if (M <= 0)
    return;
  static const bool configured =
      keep_pool_mapped() &&
      cudaFuncSetAttribute(sm90_wgmma_uaf_gemm_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                           kDynamicSmemBytes) == cudaSuccess;
  if (!configured)
    return;
  alignas(64) CUtensorMap map_a;
  alignas(64) CUtensorMap map_b;
  if (!make_map(&map_a, A, uint64_t(M), kBlockM) || !make_map(&map_b, B, kN, kBlockN))
    return;
  float* tmp = nullptr;
  if (cudaMallocAsync(reinterpret_cast<void**>(&tmp), kTmpElems * sizeof(float), stream) !=
      cudaSuccess)
    return;
  uaf_producer_kernel<<<kTmpElems / 256, 256, 0, stream>>>(tmp);
  const dim3 grid(kN / kBlockN, unsigned((M + kBlockM - 1) / kBlockM));
  sm90_wgmma_uaf_gemm_kernel<<<grid, kThreads, kDynamicSmemBytes, stream>>>(map_a, map_b, C,
                                                                            int(M), tmp);
  cudaFreeAsync(tmp, stream);
  // Undefined behaviour: tmp was freed in stream order above.
  uaf_consumer_2_kernel<<<1, kConsumer2Elems, 0, stream>>>(tmp, C, M * int64_t(kN));
}
