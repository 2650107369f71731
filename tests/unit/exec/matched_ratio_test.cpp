#include "exec/matched_ratio.hpp"

#include <gtest/gtest.h>

namespace ptxbench::exec {
namespace {

CompareStats stats(std::uint64_t elements, std::uint64_t failed, std::uint64_t nan = 0,
                   std::uint64_t inf = 0, std::uint64_t reference_nonfinite = 0) {
  CompareStats s;
  s.elements = elements;
  s.failed = failed;
  s.candidate_nan = nan;
  s.candidate_inf = inf;
  s.reference_nonfinite = reference_nonfinite;
  return s;
}

TEST(MatchedRatio, RatioOneLetsNoElementFail) {
  EXPECT_TRUE(judge_set(stats(1000, 0), 1.0).correct);
  const SetJudgement one_off = judge_set(stats(1000, 1), 1.0);
  EXPECT_FALSE(one_off.correct);
  EXPECT_DOUBLE_EQ(one_off.matched_ratio, 0.999);
  EXPECT_EQ(one_off.tolerated, 0u);
}

TEST(MatchedRatio, FiniteMissesUpToTheAllowancePass) {
  // The primary backward problems: 301,989,888 elements per set, ratio 1 − 1e-5.
  const std::uint64_t elements = 301'989'888;
  const SetJudgement kernel = judge_set(stats(elements, 1'464), 1.0 - 1e-5);
  EXPECT_TRUE(kernel.correct);
  EXPECT_EQ(kernel.tolerated, 1'464u);
  EXPECT_TRUE(judge_set(stats(elements, 3'019), 1.0 - 1e-5).correct);
  EXPECT_FALSE(judge_set(stats(elements, 3'021), 1.0 - 1e-5).correct);
  EXPECT_FALSE(judge_set(stats(elements, elements / 1000), 1.0 - 1e-5).correct);
}

TEST(MatchedRatio, NonFiniteMissesAreNeverTolerated) {
  const std::uint64_t elements = 1'000'000;
  EXPECT_FALSE(judge_set(stats(elements, 1, 1), 0.5).correct);       // one NaN (or sentinel)
  EXPECT_FALSE(judge_set(stats(elements, 2, 0, 1), 0.5).correct);    // one infinity
  EXPECT_FALSE(judge_set(stats(elements, 1, 0, 0, 1), 0.5).correct); // broken reference
  EXPECT_TRUE(judge_set(stats(elements, 2), 0.5).correct);
}

TEST(MatchedRatio, EmptyOutputsAreCorrect) {
  const SetJudgement empty = judge_set(stats(0, 0), 1.0);
  EXPECT_TRUE(empty.correct);
  EXPECT_DOUBLE_EQ(empty.matched_ratio, 1.0);
}

} // namespace
} // namespace ptxbench::exec
