// The per-element correctness rule, shared by the GPU comparison kernel and its host twin.
//
// Problem. FlashInfer-Trace judges a candidate output element x against the reference y with
// two independent thresholds: it fails iff |x−y| > atol AND |x−y|/(|y|+1e-8) > rtol
// (atol = rtol = 1e-2), and every element must pass. Upstream comparisons with NaN are
// silently "matched" (flashinfer-bench PR #429), and ±inf in the candidate fails outright.
//
// Approach. One pure function decides one element and yields the errors to reduce:
//  - a NaN or ±inf in the candidate fails, except an infinity equal to the reference's
//    (a correct -inf log-sum-exp of an empty row passes with zero error);
//  - a NaN or ±inf in the reference with a finite candidate fails too (nothing to compare
//    against is never a match), counted apart so a broken reference is visible;
//  - otherwise the two-threshold rule above, in float32 (outputs are widened first).
// Invariant: the reported errors follow FlashInfer-Trace: +inf when any candidate infinity
// failed, NaN when any candidate NaN failed, else the maxima over finite elements.
#pragma once

#include <cmath>

#ifdef __CUDACC__
#define PTXBENCH_EXEC_HD __host__ __device__
#else
#define PTXBENCH_EXEC_HD
#endif

namespace ptxbench::exec {

struct Tolerance {
  float atol = 1e-2f;
  float rtol = 1e-2f;
};

inline constexpr float kRelativeEpsilon = 1e-8f;

enum class ElementClass : unsigned {
  pass = 0,
  fail_numeric = 1,       // both finite, outside both tolerances
  fail_candidate_nan = 2, // candidate NaN (also catches the untouched 0xFF sentinel)
  fail_candidate_inf = 3, // candidate ±inf not equal to the reference
  fail_reference_nonfinite = 4,
};

struct ElementVerdict {
  ElementClass klass = ElementClass::pass;
  float abs_error = 0.0f; // finite comparisons only
  float rel_error = 0.0f;
};

PTXBENCH_EXEC_HD inline ElementVerdict judge_element(float x, float y, Tolerance tolerance) {
  ElementVerdict verdict;
  if (std::isnan(x)) {
    verdict.klass = ElementClass::fail_candidate_nan;
    return verdict;
  }
  if (std::isinf(x)) {
    if (!(std::isinf(y) && x == y))
      verdict.klass = ElementClass::fail_candidate_inf;
    return verdict;
  }
  if (!std::isfinite(y)) {
    verdict.klass = ElementClass::fail_reference_nonfinite;
    return verdict;
  }
  verdict.abs_error = std::fabs(x - y);
  verdict.rel_error = verdict.abs_error / (std::fabs(y) + kRelativeEpsilon);
  if (verdict.abs_error > tolerance.atol && verdict.rel_error > tolerance.rtol)
    verdict.klass = ElementClass::fail_numeric;
  return verdict;
}

} // namespace ptxbench::exec
