// Synchronization shared with Hopper, repeated for sm_100a (see base.cuh for why): mbarrier
// (PTX ISA 9.1 §9.7.13.15), proxy fences, clusters and CTA pairs, warp election, setmaxnreg,
// named barriers. Semantics are the Hopper ones (knowledge/sm90a/contract.md §4, §5, §7, §9).
// mbarrier: a phase completes when pending arrivals reach 0 AND tx-count is 0; waits name a
// phase by parity; a fresh barrier is in phase 0, so a wait on parity 1 returns at once.
// Every address is a shared-window offset (smem_u32); remote ones come from mapa_shared.
#pragma once

#include "knowledge/sm100a/base.cuh"

namespace sm100 {

// PTX: mbarrier.init{.shared{::cta}}.b64 [addr], count;   count in [1, 2^20 - 1]
// Instance: mbarrier.init.shared::cta.b64 [%r1], 1;
__device__ __forceinline__ void mbar_init(uint32_t bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}

// PTX: mbarrier.arrive{.sem}{.scope}{.shared{::cta}}.b64 state, [addr]{, count};
// Instance: mbarrier.arrive.release.cta.shared::cta.b64 _, [%r1];
__device__ __forceinline__ void mbar_arrive(uint32_t bar) {
  asm volatile("mbarrier.arrive.release.cta.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}

// Adds `bytes` to the expected transaction count, then arrives once.
// PTX: mbarrier.arrive.expect_tx{.sem}{.scope}{.shared{::cta}}.b64 state, [addr], txCount;
// Instance: mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 _, [%r1], 32768;
__device__ __forceinline__ void mbar_arrive_expect_tx(uint32_t bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar),
               "r"(bytes)
               : "memory");
}

// Arrival on a barrier of any CTA of the cluster; `remote_bar` from mapa_shared.
// PTX: mbarrier.arrive{.sem}{.scope}.shared::cluster.b64 _, [addr]{, count};
// Instance: mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%r2];
__device__ __forceinline__ void mbar_arrive_cluster(uint32_t remote_bar) {
  asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];\n" ::"r"(remote_bar)
               : "memory");
}

// Arrival on a barrier of another CTA of the cluster with release at CTA scope, to hand a
// multicast stage back to the peer's producer after only reading it (reads completed). The
// .release.cluster form above costs a full GPU fence per arrive on sm_90 (measured; not yet
// measured on sm_100); keep it for arrivals that publish data the peer reads.
// PTX: mbarrier.arrive{.sem}{.scope}.shared::cluster.b64 _, [addr]{, count};
// Instance: mbarrier.arrive.release.cta.shared::cluster.b64 _, [%r2];
__device__ __forceinline__ void mbar_arrive_remote_release_slot(uint32_t remote_bar) {
  asm volatile("mbarrier.arrive.release.cta.shared::cluster.b64 _, [%0];\n" ::"r"(remote_bar)
               : "memory");
}

// Has the phase of parity `parity` completed? Acquire at CTA scope.
// PTX: mbarrier.try_wait.parity{.sem}{.scope}{.shared{::cta}}.b64 waitComplete, [addr],
//          phaseParity{, suspendTimeHint};   .sem = .acquire | .relaxed; .scope = .cta | .cluster
// Instance: mbarrier.try_wait.parity.acquire.cta.shared::cta.b64 p, [%r1], 1;
__device__ __forceinline__ bool mbar_try_wait(uint32_t bar, uint32_t parity) {
  uint32_t done;
  asm volatile(
      "{\n.reg .pred p;\nmbarrier.try_wait.parity.acquire.cta.shared::cta.b64 p, [%1], %2;\n"
      "selp.u32 %0, 1, 0, p;\n}\n"
      : "=r"(done)
      : "r"(bar), "r"(parity)
      : "memory");
  return done != 0;
}

// Acquire at cluster scope: for phases completed by a peer CTA (2-CTA tcgen05.commit multicast,
// TMA multicast, remote arrivals).
// Instance: mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%r1], 0;
__device__ __forceinline__ bool mbar_try_wait_cluster(uint32_t bar, uint32_t parity) {
  uint32_t done;
  asm volatile(
      "{\n.reg .pred p;\nmbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%1], %2;\n"
      "selp.u32 %0, 1, 0, p;\n}\n"
      : "=r"(done)
      : "r"(bar), "r"(parity)
      : "memory");
  return done != 0;
}

// Spin until the phase of parity `parity` has completed.
__device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t parity) {
  while (!mbar_try_wait(bar, parity)) {
  }
}

