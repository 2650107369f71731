// Test candidate for gemm_n7168_k5120 on sm_100a: TMA + mbarrier + tcgen05.mma (kind::f16,
// cta_group::1) accumulating in tensor memory, tcgen05.ld epilogue.
//
// NOT RUN: there is no Blackwell GPU here. It compiles with nvcc 13 for
// -gencode arch=compute_100a,code=sm_100a and is written to the PTX ISA 9.x text (tcgen05
// sections 9.7.16.*: alloc, instruction descriptor table, smem descriptor, commit, ld 32x32b),
// but nothing has validated its numbers on a B200 yet.
//
// C[M,7168] = A[M,5120] · B[7168,5120]ᵀ, bf16 row-major; B is [N,K], i.e. K-major for the MMA
// B operand, so neither operand is transposed. One 128-thread CTA computes a 128x128 tile:
// warp 0 allocates 128 TMEM columns (fp32 accumulator, row i in lane i, column j in column
// base+j for M=128 cta_group::1). Per K block of 64 (one 128-B swizzle span): thread 0 arms the
// load barrier with the byte count and issues two 2D TMA boxes (A 128x64, B 128x64, SWIZZLE_128B
// into 1024-B aligned tiles); everyone waits; thread 0 issues four tcgen05.mma m128n128k16
// (descriptor start advanced by 32 B per K step; enable_input_d false only for the very first
// one) and tcgen05.commit to the MMA barrier; everyone waits on it before the tiles are
// refilled. Single stage: simple, not fast. Epilogue: warp w reads TMEM lanes 32w..32w+31
// (rows) with tcgen05.ld.32x32b.x32 in four column chunks, converts to bf16 and stores rows < M.
// All TMEM users fence (before_thread_sync) and sync before warp 0 deallocates.
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace {

constexpr int kN = 7168;
constexpr int kK = 5120;
constexpr int kBlockM = 128;
constexpr int kBlockN = 128;
constexpr int kBlockK = 64;
constexpr int kThreads = 128;
constexpr uint32_t kTmemColumns = 128;  // power of two in [32, 512], >= kBlockN fp32 columns
constexpr int kTileABytes = kBlockM * kBlockK * 2;
constexpr int kTileBBytes = kBlockN * kBlockK * 2;
constexpr int kDynamicSmemBytes = kTileABytes + kTileBBytes + 1024;  // + 1024-B alignment slack

// Instruction descriptor (PTX ISA "Instruction descriptor" table for kind::f16): D=F32 (bits
// 4-5 = 1), A=BF16 (7-9 = 1), B=BF16 (10-12 = 1), both K-major (15, 16 = 0), N>>3 at 17-22,
// M>>4 at 24-28.
constexpr uint32_t kInstrDesc =
    (1u << 4) | (1u << 7) | (1u << 10) | (uint32_t(kBlockN >> 3) << 17) |
    (uint32_t(kBlockM >> 4) << 24);

static_assert(kInstrDesc == 0x08200490u, "bf16 x bf16 -> f32, M=128, N=128");
static_assert(kN % kBlockN == 0 && kK % kBlockK == 0, "tile divisibility");
static_assert(kBlockK * 2 == 128, "a K block must be exactly one 128-B swizzle span");
static_assert(kBlockM == 128 && kBlockN % 16 == 0 && kBlockN <= 256, "valid cta_group::1 shape");
static_assert(kBlockN <= int(kTmemColumns), "accumulator fits the allocation");
static_assert(kTileABytes % 1024 == 0, "B tile stays 1024-B aligned");
static_assert(kDynamicSmemBytes <= 227 * 1024, "shared memory budget");

__device__ __forceinline__ uint32_t smem_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// UMMA shared-memory descriptor, K-major SWIZZLE_128B: start >> 4, LBO unused (1),
// SBO = 8 rows x 128 B, fixed version bits 46-48 = 0b001, swizzle mode 2 (128B) in bits 61-63.
__device__ __forceinline__ uint64_t umma_sw128_desc(uint32_t addr) {
  return ((addr & 0x3FFFF) >> 4) | (uint64_t(1) << 16) | (uint64_t(1024 >> 4) << 32) |
         (uint64_t(1) << 46) | (uint64_t(2) << 61);
}

__device__ __forceinline__ void mbar_init(uint64_t* bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_addr(bar)), "r"(count));
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

__device__ __forceinline__ void load_k_block(uint8_t* smem, uint64_t* bar, const CUtensorMap* a,
                                             const CUtensorMap* b, int kb, int m0, int n0) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_addr(bar)),
               "r"(kTileABytes + kTileBBytes)
               : "memory");
  tma_load_2d(smem, a, bar, kb * kBlockK, m0);
  tma_load_2d(smem + kTileABytes, b, bar, kb * kBlockK, n0);
}

__device__ __forceinline__ void tc_fence_before() {
  asm volatile("tcgen05.fence::before_thread_sync;" ::: "memory");
}
__device__ __forceinline__ void tc_fence_after() {
  asm volatile("tcgen05.fence::after_thread_sync;" ::: "memory");
}

__device__ __forceinline__ void umma_bf16(uint32_t d_tmem, uint64_t a_desc, uint64_t b_desc,
                                          uint32_t accumulate) {
  asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %4, 0;\n"
               " tcgen05.mma.cta_group::1.kind::f16 [%0], %1, %2, %3, p;\n}" ::"r"(d_tmem),
               "l"(a_desc), "l"(b_desc), "r"(kInstrDesc), "r"(accumulate)
               : "memory");
}

__device__ __forceinline__ void umma_commit(uint64_t* bar) {
  asm volatile("tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%0];" ::"r"(
                   smem_addr(bar))
               : "memory");
}

