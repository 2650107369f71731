// Memory and proxy fences (PTX ISA 9.1 §9.7.13.4). wgmma operand reads, TMA and bulk copies run
// in the async proxy; st.shared, stmatrix and ordinary loads run in the generic proxy. Data
// written through one proxy and read through the other needs a proxy fence in the writing
// threads before the barrier that hands it over. TMA-load -> mbarrier wait -> wgmma needs none.
#pragma once

#include "knowledge/sm90a/base.cuh"

namespace sm90 {

// Generic-proxy shared-memory writes of this thread become visible to later async-proxy
// operations (wgmma reading smem, TMA store, bulk copy from smem).
// PTX: fence.proxy.async{.space};   .space = .global | .shared::cta | .shared::cluster
// Instance: fence.proxy.async.shared::cta;
__device__ __forceinline__ void fence_proxy_async_shared_cta() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

// Same for global memory: generic writes read next by TMA loads / bulk copies (and async-proxy
// global writes read next by generic loads in a later phase of the same kernel).
// Instance: fence.proxy.async.global;
__device__ __forceinline__ void fence_proxy_async_global() {
  asm volatile("fence.proxy.async.global;\n" ::: "memory");
}

// All state spaces.
// Instance: fence.proxy.async;
__device__ __forceinline__ void fence_proxy_async() {
  asm volatile("fence.proxy.async;\n" ::: "memory");
}

// Makes mbarrier.init visible to the cluster (to peers' remote arrivals and to TMA
// complete_tx). Follow it with __syncthreads() or a cluster barrier before any use.
// PTX: fence.mbarrier_init.release.cluster;
// Instance: fence.mbarrier_init.release.cluster;
__device__ __forceinline__ void fence_mbarrier_init_release_cluster() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}

// Before the first TMA that uses a tensor map written to global memory by the host or by
// generic stores (not needed for __grid_constant__ parameters).
// PTX: fence.proxy.tensormap::generic.acquire.scope [addr], 128;   .scope = .cta|.cluster|.gpu|.sys
// Instance: fence.proxy.tensormap::generic.acquire.gpu [%rd1], 128;
__device__ __forceinline__ void fence_tensormap_acquire_gpu(const void* tensor_map) {
  asm volatile("fence.proxy.tensormap::generic.acquire.gpu [%0], 128;\n" ::"l"(tensor_map)
               : "memory");
}

} // namespace sm90