__device__ __forceinline__ void mbar_wait_cluster(uint32_t bar, uint32_t parity) {
  while (!mbar_try_wait_cluster(bar, parity)) {
  }
}

// Makes mbarrier.init visible to the cluster (peers, TMA complete_tx, tcgen05.commit).
// Follow with __syncthreads() or cluster_sync(). Instance: fence.mbarrier_init.release.cluster;
__device__ __forceinline__ void fence_mbarrier_init_release_cluster() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}

// Generic-proxy smem writes of this thread become visible to the async proxy (tcgen05.mma
// reading smem, TMA store). PTX: fence.proxy.async{.space};
// Instance: fence.proxy.async.shared::cta;
__device__ __forceinline__ void fence_proxy_async_shared_cta() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}

// PTX: barrier.cluster.arrive{.sem}{.aligned};   barrier.cluster.wait{.acquire}{.aligned};
// Instance: barrier.cluster.arrive.release.aligned; barrier.cluster.wait.acquire.aligned;
__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\n"
               "barrier.cluster.wait.acquire.aligned;\n" ::
                   : "memory");
}

// PTX: mov.u32 d, %cluster_ctarank;   Instance: mov.u32 %r1, %cluster_ctarank;
__device__ __forceinline__ uint32_t cluster_ctarank() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
  return r;
}

// Shared-window address of `addr` in the CTA of rank `cta_rank` (a .shared::cluster address).
// PTX: mapa{.space}.type d, a, b;   Instance: mapa.shared::cluster.u32 %r2, %r1, %r3;
__device__ __forceinline__ uint32_t mapa_shared(uint32_t addr, uint32_t cta_rank) {
  uint32_t r;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(r) : "r"(addr), "r"(cta_rank));
  return r;
}

// CTA pair (cta_group::2): ranks 2k (leader, even) and 2k+1 of the cluster.
__device__ __forceinline__ uint32_t cta_pair_leader_rank() {
  return cluster_ctarank() & ~1u;
}

__device__ __forceinline__ bool is_cta_pair_leader() {
  return (cluster_ctarank() & 1u) == 0u;
}

// True in exactly one lane of a full warp; every lane must call it.
// PTX: elect.sync d|p, membermask;   Instance: elect.sync %r1|%p1, 0xffffffff;
__device__ __forceinline__ bool elect_one_sync() {
  uint32_t elected;
  asm volatile(
      "{\n.reg .b32 r;\n.reg .pred p;\nelect.sync r|p, 0xffffffff;\nselp.u32 %0, 1, 0, p;\n}\n"
      : "=r"(elected));
  return elected != 0;
}

// Warp index in a 1-D block, warp-uniform (the TMEM lane quarter of warp w is w % 4).
__device__ __forceinline__ uint32_t warp_index() {
  return __shfl_sync(0xffffffffu, threadIdx.x / 32u, 0);
}

// Per-thread register limit of this warpgroup; all 4 warps execute it; needs
// __launch_bounds__(threads, 1) (else ptxas drops it, C7508); sum of 128 * regs <= 65536.
// PTX: setmaxnreg.action.sync.aligned.u32 imm-reg-count;   .action = .inc | .dec; 24..256 step 8
// Instance: setmaxnreg.inc.sync.aligned.u32 232;
template <int kRegs> __device__ __forceinline__ void setmaxnreg_inc() {
  static_assert(kRegs >= 24 && kRegs <= 256 && kRegs % 8 == 0, "setmaxnreg: 24..256, step 8");
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(kRegs));
}

// Instance: setmaxnreg.dec.sync.aligned.u32 40;
template <int kRegs> __device__ __forceinline__ void setmaxnreg_dec() {
  static_assert(kRegs >= 24 && kRegs <= 256 && kRegs % 8 == 0, "setmaxnreg: 24..256, step 8");
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(kRegs));
}

// Named barrier over `threads` threads (multiple of 32); id 0 is __syncthreads'.
// PTX: barrier.sync{.aligned} a{, b};   Instance: barrier.sync.aligned 1, 128;
__device__ __forceinline__ void named_barrier_sync(uint32_t id, uint32_t threads) {
  asm volatile("barrier.sync.aligned %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

// PTX: barrier.arrive{.aligned} a, b;   Instance: barrier.arrive.aligned 2, 256;
__device__ __forceinline__ void named_barrier_arrive(uint32_t id, uint32_t threads) {
  asm volatile("barrier.arrive.aligned %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

} // namespace sm100
