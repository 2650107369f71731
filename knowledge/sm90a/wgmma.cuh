// wgmma (PTX ISA 9.1 §9.7.15): warpgroup-wide asynchronous MMA, bf16 x bf16 -> f32, m64nNk16.
//
// Executed by one whole warpgroup (4 consecutive warps, the first warp index a multiple of 4),
// all 128 threads with identical descriptors. Sequence per batch:
//   wgmma_fence(); wgmma_bf16_ss/rs(...) x n; wgmma_commit_group(); wgmma_wait_group<0>();
// wgmma_fence() is needed before the first wgmma and whenever registers of the accumulator or
// of the A fragment were touched by other instructions since the last wgmma.
// Touching the accumulators before the wait that covers them is undefined.
// wgmma_fence_operand(d) after the wait keeps the compiler from moving reads of d across it.
//
// Accumulator fragment (f32, m64nN; N/2 floats per thread). Thread t of the warpgroup:
// w = t/32, g = (t%32)/4, q = t%4. For i in [0, N/8):
//   d[4i+0] = D(16w+g,   8i+2q)    d[4i+1] = D(16w+g,   8i+2q+1)
//   d[4i+2] = D(16w+g+8, 8i+2q)    d[4i+3] = D(16w+g+8, 8i+2q+1)
// Register A fragment (RS form; 4 x .b32 = 8 bf16 per thread, k16 step starting at k0):
//   a[0] = A(16w+g,   k0+2q, +1)   a[1] = A(16w+g+8, k0+2q, +1)
//   a[2] = A(16w+g,   k0+2q+8,+9)  a[3] = A(16w+g+8, k0+2q+8,+9)   (low half = lower k)
#pragma once

#include "knowledge/sm90a/base.cuh"
#include "knowledge/sm90a/smem_desc.cuh"

namespace sm90 {

// D = A*B (kZero) or D = A*B + D (kAccumulate); the wgmma `scale-d` predicate.
enum class ScaleD : uint32_t { kZero = 0, kAccumulate = 1 };

// PTX: wgmma.fence.sync.aligned;
// Instance: wgmma.fence.sync.aligned;
__device__ __forceinline__ void wgmma_fence() {
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
}

// PTX: wgmma.commit_group.sync.aligned;
// Instance: wgmma.commit_group.sync.aligned;
__device__ __forceinline__ void wgmma_commit_group() {
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
}

// Wait until at most kPending committed wgmma groups are still running.
// PTX: wgmma.wait_group.sync.aligned N;
// Instance: wgmma.wait_group.sync.aligned 0;
template <int kPending> __device__ __forceinline__ void wgmma_wait_group() {
  static_assert(kPending >= 0 && kPending <= 7, "wgmma.wait_group takes 0..7");
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(kPending) : "memory");
}

// Compiler-only fence: each accumulator register is read and written here, so no access to it
// moves across this point. No instruction is emitted.
template <int kRegs> __device__ __forceinline__ void wgmma_fence_operand(float (&d)[kRegs]) {
#pragma unroll
  for (int i = 0; i < kRegs; ++i)
    asm volatile("" : "+f"(d[i])::"memory");
}

namespace detail {

template <int N> struct WgmmaBf16;

#define SM90_ACC8(b)                                                                               \
  "+f"(d[(b) + 0]), "+f"(d[(b) + 1]), "+f"(d[(b) + 2]), "+f"(d[(b) + 3]), "+f"(d[(b) + 4]),        \
      "+f"(d[(b) + 5]), "+f"(d[(b) + 6]), "+f"(d[(b) + 7])

template <> struct WgmmaBf16<32> {
  template <int kScaleA, int kScaleB, int kTransA, int kTransB>
  __device__ __forceinline__ static void ss(float (&d)[16], uint64_t a, uint64_t b,
                                            uint32_t scale_d) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %18, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16 {"
                 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15"
                 "}, %16, %17, p, %19, %20, %21, %22;\n}\n"
                 : SM90_ACC8(0), SM90_ACC8(8)
                 : "l"(a), "l"(b), "r"(scale_d), "n"(kScaleA), "n"(kScaleB), "n"(kTransA),
                   "n"(kTransB)
                 : "memory");
  }
  template <int kScaleA, int kScaleB, int kTransB>
  __device__ __forceinline__ static void rs(float (&d)[16], const uint32_t (&a)[4], uint64_t b,
                                            uint32_t scale_d) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %21, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16 {"
                 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15"
                 "}, {%16, %17, %18, %19}, %20, p, %22, %23, %24;\n}\n"
                 : SM90_ACC8(0), SM90_ACC8(8)
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(scale_d), "n"(kScaleA),
                   "n"(kScaleB), "n"(kTransB)
                 : "memory");
  }
};

