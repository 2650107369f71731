// Test kernel (not a candidate: no run()) whose only TMA instruction is
// cp.async.bulk.prefetch.tensor, which ptxas lowers to UTMAPF. The static check must NOT count
// it as TMA (the paper's TMA family is loads, stores and reductions: UTMALDG/UTMASTG/UTMAREDG),
// so this binary is "absent" on sm_90a. Prefetches the 64x64 box at (blockIdx.x, blockIdx.y)
// of a 2D bf16 tensor map into L2.
#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdint>

__global__ void tma_prefetch_only_kernel(const __grid_constant__ CUtensorMap map) {
  if (threadIdx.x != 0) return;
  const int x = int(blockIdx.x) * 64, y = int(blockIdx.y) * 64;
  asm volatile("cp.async.bulk.prefetch.tensor.2d.L2.global.tile [%0, {%1, %2}];" ::"l"(
                   reinterpret_cast<uint64_t>(&map)),
               "r"(x), "r"(y)
               : "memory");
}
