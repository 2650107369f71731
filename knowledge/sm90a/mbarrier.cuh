// mbarrier (PTX ISA 9.1 §9.7.13.15): 8-byte, 8-byte-aligned shared-memory barrier that counts
// arrivals and transaction bytes. A phase completes when its pending arrivals reach 0 AND its
// tx-count is 0; the barrier then starts the next phase with the init count again.
// Waits name a phase by parity: try_wait.parity(P) returns true once the phase of parity P has
// completed, i.e. while the current (incomplete) phase has parity !P. A fresh barrier is in
// phase 0, so a wait on parity 1 returns at once (producers start their "empty" waits there).
// Every address here is a shared-window offset (smem_u32); remote ones come from mapa.
#pragma once

#include "knowledge/sm90a/base.cuh"

namespace sm90 {

// PTX: mbarrier.init{.shared{::cta}}.b64 [addr], count;   count in [1, 2^20 - 1]
// Instance: mbarrier.init.shared::cta.b64 [%r1], 1;
__device__ __forceinline__ void mbar_init(uint32_t bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}

// PTX: mbarrier.inval{.shared{::cta}}.b64 [addr];   before reusing the 8 bytes for data.
// Instance: mbarrier.inval.shared::cta.b64 [%r1];
__device__ __forceinline__ void mbar_inval(uint32_t bar) {
  asm volatile("mbarrier.inval.shared::cta.b64 [%0];\n" ::"r"(bar) : "memory");
}

// One arrival on a barrier of this CTA.
// PTX: mbarrier.arrive{.sem}{.scope}{.shared{::cta}}.b64 state, [addr]{, count};
//   .sem = .release (default) | .relaxed; .scope = .cta (default) | .cluster
// Instance: mbarrier.arrive.release.cta.shared::cta.b64 _, [%r1];
__device__ __forceinline__ void mbar_arrive(uint32_t bar) {
  asm volatile("mbarrier.arrive.release.cta.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}

// Adds `bytes` to the expected transaction count, then arrives once. Issue it before (or
// together with) the copies that complete_tx on this barrier, with the full box bytes even
// when the box is partly out of bounds.
// PTX: mbarrier.arrive.expect_tx{.sem}{.scope}{.shared{::cta}}.b64 state, [addr], txCount;
// Instance: mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 _, [%r1], 32768;
__device__ __forceinline__ void mbar_arrive_expect_tx(uint32_t bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.release.cta.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar),
               "r"(bytes)
               : "memory");
}

// Adds `bytes` to the expected transaction count without arriving.
// PTX: mbarrier.expect_tx{.sem}{.scope}{.space}.b64 [addr], txCount;   .sem = .relaxed
// Instance: mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%r1], 4096;
__device__ __forceinline__ void mbar_expect_tx(uint32_t bar, uint32_t bytes) {
  asm volatile("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(bytes)
               : "memory");
}

// Arrival on a barrier in another CTA of the cluster (or this one): `remote_bar` comes from
// mapa_shared(bar, cta_rank) in cluster.cuh.
// PTX: mbarrier.arrive{.sem}{.scope}.shared::cluster.b64 _, [addr]{, count};
// Instance: mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%r2];
__device__ __forceinline__ void mbar_arrive_cluster(uint32_t remote_bar) {
  asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];\n" ::"r"(remote_bar)
               : "memory");
}

// Arrival on a barrier in another CTA of the cluster with release at CTA scope: the form
// production pipelines use to hand a multicast slot back to its producers (the PTX defaults,
// `mbarrier.arrive.shared::cluster`, are .release and .cta). Use it when the arriving threads
// only *read* the slot and those reads have completed (ld returned; wgmma.wait_group done):
// it orders nothing for the peer beyond the arrival itself. mbar_arrive_cluster's
// .release.cluster makes ptxas put a MEMBAR.ALL.GPU before the arrive (measured: a 2-CTA
// multicast GEMM 45% slower); keep it for arrivals that publish data the peer will read.
// PTX: mbarrier.arrive{.sem}{.scope}.shared::cluster.b64 _, [addr]{, count};
// Instance: mbarrier.arrive.release.cta.shared::cluster.b64 _, [%r2];
__device__ __forceinline__ void mbar_arrive_remote_release_slot(uint32_t remote_bar) {
  asm volatile("mbarrier.arrive.release.cta.shared::cluster.b64 _, [%0];\n" ::"r"(remote_bar)
               : "memory");
}

// Non-blocking probe: has the phase of parity `parity` completed?
// PTX: mbarrier.test_wait.parity{.sem}{.scope}{.shared{::cta}}.b64 waitComplete, [addr],
// phaseParity; Instance: mbarrier.test_wait.parity.shared::cta.b64 p, [%r1], 0;
__device__ __forceinline__ bool mbar_test_wait(uint32_t bar, uint32_t parity) {
  uint32_t done;
  asm volatile("{\n.reg .pred p;\nmbarrier.test_wait.parity.shared::cta.b64 p, [%1], %2;\n"
               "selp.u32 %0, 1, 0, p;\n}\n"
               : "=r"(done)
               : "r"(bar), "r"(parity)
               : "memory");
  return done != 0;
}

// Potentially blocking probe (the thread may sleep up to a system-dependent limit).
// Acquire at CTA scope (default); use mbar_try_wait_cluster for barriers completed by peers'
// multicast copies or remote arrivals when the data read afterwards came from another CTA.
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

// Nanoseconds of the global timer. PTX: mov.u64 d, %globaltimer;
// Instance: mov.u64 %rd1, %globaltimer;
__device__ __forceinline__ uint64_t global_timer_ns() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;\n" : "=l"(t));
  return t;
}

// mbar_wait with a deadline: false when `timeout_ns` passed first (report it, do not go on).
__device__ __forceinline__ bool mbar_wait_bounded(uint32_t bar, uint32_t parity,
                                                  uint64_t timeout_ns) {
  const uint64_t start = global_timer_ns();
  while (!mbar_try_wait(bar, parity)) {
    if (global_timer_ns() - start > timeout_ns)
      return false;
  }
  return true;
}

} // namespace sm90