template <> struct WgmmaBf16<64> {
  template <int kScaleA, int kScaleB, int kTransA, int kTransB>
  __device__ __forceinline__ static void ss(float (&d)[32], uint64_t a, uint64_t b,
                                            uint32_t scale_d) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {"
                 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
                 "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
                 "}, %32, %33, p, %35, %36, %37, %38;\n}\n"
                 : SM90_ACC8(0), SM90_ACC8(8), SM90_ACC8(16), SM90_ACC8(24)
                 : "l"(a), "l"(b), "r"(scale_d), "n"(kScaleA), "n"(kScaleB), "n"(kTransA),
                   "n"(kTransB)
                 : "memory");
  }
  template <int kScaleA, int kScaleB, int kTransB>
  __device__ __forceinline__ static void rs(float (&d)[32], const uint32_t (&a)[4], uint64_t b,
                                            uint32_t scale_d) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %37, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {"
                 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
                 "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31"
                 "}, {%32, %33, %34, %35}, %36, p, %38, %39, %40;\n}\n"
                 : SM90_ACC8(0), SM90_ACC8(8), SM90_ACC8(16), SM90_ACC8(24)
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(scale_d), "n"(kScaleA),
                   "n"(kScaleB), "n"(kTransB)
                 : "memory");
  }
};

template <> struct WgmmaBf16<128> {
  template <int kScaleA, int kScaleB, int kTransA, int kTransB>
  __device__ __forceinline__ static void ss(float (&d)[64], uint64_t a, uint64_t b,
                                            uint32_t scale_d) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %66, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {"
                 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
                 "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
                 "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
                 "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
                 "}, %64, %65, p, %67, %68, %69, %70;\n}\n"
                 : SM90_ACC8(0), SM90_ACC8(8), SM90_ACC8(16), SM90_ACC8(24), SM90_ACC8(32),
                   SM90_ACC8(40), SM90_ACC8(48), SM90_ACC8(56)
                 : "l"(a), "l"(b), "r"(scale_d), "n"(kScaleA), "n"(kScaleB), "n"(kTransA),
                   "n"(kTransB)
                 : "memory");
  }
  template <int kScaleA, int kScaleB, int kTransB>
  __device__ __forceinline__ static void rs(float (&d)[64], const uint32_t (&a)[4], uint64_t b,
                                            uint32_t scale_d) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {"
                 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
                 "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
                 "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
                 "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63"
                 "}, {%64, %65, %66, %67}, %68, p, %70, %71, %72;\n}\n"
                 : SM90_ACC8(0), SM90_ACC8(8), SM90_ACC8(16), SM90_ACC8(24), SM90_ACC8(32),
                   SM90_ACC8(40), SM90_ACC8(48), SM90_ACC8(56)
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(scale_d), "n"(kScaleA),
                   "n"(kScaleB), "n"(kTransB)
                 : "memory");
  }
};

template <> struct WgmmaBf16<192> {
  template <int kScaleA, int kScaleB, int kTransA, int kTransB>
  __device__ __forceinline__ static void ss(float (&d)[96], uint64_t a, uint64_t b,
                                            uint32_t scale_d) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %98, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n192k16.f32.bf16.bf16 {"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
        "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
        "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
        "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "
        "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95"
        "}, %96, %97, p, %99, %100, %101, %102;\n}\n"
        : SM90_ACC8(0), SM90_ACC8(8), SM90_ACC8(16), SM90_ACC8(24), SM90_ACC8(32), SM90_ACC8(40),
          SM90_ACC8(48), SM90_ACC8(56), SM90_ACC8(64), SM90_ACC8(72), SM90_ACC8(80), SM90_ACC8(88)
        : "l"(a), "l"(b), "r"(scale_d), "n"(kScaleA), "n"(kScaleB), "n"(kTransA), "n"(kTransB)
        : "memory");
  }
  template <int kScaleA, int kScaleB, int kTransB>
  __device__ __forceinline__ static void rs(float (&d)[96], const uint32_t (&a)[4], uint64_t b,
                                            uint32_t scale_d) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %101, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n192k16.f32.bf16.bf16 {"
                 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
                 "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
                 "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
                 "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
                 "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "
                 "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95"
                 "}, {%96, %97, %98, %99}, %100, p, %102, %103, %104;\n}\n"
                 : SM90_ACC8(0), SM90_ACC8(8), SM90_ACC8(16), SM90_ACC8(24), SM90_ACC8(32),
                   SM90_ACC8(40), SM90_ACC8(48), SM90_ACC8(56), SM90_ACC8(64), SM90_ACC8(72),
                   SM90_ACC8(80), SM90_ACC8(88)
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(scale_d), "n"(kScaleA),
                   "n"(kScaleB), "n"(kTransB)
                 : "memory");
  }
};

