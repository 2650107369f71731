// Warp and warpgroup helpers: register reallocation, single-thread election, warpgroup
// indices, named barriers.
#pragma once

#include "knowledge/sm90a/base.cuh"

namespace sm90 {

// Raise this warpgroup's per-thread register limit to kRegs; blocks until the CTA's pool has
// them (so the warpgroups that decrease must reach their setmaxnreg.dec). All 4 warps of the
// warpgroup execute it. Needs a register count fixed at entry: __launch_bounds__(threads, 1)
// or -maxrregcount, otherwise ptxas drops it with warning C7508. Budget:
// sum over warpgroups of 128 * regs <= 65536. New registers hold undefined values.
// PTX: setmaxnreg.action.sync.aligned.u32 imm-reg-count;  .action = .inc | .dec, count in
//      [24, 256], multiple of 8
// Instance: setmaxnreg.inc.sync.aligned.u32 232;
template <int kRegs> __device__ __forceinline__ void setmaxnreg_inc() {
  static_assert(kRegs >= 24 && kRegs <= 256 && kRegs % 8 == 0, "setmaxnreg: 24..256, step 8");
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(kRegs));
}

// Lower this warpgroup's limit to kRegs and release the rest to the CTA's pool.
// Instance: setmaxnreg.dec.sync.aligned.u32 40;
template <int kRegs> __device__ __forceinline__ void setmaxnreg_dec() {
  static_assert(kRegs >= 24 && kRegs <= 256 && kRegs % 8 == 0, "setmaxnreg: 24..256, step 8");
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(kRegs));
}

// True in exactly one active lane of the warp (the lowest of the full mask); every lane of the
// warp must call it.
// PTX: elect.sync d|p, membermask;
// Instance: elect.sync %r1|%p1, 0xffffffff;
__device__ __forceinline__ bool elect_one_sync() {
  uint32_t elected;
  asm volatile(
      "{\n.reg .b32 r;\n.reg .pred p;\nelect.sync r|p, 0xffffffff;\nselp.u32 %0, 1, 0, p;\n}\n"
      : "=r"(elected));
  return elected != 0;
}

// Lane index. PTX: mov.u32 d, %laneid;   Instance: mov.u32 %r1, %laneid;
__device__ __forceinline__ uint32_t lane_id() {
  uint32_t lane;
  asm volatile("mov.u32 %0, %%laneid;\n" : "=r"(lane));
  return lane;
}

// Warpgroup of this thread in a 1-D block, made warp-uniform so branches on it stay uniform.
__device__ __forceinline__ uint32_t warpgroup_index() {
  return __shfl_sync(0xffffffffu, threadIdx.x / 128u, 0);
}

// Warp 0..3 inside the warpgroup, warp-uniform.
__device__ __forceinline__ uint32_t warp_index_in_warpgroup() {
  return __shfl_sync(0xffffffffu, (threadIdx.x / 32u) % 4u, 0);
}

// Thread 0..127 inside the warpgroup.
__device__ __forceinline__ uint32_t thread_index_in_warpgroup() {
  return threadIdx.x % 128u;
}

// Named barrier over `threads` threads (multiple of 32); id 0 is __syncthreads'.
// PTX: barrier.sync{.aligned} a{, b};   a in [0, 15]
// Instance: barrier.sync.aligned 1, 128;
__device__ __forceinline__ void named_barrier_sync(uint32_t id, uint32_t threads) {
  asm volatile("barrier.sync.aligned %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

// Arrive on a named barrier without waiting (producer side of a producer/consumer hand-off).
// PTX: barrier.arrive{.aligned} a, b;
// Instance: barrier.arrive.aligned 2, 256;
__device__ __forceinline__ void named_barrier_arrive(uint32_t id, uint32_t threads) {
  asm volatile("barrier.arrive.aligned %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

} // namespace sm90