// 32 consecutive fp32 columns of this thread's TMEM lane.
__device__ __forceinline__ void tmem_load_32(uint32_t taddr, uint32_t (&v)[32]) {
  asm volatile("tcgen05.ld.sync.aligned.32x32b.x32.b32 "
               "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, "
               "%18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, [%32];"
               : "=r"(v[0]), "=r"(v[1]), "=r"(v[2]), "=r"(v[3]), "=r"(v[4]), "=r"(v[5]),
                 "=r"(v[6]), "=r"(v[7]), "=r"(v[8]), "=r"(v[9]), "=r"(v[10]), "=r"(v[11]),
                 "=r"(v[12]), "=r"(v[13]), "=r"(v[14]), "=r"(v[15]), "=r"(v[16]), "=r"(v[17]),
                 "=r"(v[18]), "=r"(v[19]), "=r"(v[20]), "=r"(v[21]), "=r"(v[22]), "=r"(v[23]),
                 "=r"(v[24]), "=r"(v[25]), "=r"(v[26]), "=r"(v[27]), "=r"(v[28]), "=r"(v[29]),
                 "=r"(v[30]), "=r"(v[31])
               : "r"(taddr));
  asm volatile("tcgen05.wait::ld.sync.aligned;" ::: "memory");
}

__device__ __forceinline__ void store_row_chunk(const uint32_t (&v)[32], __nv_bfloat16* dst) {
#pragma unroll
  for (int i = 0; i < 32; i += 8) {
    uint4 packed;
    uint32_t* words = reinterpret_cast<uint32_t*>(&packed);
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const __nv_bfloat162 pair =
          __floats2bfloat162_rn(__uint_as_float(v[i + 2 * j]), __uint_as_float(v[i + 2 * j + 1]));
      words[j] = *reinterpret_cast<const uint32_t*>(&pair);
    }
    *reinterpret_cast<uint4*>(dst + i) = packed;
  }
}

__device__ __forceinline__ void epilogue(uint32_t tmem_base, __nv_bfloat16* C, int M, int m0,
                                         int n0) {
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int row = m0 + 32 * warp + lane;
#pragma unroll
  for (int chunk = 0; chunk < kBlockN / 32; ++chunk) {
    uint32_t v[32];
    tmem_load_32(tmem_base + (uint32_t(32 * warp) << 16) + uint32_t(32 * chunk), v);
    if (row < M) store_row_chunk(v, C + int64_t(row) * kN + n0 + 32 * chunk);
  }
}

}  // namespace

// Outside the anonymous namespace so its mangled name does not depend on the file path.
__global__ void __launch_bounds__(kThreads, 1)
    sm100_tcgen05_gemm_kernel(const __grid_constant__ CUtensorMap map_a,
                              const __grid_constant__ CUtensorMap map_b, __nv_bfloat16* C,
                              int M) {
  extern __shared__ uint8_t smem_raw[];
  __shared__ __align__(8) uint64_t load_bar;
  __shared__ __align__(8) uint64_t mma_bar;
  __shared__ uint32_t tmem_slot;
  uint8_t* smem = reinterpret_cast<uint8_t*>(
      (reinterpret_cast<uintptr_t>(smem_raw) + 1023) & ~uintptr_t(1023));
  const int m0 = blockIdx.y * kBlockM, n0 = blockIdx.x * kBlockN;
  if (threadIdx.x / 32 == 0) {
    asm volatile("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%0], %1;" ::"r"(
                     smem_addr(&tmem_slot)),
                 "r"(kTmemColumns)
                 : "memory");
    asm volatile("tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;" ::: "memory");
  }
  if (threadIdx.x == 0) {
    mbar_init(&load_bar, 1);
    mbar_init(&mma_bar, 1);
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  tc_fence_before();
  __syncthreads();
  tc_fence_after();
  const uint32_t tmem_base = tmem_slot;
  const uint32_t a_addr = smem_addr(smem), b_addr = a_addr + kTileABytes;
  for (int kb = 0; kb < kK / kBlockK; ++kb) {
    if (threadIdx.x == 0) load_k_block(smem, &load_bar, &map_a, &map_b, kb, m0, n0);
    mbar_wait(&load_bar, kb & 1);
    tc_fence_after();
    if (threadIdx.x == 0) {
#pragma unroll
      for (int kk = 0; kk < kBlockK / 16; ++kk)
        umma_bf16(tmem_base, umma_sw128_desc(a_addr + 32 * kk), umma_sw128_desc(b_addr + 32 * kk),
                  (kb > 0 || kk > 0) ? 1u : 0u);
      umma_commit(&mma_bar);  // arrives once every MMA above has finished
    }
    mbar_wait(&mma_bar, kb & 1);  // tiles are free and, after the last block, D is complete
  }
  tc_fence_after();
  epilogue(tmem_base, C, M, m0, n0);
  tc_fence_before();
  __syncthreads();
  if (threadIdx.x / 32 == 0) {
    tc_fence_after();
    asm volatile("tcgen05.dealloc.cta_group::1.sync.aligned.b32 %0, %1;" ::"r"(tmem_base),
                 "r"(kTmemColumns)
                 : "memory");
  }
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

void run(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int64_t M,
         cudaStream_t stream) {
  if (M <= 0) return;
  alignas(64) CUtensorMap map_a;
  alignas(64) CUtensorMap map_b;
  if (!make_map(&map_a, A, uint64_t(M), kBlockM) || !make_map(&map_b, B, kN, kBlockN)) return;
  const dim3 grid(kN / kBlockN, unsigned((M + kBlockM - 1) / kBlockM));
  sm100_tcgen05_gemm_kernel<<<grid, kThreads, kDynamicSmemBytes, stream>>>(map_a, map_b, C,
                                                                           int(M));
}
