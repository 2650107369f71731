#include "exec/compare_rule.hpp"
#include "exec/gpu_ops.hpp"

#include <cmath>
#include <cstring>
#include <gtest/gtest.h>
#include <limits>

namespace ptxbench::exec {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

ElementClass judge(float x, float y) {
  return judge_element(x, y, Tolerance{}).klass;
}

TEST(CompareRule, ElementFailsOnlyWhenBothThresholdsAreExceeded) {
  EXPECT_EQ(judge(1.0f, 1.0f), ElementClass::pass);
  EXPECT_EQ(judge(0.0f, 0.009f), ElementClass::pass);        // abs within atol
  EXPECT_EQ(judge(1000.0f, 1005.0f), ElementClass::pass);    // rel within rtol
  EXPECT_EQ(judge(0.0f, 0.02f), ElementClass::fail_numeric); // abs and rel both out
  EXPECT_EQ(judge(10.0f, 10.5f), ElementClass::fail_numeric);
}

TEST(CompareRule, ErrorsAreAbsoluteAndRelativeToTheReference) {
  const ElementVerdict v = judge_element(1.5f, 1.0f, Tolerance{});
  EXPECT_FLOAT_EQ(v.abs_error, 0.5f);
  EXPECT_NEAR(v.rel_error, 0.5f, 1e-6f);
}

TEST(CompareRule, CandidateNanFailsEvenAgainstNanReference) {
  EXPECT_EQ(judge(kNaN, 1.0f), ElementClass::fail_candidate_nan);
  EXPECT_EQ(judge(kNaN, kNaN), ElementClass::fail_candidate_nan);
}

TEST(CompareRule, TheUntouchedSentinelIsNanInEveryFloatDtype) {
  std::uint32_t f32 = 0xFFFFFFFFu;
  float value = 0.0f;
  std::memcpy(&value, &f32, sizeof value);
  EXPECT_TRUE(std::isnan(value));
  // bf16 0xFFFF widens to 0xFFFF0000: exponent all ones, mantissa non-zero.
  std::uint32_t bf16_wide = 0xFFFF0000u;
  std::memcpy(&value, &bf16_wide, sizeof value);
  EXPECT_TRUE(std::isnan(value));
  EXPECT_EQ(judge(value, 0.0f), ElementClass::fail_candidate_nan);
}

TEST(CompareRule, InfinityPassesOnlyWhenTheReferenceHasTheSameInfinity) {
  EXPECT_EQ(judge(-kInf, -kInf), ElementClass::pass);
  EXPECT_EQ(judge(kInf, kInf), ElementClass::pass);
  EXPECT_EQ(judge(kInf, -kInf), ElementClass::fail_candidate_inf);
  EXPECT_EQ(judge(kInf, 3.0f), ElementClass::fail_candidate_inf);
}

TEST(CompareRule, NonFiniteReferenceNeverMatchesAFiniteCandidate) {
  EXPECT_EQ(judge(1.0f, kNaN), ElementClass::fail_reference_nonfinite);
  EXPECT_EQ(judge(1.0f, kInf), ElementClass::fail_reference_nonfinite);
}

TEST(CompareStats, ReportedErrorsFollowFlashInferTrace) {
  CompareStats stats;
  stats.max_abs_error = 0.5;
  stats.max_rel_error = 0.25;
  EXPECT_EQ(stats.reported_abs_error(), 0.5);
  stats.candidate_nan = 1;
  EXPECT_TRUE(std::isnan(stats.reported_abs_error()));
  stats.candidate_inf = 1;
  EXPECT_TRUE(std::isinf(stats.reported_rel_error()));
}

TEST(CompareStats, MergeAddsCountsAndKeepsMaxima) {
  CompareStats a, b;
  a.elements = 10;
  a.failed = 1;
  a.max_abs_error = 0.1;
  b.elements = 5;
  b.failed = 2;
  b.max_abs_error = 0.3;
  a.merge(b);
  EXPECT_EQ(a.elements, 15u);
  EXPECT_EQ(a.failed, 3u);
  EXPECT_EQ(a.max_abs_error, 0.3);
}

} // namespace
} // namespace ptxbench::exec