template <> struct WgmmaBf16<256> {
  template <int kScaleA, int kScaleB, int kTransA, int kTransB>
  __device__ __forceinline__ static void ss(float (&d)[128], uint64_t a, uint64_t b,
                                            uint32_t scale_d) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {"
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
        "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
        "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
        "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "
        "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "
        "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, "
        "%111, "
        "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, "
        "%127"
        "}, %128, %129, p, %131, %132, %133, %134;\n}\n"
        : SM90_ACC8(0), SM90_ACC8(8), SM90_ACC8(16), SM90_ACC8(24), SM90_ACC8(32), SM90_ACC8(40),
          SM90_ACC8(48), SM90_ACC8(56), SM90_ACC8(64), SM90_ACC8(72), SM90_ACC8(80), SM90_ACC8(88),
          SM90_ACC8(96), SM90_ACC8(104), SM90_ACC8(112), SM90_ACC8(120)
        : "l"(a), "l"(b), "r"(scale_d), "n"(kScaleA), "n"(kScaleB), "n"(kTransA), "n"(kTransB)
        : "memory");
  }
  template <int kScaleA, int kScaleB, int kTransB>
  __device__ __forceinline__ static void rs(float (&d)[128], const uint32_t (&a)[4], uint64_t b,
                                            uint32_t scale_d) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %133, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 {"
                 "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
                 "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, "
                 "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, "
                 "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, "
                 "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, "
                 "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, "
                 "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, "
                 "%110, %111, "
                 "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, "
                 "%125, %126, %127"
                 "}, {%128, %129, %130, %131}, %132, p, %134, %135, %136;\n}\n"
                 : SM90_ACC8(0), SM90_ACC8(8), SM90_ACC8(16), SM90_ACC8(24), SM90_ACC8(32),
                   SM90_ACC8(40), SM90_ACC8(48), SM90_ACC8(56), SM90_ACC8(64), SM90_ACC8(72),
                   SM90_ACC8(80), SM90_ACC8(88), SM90_ACC8(96), SM90_ACC8(104), SM90_ACC8(112),
                   SM90_ACC8(120)
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(scale_d), "n"(kScaleA),
                   "n"(kScaleB), "n"(kTransB)
                 : "memory");
  }
};

#undef SM90_ACC8

} // namespace detail

// SS form: A and B from shared memory through descriptors (see smem_desc.cuh).
// PTX: wgmma.mma_async.sync.aligned.m64nNk16.f32.bf16.bf16 d, a-desc, b-desc, scale-d,
//          imm-scale-a, imm-scale-b, imm-trans-a, imm-trans-b;
//   d: {N/2 x .f32}; a-desc, b-desc: .u64; scale-d: predicate (false: D = A*B);
//   imm-scale-a/b: 1 or -1 (negates the operand); imm-trans-a/b: 0 K-major, 1 MN-major.
// Instance: wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {%f0, ..., %f63}, %rd1, %rd2,
//           p, 1, 1, 0, 1;
// N in {32, 64, 128, 192, 256}.
template <int N, Major kMajorA = Major::kK, Major kMajorB = Major::kK, int kScaleA = 1,
          int kScaleB = 1>
__device__ __forceinline__ void wgmma_bf16_ss(float (&d)[N / 2], uint64_t desc_a, uint64_t desc_b,
                                              ScaleD scale_d) {
  static_assert(kScaleA == 1 || kScaleA == -1, "imm-scale-a is 1 or -1");
  static_assert(kScaleB == 1 || kScaleB == -1, "imm-scale-b is 1 or -1");
  detail::WgmmaBf16<N>::template ss<kScaleA, kScaleB, static_cast<int>(kMajorA),
                                    static_cast<int>(kMajorB)>(d, desc_a, desc_b,
                                                               static_cast<uint32_t>(scale_d));
}

// RS form: A from registers (fragment in the header comment), B from shared memory.
// PTX: wgmma.mma_async.sync.aligned.m64nNk16.f32.bf16.bf16 d, a, b-desc, scale-d,
//          imm-scale-a, imm-scale-b, imm-trans-b;
//   a: {4 x .b32}, each two bf16 (lower k in the low 16 bits).
// Instance: wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 {%f0, ..., %f31},
//           {%r1, %r2, %r3, %r4}, %rd2, p, 1, 1, 0;
template <int N, Major kMajorB = Major::kK, int kScaleA = 1, int kScaleB = 1>
__device__ __forceinline__ void wgmma_bf16_rs(float (&d)[N / 2], const uint32_t (&a)[4],
                                              uint64_t desc_b, ScaleD scale_d) {
  static_assert(kScaleA == 1 || kScaleA == -1, "imm-scale-a is 1 or -1");
  static_assert(kScaleB == 1 || kScaleB == -1, "imm-scale-b is 1 or -1");
  detail::WgmmaBf16<N>::template rs<kScaleA, kScaleB, static_cast<int>(kMajorB)>(
      d, a, desc_b, static_cast<uint32_t>(scale_d));
}

} // namespace sm90
