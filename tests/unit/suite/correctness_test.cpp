#include "suite/correctness.hpp"
#include "suite/suite.hpp"

#include <gtest/gtest.h>

namespace ptxbench::suite {
namespace {

const Suite& shipped() {
  static const Suite suite = *Suite::load_default();
  return suite;
}

TEST(CorrectnessRule, EveryElementMustPassExceptInTheAttentionBackward) {
  for (const Problem& problem : shipped().problems()) {
    const CorrectnessRule rule = correctness_rule(problem);
    EXPECT_EQ(rule.atol, 1e-2) << problem.name();
    EXPECT_EQ(rule.rtol, 1e-2) << problem.name();
    if (problem.kind == OpKind::mha_backward) {
      EXPECT_DOUBLE_EQ(rule.required_matched_ratio, 0.99999) << problem.name();
      EXPECT_FALSE(rule.reason.empty()) << problem.name();
    } else {
      EXPECT_EQ(rule.required_matched_ratio, 1.0) << problem.name();
      EXPECT_TRUE(rule.reason.empty()) << problem.name();
    }
  }
}

TEST(CorrectnessRule, CoversThePrimaryBackwardProblems) {
  for (const char* name : {"mha_bwd_d128", "mha_bwd_d128_causal"}) {
    auto problem = shipped().find(name);
    ASSERT_TRUE(problem.has_value()) << name;
    EXPECT_LT(correctness_rule(**problem).required_matched_ratio, 1.0) << name;
  }
}

} // namespace
} // namespace ptxbench::suite
