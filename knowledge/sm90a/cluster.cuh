// Thread-block clusters and distributed shared memory (PTX ISA 9.1 §9.7.13.1, §9.7.9.x mapa).
// Launch with __cluster_dims__(x, y, z) or cudaLaunchKernelEx +
// cudaLaunchAttributeClusterDimension; the grid must be a multiple of the cluster shape; more than
// 8 CTAs per cluster needs cudaFuncAttributeNonPortableClusterSizeAllowed. A CTA must not exit
// while a peer may still touch its shared memory (remote arrivals, multicast writes): end with
// cluster_sync().
#pragma once

#include "knowledge/sm90a/base.cuh"

namespace sm90 {

// PTX: barrier.cluster.arrive{.sem}{.aligned};   .sem = .release (default) | .relaxed
// Instance: barrier.cluster.arrive.release.aligned;
__device__ __forceinline__ void cluster_arrive_release() {
  asm volatile("barrier.cluster.arrive.release.aligned;\n" ::: "memory");
}

// Instance: barrier.cluster.arrive.relaxed.aligned;
__device__ __forceinline__ void cluster_arrive_relaxed() {
  asm volatile("barrier.cluster.arrive.relaxed.aligned;\n" ::: "memory");
}

// PTX: barrier.cluster.wait{.acquire}{.aligned};
// Instance: barrier.cluster.wait.acquire.aligned;
__device__ __forceinline__ void cluster_wait_acquire() {
  asm volatile("barrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}

// All threads of all CTAs of the cluster; orders shared-memory writes before it (barrier
// inits, DSMEM data) with reads after it in every CTA.
__device__ __forceinline__ void cluster_sync() {
  cluster_arrive_release();
  cluster_wait_acquire();
}

// Rank of this CTA in its cluster (what multicast masks and mapa use).
// PTX: mov.u32 d, %cluster_ctarank;   Instance: mov.u32 %r1, %cluster_ctarank;
__device__ __forceinline__ uint32_t cluster_ctarank() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
  return r;
}

// Number of CTAs in the cluster. Instance: mov.u32 %r1, %cluster_nctarank;
__device__ __forceinline__ uint32_t cluster_nctarank() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_nctarank;\n" : "=r"(r));
  return r;
}

// Shared::cluster address of the variable at shared offset `addr` in CTA `cta_rank`.
// PTX: mapa{.space}.type d, a, b;   .space = .shared::cluster; .type = .u32 | .u64
// Instance: mapa.shared::cluster.u32 %r2, %r1, 1;
__device__ __forceinline__ uint32_t mapa_shared(uint32_t addr, uint32_t cta_rank) {
  uint32_t remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(remote) : "r"(addr), "r"(cta_rank));
  return remote;
}

// Distributed shared-memory load/store through a mapa address.
// PTX: ld.shared::cluster.u32 d, [a];   st.shared::cluster.u32 [a], b;
// Instance: ld.shared::cluster.u32 %r3, [%r2];
__device__ __forceinline__ uint32_t ld_shared_cluster_u32(uint32_t remote_addr) {
  uint32_t v;
  asm volatile("ld.shared::cluster.u32 %0, [%1];\n" : "=r"(v) : "r"(remote_addr) : "memory");
  return v;
}

// Instance: st.shared::cluster.u32 [%r2], %r3;
__device__ __forceinline__ void st_shared_cluster_u32(uint32_t remote_addr, uint32_t v) {
  asm volatile("st.shared::cluster.u32 [%0], %1;\n" ::"r"(remote_addr), "r"(v) : "memory");
}

} // namespace sm90
