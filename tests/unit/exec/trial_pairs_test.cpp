#include "exec/trial_pairs.hpp"

#include <gtest/gtest.h>

namespace ptxbench::exec {
namespace {

TEST(StrayPair, TheThrottledReferenceTrialOfTheAaRunIsFound) {
  // bench/results/aa_speedup_h200.md, cuDNN attention A/A, repeat 0: the third reference trial
  // ran in a clock dip.
  auto stray = stray_pair({2.4882, 2.5384, 2.8172}, {2.5329, 2.5255, 2.5491}, 0.03);
  ASSERT_TRUE(stray);
  EXPECT_EQ(stray->index, 2u);
  EXPECT_NEAR(stray->ratio, 2.8172 / 2.5491, 1e-12);
  EXPECT_NEAR(stray->median, 2.5384 / 2.5255, 1e-12);
  EXPECT_GT(stray->stray, 0.09);
}

TEST(StrayPair, PairsWithinTheLimitAreLeftAlone) {
  // The GEMM A/A of the same run: per-trial ratios 0.9990 1.0021 1.0023.
  EXPECT_FALSE(stray_pair({0.7572, 0.7602, 0.7641}, {0.7580, 0.7586, 0.7624}, 0.03));
  // A candidate twice as fast as the reference in every pair strays from nothing.
  EXPECT_FALSE(stray_pair({2.0, 2.02, 1.99}, {1.0, 1.01, 1.0}, 0.03));
}

TEST(StrayPair, ACandidateTrialThatRanFastIsFoundToo) {
  auto stray = stray_pair({1.0, 1.0, 1.0, 1.0}, {1.0, 0.9, 1.0, 1.01}, 0.03);
  ASSERT_TRUE(stray);
  EXPECT_EQ(stray->index, 1u);
  EXPECT_NEAR(stray->stray, 1.0 / 0.9 - 1.0, 1e-12); // ratios 1, 1.111, 1, 0.990: median 1
}

TEST(StrayPair, TooFewPairsMismatchedListsOrNoLatencyGiveNothing) {
  EXPECT_FALSE(stray_pair({1.0, 2.0}, {1.0, 1.0}, 0.03));
  EXPECT_FALSE(stray_pair({1.0, 1.0, 2.0}, {1.0, 1.0}, 0.03));
  EXPECT_FALSE(stray_pair({1.0, 1.0, 2.0}, {1.0, 0.0, 1.0}, 0.03));
  EXPECT_FALSE(stray_pair({1.0, -1.0, 2.0}, {1.0, 1.0, 1.0}, 0.03));
}

int timed_calls(const std::vector<TrialChunk>& chunks) {
  int timed = 0;
  for (const TrialChunk& c : chunks)
    timed += c.iterations;
  return timed;
}

TEST(TrialChunks, OneByOneTheFirstChunkCarriesTheWarmUpAndEveryOtherOneTimedCall) {
  const auto chunks = trial_chunks(10, 50, 1);
  ASSERT_EQ(chunks.size(), 50u);
  EXPECT_EQ(chunks[0].warmup, 10);
  EXPECT_EQ(chunks[0].iterations, 1);
  for (std::size_t i = 1; i < chunks.size(); ++i) {
    EXPECT_EQ(chunks[i].warmup, 0) << i;
    EXPECT_EQ(chunks[i].iterations, 1) << i;
  }
}

TEST(TrialChunks, AnUnevenLastChunkKeepsTheTrialsTimedCallCount) {
  const auto chunks = trial_chunks(10, 50, 15);
  ASSERT_EQ(chunks.size(), 4u);
  EXPECT_EQ(chunks.front().warmup, 10);
  EXPECT_EQ(chunks.back().warmup, 0);
  EXPECT_EQ(chunks.back().iterations, 5);
  EXPECT_EQ(timed_calls(chunks), 50);
  EXPECT_EQ(timed_calls(trial_chunks(3, 7, 2)), 7);
}

TEST(TrialChunks, NoInterleavingOrChunksAsLongAsTheTrialGiveTheWholeTrial) {
  for (int interleave : {0, -1, 50, 80}) {
    const auto chunks = trial_chunks(10, 50, interleave);
    ASSERT_EQ(chunks.size(), 1u) << interleave;
    EXPECT_EQ(chunks[0].warmup, 10);
    EXPECT_EQ(chunks[0].iterations, 50);
  }
}

} // namespace
} // namespace ptxbench::exec
