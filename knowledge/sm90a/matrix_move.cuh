// ldmatrix / stmatrix (PTX ISA 9.1 §9.7.14.5.15-16): warp-wide moves of 8x8 b16 matrices between
// registers and shared memory. Fragment of one 8x8 matrix: lane l holds row l/4, columns
// 2(l%4) and 2(l%4)+1 in one .b32 (lower column in the low half). With .trans lane l holds
// row 2(l%4) and 2(l%4)+1 of column l/4 instead (the transposed matrix's fragment).
// Addresses: for .xN, lanes 8j..8j+7 give the row addresses of matrix j (16-B aligned rows); .x1
// reads addresses from lanes 0-7 and .x2 from lanes 0-15 only. Register j holds
// matrix j. The wgmma f32 accumulator pairs (d[4i], d[4i+1]) and (d[4i+2], d[4i+3]) packed
// to bf16x2 are exactly stmatrix fragments of rows 16w..16w+7 and 16w+8..16w+15, columns 8i..8i+7.
#pragma once

#include "knowledge/sm90a/base.cuh"

namespace sm90 {

enum class Transpose : int { kNo = 0, kYes = 1 };

// PTX: ldmatrix.sync.aligned.m8n8.num{.trans}{.shared{::cta}}.b16 r, [p];  .num = .x1|.x2|.x4
// Instance: ldmatrix.sync.aligned.m8n8.x1.shared::cta.b16 {%r1}, [%r5];
template <Transpose kT = Transpose::kNo>
__device__ __forceinline__ uint32_t ldmatrix_x1(uint32_t addr) {
  uint32_t r;
  if constexpr (kT == Transpose::kYes)
    asm volatile("ldmatrix.sync.aligned.m8n8.x1.trans.shared::cta.b16 {%0}, [%1];\n"
                 : "=r"(r)
                 : "r"(addr)
                 : "memory");
  else
    asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared::cta.b16 {%0}, [%1];\n"
                 : "=r"(r)
                 : "r"(addr)
                 : "memory");
  return r;
}

// Instance: ldmatrix.sync.aligned.m8n8.x2.trans.shared::cta.b16 {%r1, %r2}, [%r5];
template <Transpose kT = Transpose::kNo>
__device__ __forceinline__ void ldmatrix_x2(uint32_t (&r)[2], uint32_t addr) {
  if constexpr (kT == Transpose::kYes)
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared::cta.b16 {%0, %1}, [%2];\n"
                 : "=r"(r[0]), "=r"(r[1])
                 : "r"(addr)
                 : "memory");
  else
    asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared::cta.b16 {%0, %1}, [%2];\n"
                 : "=r"(r[0]), "=r"(r[1])
                 : "r"(addr)
                 : "memory");
}

// Instance: ldmatrix.sync.aligned.m8n8.x4.shared::cta.b16 {%r1, %r2, %r3, %r4}, [%r5];
template <Transpose kT = Transpose::kNo>
__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], uint32_t addr) {
  if constexpr (kT == Transpose::kYes)
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared::cta.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr)
                 : "memory");
  else
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared::cta.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr)
                 : "memory");
}

// PTX: stmatrix.sync.aligned.m8n8.num{.trans}{.shared{::cta}}.b16 [p], r;  .num = .x1|.x2|.x4
// Instance: stmatrix.sync.aligned.m8n8.x1.shared::cta.b16 [%r5], {%r1};
template <Transpose kT = Transpose::kNo>
__device__ __forceinline__ void stmatrix_x1(uint32_t addr, uint32_t r) {
  if constexpr (kT == Transpose::kYes)
    asm volatile("stmatrix.sync.aligned.m8n8.x1.trans.shared::cta.b16 [%0], {%1};\n" ::"r"(addr),
                 "r"(r)
                 : "memory");
  else
    asm volatile("stmatrix.sync.aligned.m8n8.x1.shared::cta.b16 [%0], {%1};\n" ::"r"(addr), "r"(r)
                 : "memory");
}

// Instance: stmatrix.sync.aligned.m8n8.x2.trans.shared::cta.b16 [%r5], {%r1, %r2};
template <Transpose kT = Transpose::kNo>
__device__ __forceinline__ void stmatrix_x2(uint32_t addr, const uint32_t (&r)[2]) {
  if constexpr (kT == Transpose::kYes)
    asm volatile(
        "stmatrix.sync.aligned.m8n8.x2.trans.shared::cta.b16 [%0], {%1, %2};\n" ::"r"(addr),
        "r"(r[0]), "r"(r[1])
        : "memory");
  else
    asm volatile("stmatrix.sync.aligned.m8n8.x2.shared::cta.b16 [%0], {%1, %2};\n" ::"r"(addr),
                 "r"(r[0]), "r"(r[1])
                 : "memory");
}

// Instance: stmatrix.sync.aligned.m8n8.x4.shared::cta.b16 [%r5], {%r1, %r2, %r3, %r4};
template <Transpose kT = Transpose::kNo>
__device__ __forceinline__ void stmatrix_x4(uint32_t addr, const uint32_t (&r)[4]) {
  if constexpr (kT == Transpose::kYes)
    asm volatile(
        "stmatrix.sync.aligned.m8n8.x4.trans.shared::cta.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(addr),
        "r"(r[0]), "r"(r[1]), "r"(r[2]), "r"(r[3])
        : "memory");
  else
    asm volatile(
        "stmatrix.sync.aligned.m8n8.x4.shared::cta.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(addr),
        "r"(r[0]), "r"(r[1]), "r"(r[2]), "r"(r[3])
        : "memory");
}

} // namespace sm90
