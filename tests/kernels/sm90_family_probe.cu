// Test kernel (not a candidate: no run(), computes nothing useful) that exercises one PTX
// instruction per informational SASS family, so the family table in src/sass/families.cpp is
// checked against what ptxas really emits: setmaxnreg, elect.sync, ldmatrix, stmatrix,
// non-tensor bulk copy (cp.async.bulk global->shared with an mbarrier), TMA store + bulk
// commit/wait, TMA reduce-add, tensormap prefetch, mbarrier.inval and a cluster barrier.
// Compiles for sm_90a and sm_100a; never launched.
#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace {

__device__ __forceinline__ uint32_t smem_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void bulk_copy_in(void* dst, const void* src, uint64_t* bar) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem_addr(bar)));
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], 1024;" ::"r"(smem_addr(bar))
               : "memory");
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], "
               "1024, [%2];" ::"r"(smem_addr(dst)),
               "l"(src), "r"(smem_addr(bar))
               : "memory");
  uint32_t done = 0;
  do {
    asm volatile("{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0;\n"
                 " selp.u32 %0, 1, 0, p;\n}"
                 : "=r"(done)
                 : "r"(smem_addr(bar))
                 : "memory");
  } while (done == 0);
  asm volatile("mbarrier.inval.shared::cta.b64 [%0];" ::"r"(smem_addr(bar)) : "memory");
}

__device__ __forceinline__ void matrix_round_trip(uint8_t* tile) {
  uint32_t r0, r1, r2, r3;
  const uint32_t row = smem_addr(tile + 16 * (threadIdx.x % 32));
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
               : "r"(row));
  asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};" ::"r"(row),
               "r"(r3), "r"(r2), "r"(r1), "r"(r0)
               : "memory");
}

__device__ __forceinline__ void tma_store_and_reduce(const CUtensorMap* map, uint8_t* tile) {
  const uint64_t map_addr = reinterpret_cast<uint64_t>(map);
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  asm volatile("prefetch.tensormap [%0];" ::"l"(map_addr) : "memory");
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.tile.bulk_group [%0, {%1, %2}], [%3];" ::
                   "l"(map_addr), "r"(0), "r"(0), "r"(smem_addr(tile))
               : "memory");
  asm volatile("cp.reduce.async.bulk.tensor.2d.global.shared::cta.add.tile.bulk_group"
               " [%0, {%1, %2}], [%3];" ::"l"(map_addr), "r"(64), "r"(0), "r"(smem_addr(tile))
               : "memory");
  asm volatile("cp.async.bulk.commit_group;" ::: "memory");
  asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
}

}  // namespace

__global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(256, 1)
    family_probe_kernel(const __grid_constant__ CUtensorMap map, const uint8_t* src) {
  __shared__ __align__(1024) uint8_t tile[1024];
  __shared__ __align__(8) uint64_t bar;
  if (threadIdx.x / 128 == 0)
    asm volatile("setmaxnreg.inc.sync.aligned.u32 232;" ::: "memory");
  else
    asm volatile("setmaxnreg.dec.sync.aligned.u32 40;" ::: "memory");
  uint32_t is_leader = 0;
  asm volatile("{\n .reg .pred p;\n elect.sync _|p, 0xffffffff;\n selp.u32 %0, 1, 0, p;\n}"
               : "=r"(is_leader));
  if (threadIdx.x < 32 && is_leader != 0) bulk_copy_in(tile, src, &bar);
  __syncthreads();
  if (threadIdx.x < 32) matrix_round_trip(tile);
  __syncthreads();
  if (threadIdx.x == 0) tma_store_and_reduce(&map, tile);
  asm volatile("barrier.cluster.arrive.release.aligned;\n"
               "barrier.cluster.wait.acquire.aligned;" ::: "memory");
}
