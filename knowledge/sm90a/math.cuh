// Arithmetic of the softmax and epilogue paths: the one-instruction base-2 exponential and
// the packing of two fp32 values into one bf16x2 register.
#pragma once

#include "knowledge/sm90a/base.cuh"

namespace sm90 {

// 2^x in one MUFU.EX2. exp2f() without -use_fast_math compiles to four instructions (a compare
// with -126, a halving FMUL, MUFU.EX2, a squaring FMUL) to keep subnormal results; in an
// online softmax those results are < 2^-126 of the row maximum's weight and may be 0, so the
// fix-up only costs issue slots next to the MUFU unit (16 results/clk/SM on Hopper).
// Results: 2^-inf = +0, 2^+inf = +inf, NaN stays NaN; x < -126 gives +0 (flushed), and a
// subnormal x counts as 0 (2^x = 1). Maximum relative error about 2^-22 (PTX ISA, ex2): not
// bit-identical to exp2f, so two kernels that round 2^x to bf16 can differ by 1 ulp there.
// PTX: ex2.approx.atype d, a;  ex2.approx.ftz.btype d, a;  .atype = .f16 | .f16x2;
//      .btype = .f32 | .bf16 | .bf16x2  (.f32 may drop .ftz: then subnormals are kept)
// Instance: ex2.approx.ftz.f32 %f2, %f1;
__device__ __forceinline__ float exp2_approx_ftz(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}

// bf16x2 register {lo in bits 0..15, hi in bits 16..31}, each rounded to nearest even (one
// F2FP.BF16.F32.PACK_AB). The register layout wgmma RS A fragments and stmatrix take: element
// 2j of a fragment row is the low half. Pitfall: the PTX operand order is the reverse — the
// FIRST source goes to the UPPER half — which is why this wrapper takes (lo, hi) and swaps.
// PTX: cvt.rn{.relu}{.satfinite}.bf16x2.f32 d, a, b;   d = {bf16(a) << 16 | bf16(b)}
// Instance: cvt.rn.bf16x2.f32 %r1, %f2, %f1;
__device__ __forceinline__ uint32_t pack_bf16x2(float lo, float hi) {
  uint32_t packed;
  asm("cvt.rn.bf16x2.f32 %0, %1, %2;\n" : "=r"(packed) : "f"(hi), "f"(lo));
  return packed;
}

} // namespace sm90
