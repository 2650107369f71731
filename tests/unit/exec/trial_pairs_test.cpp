#include "exec/trial_pairs.hpp"

#include <algorithm>
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

namespace ptxbench::exec {
namespace {

TEST(CheckPattern, EveryTrialHasAtLeastOneCheckedCallAndAboutTheRateOfThem) {
  CheckPattern pattern(0x1234);
  int checked = 0, calls = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    const std::vector<bool> calls_checked = pattern.trial(50);
    ASSERT_EQ(calls_checked.size(), 50u);
    const auto in_trial = std::count(calls_checked.begin(), calls_checked.end(), true);
    EXPECT_GE(in_trial, 1);
    checked += static_cast<int>(in_trial);
    calls += 50;
  }
  EXPECT_NEAR(static_cast<double>(checked) / calls, kTimedCheckRate, 0.01);
  // Even at a rate that draws none, a trial gets one.
  CheckPattern sparse(7);
  for (int trial = 0; trial < 100; ++trial) {
    const std::vector<bool> one = sparse.trial(50, 0.0);
    EXPECT_EQ(std::count(one.begin(), one.end(), true), 1);
  }
  EXPECT_TRUE(CheckPattern(1).trial(0).empty());
}

TEST(CheckPattern, TheSecretSeedDecidesThePatternAndEachEvaluationGetsAnother) {
  EXPECT_EQ(CheckPattern(42).trial(50), CheckPattern(42).trial(50));
  EXPECT_NE(CheckPattern(42).trial(50), CheckPattern(43).trial(50));
  CheckPattern pattern(42);
  EXPECT_NE(pattern.trial(50), pattern.trial(50)) << "each trial draws anew";
}

// The bound: a candidate that skips work on k >= 8 of its 150 timed calls is caught
// with probability >= 1 - 1e-3. Analytically (1 - 0.6)^8 = 6.6e-4; simulated here against an
// adversary that skips on 8 calls of its choosing (any fixed choice is as good as another,
// since calls are checked independently of each other and of the calls' content).
TEST(CheckPattern, SkippingWorkOnEightOfOneHundredFiftyTimedCallsIsCaughtAlmostAlways) {
  EXPECT_LE(unchecked_probability(8), 1e-3);
  EXPECT_NEAR(unchecked_probability(8), 6.5536e-4, 1e-9);
  EXPECT_GT(unchecked_probability(7), 1e-3) << "the rate is no higher than the bound needs";
  const std::vector<int> skipped{3, 17, 49, 50, 77, 101, 120, 149}; // trial = call / 50
  int missed = 0;
  constexpr int kEvaluations = 200000;
  for (int evaluation = 0; evaluation < kEvaluations; ++evaluation) {
    CheckPattern pattern(static_cast<std::uint64_t>(evaluation) * 0x9E3779B97F4A7C15ull);
    std::vector<bool> all;
    for (int trial = 0; trial < 3; ++trial) {
      const std::vector<bool> t = pattern.trial(50);
      all.insert(all.end(), t.begin(), t.end());
    }
    missed += std::none_of(skipped.begin(), skipped.end(), [&](int call) { return all[call]; });
  }
  // Expected 131 misses; 3 sigma above is ~165.
  EXPECT_LT(missed, 200) << missed << " of " << kEvaluations << " evaluations missed the skips";
}

// The wall-time bound (docs/evaluation.md "Timing the child cannot forge"), with the H200's
// figures of stop 22: honest per-call overheads of ~1.96 ms, calibration alike, and one host
// hiccup of ~2.5 ms in a short protocol's two single-call requests.
TEST(UnexplainedTime, OneHiccupInAShortProtocolsTwoSamplesIsNotJudged) {
  const UnexplainedTime found =
      unexplained_time({1.96, 4.45}, {1.95, 1.96, 1.96}, 1.54, kUnexplainedFloorMs);
  EXPECT_FALSE(found.judged);
  EXPECT_FALSE(found.exceeded());
  EXPECT_NEAR(found.unexplained_ms, 1.245, 0.01); // recorded all the same
}

TEST(UnexplainedTime, HiccupsInAMinorityOfCallsLeaveTheMedianAlone) {
  const UnexplainedTime found = unexplained_time({1.96, 1.95, 4.45, 1.97, 6.1, 1.96, 1.94},
                                                 {1.95, 1.96, 1.96}, 1.54, kUnexplainedFloorMs);
  EXPECT_TRUE(found.judged);
  EXPECT_FALSE(found.exceeded());
  EXPECT_NEAR(found.unexplained_ms, 0.0, 0.02);
}

TEST(UnexplainedTime, AChildThatReportsAThirdOfItsKernelIsCaught) {
  // A 1.5 ms kernel reported as 0.5 ms: 1.0 ms more wall time per call than the calibration.
  const std::vector<double> forged(7, 1.96 + 1.0);
  const UnexplainedTime found =
      unexplained_time(forged, {1.95, 1.96, 1.96}, 0.5, kUnexplainedFloorMs);
  EXPECT_TRUE(found.exceeded());
  EXPECT_NEAR(found.allowed_ms, kUnexplainedFloorMs, 1e-9);
  // Shaving under a third (1.5 ms reported as 1.05 ms) stays within half of what is reported:
  // the forgery the bound cannot see (catalogue row 9).
  const std::vector<double> shaved(7, 1.96 + 0.45);
  EXPECT_FALSE(unexplained_time(shaved, {1.96}, 1.05, kUnexplainedFloorMs).exceeded());
}

TEST(SpeedOfLight, IsTheProblemsFlopsAtTheGpusTensorPeak) {
  // An H200: 132 SMs × 4096 dense bf16 FLOP per clock × 1980 MHz = 1070.5 TFLOP/s.
  const double peak = 132 * 4096.0 * 1980e6 / 1e12;
  const std::int64_t gemm = std::int64_t{2} * 8192 * 7168 * 5120;
  const auto floor_ms = speed_of_light_ms(gemm, peak);
  ASSERT_TRUE(floor_ms);
  EXPECT_NEAR(*floor_ms, 0.5617, 1e-3);
  // Measured on an H200 (reference/measurement.md): cuBLAS 0.73–0.75 ms on random data, 0.666 ms
  // on constant data, both above it; the cuBLAS latency reported 1.5× too low, below it.
  EXPECT_GT(0.666, *floor_ms);
  EXPECT_LT(0.74 / 1.5, *floor_ms);
  EXPECT_FALSE(speed_of_light_ms(0, peak));
  EXPECT_FALSE(speed_of_light_ms(gemm, 0.0));
}

TEST(CalibrationCap, IsTheLargestPreloadCalibrationPlusTheHostsAllowance) {
  EXPECT_FALSE(calibration_cap({}, kUnexplainedFloorMs));
  // Median 1.955 ms: a quarter of it (0.489 ms) is above the 0.25 ms floor.
  EXPECT_NEAR(*calibration_cap({1.95, 1.96, 1.94, 2.01}, kUnexplainedFloorMs),
              2.01 + kCalibrationAllowanceShare * 1.955, 1e-9);
  // A short protocol's allowance is the floor; Triton's floor is larger.
  EXPECT_NEAR(*calibration_cap({0.4, 0.5}, kUnexplainedFloorMs), 0.5 + kUnexplainedFloorMs, 1e-9);
  EXPECT_NEAR(*calibration_cap({1.95, 1.96}, kUnexplainedFloorTritonMs),
              1.96 + kUnexplainedFloorTritonMs, 1e-9);
}

TEST(CalibrationCap, AChildThatDelaysItsCalibrationsHidesNoMoreThanTheAllowance) {
  // A 1.5 ms kernel reported as 0.5 ms (1.0 ms per call hidden), and every calibration reply
  // delayed by 3 ms to cover it: uncapped the bound sees nothing.
  const std::vector<double> forged(7, 1.96 + 1.0);
  const std::vector<double> delayed{1.95 + 3.0, 1.96 + 3.0, 1.96 + 3.0};
  EXPECT_FALSE(unexplained_time(forged, delayed, 0.5, kUnexplainedFloorMs).exceeded());
  // The calibrations before the load, when no code of the candidate had run, cap it.
  const auto cap = calibration_cap({1.95, 1.96, 1.94, 1.97}, kUnexplainedFloorMs);
  const UnexplainedTime found = unexplained_time(forged, delayed, 0.5, kUnexplainedFloorMs, cap);
  EXPECT_TRUE(found.capped);
  EXPECT_NEAR(found.calibration_ms, *cap, 1e-9);
  EXPECT_TRUE(found.exceeded());
}

TEST(CalibrationCap, AnHonestPhaseWithinTheAllowanceIsJudgedOnItsOwnCalibrations) {
  // The host got busier after the load: calibrations and calls both 0.3 ms slower.
  const std::vector<double> calls(7, 1.96 + 0.3);
  const auto cap = calibration_cap({1.95, 1.96, 1.94, 1.97}, kUnexplainedFloorMs);
  const UnexplainedTime found =
      unexplained_time(calls, {2.25, 2.26, 2.27}, 1.5, kUnexplainedFloorMs, cap);
  EXPECT_FALSE(found.capped);
  EXPECT_NEAR(found.calibration_ms, 2.26, 1e-9);
  EXPECT_NEAR(found.unexplained_ms, 0.0, 1e-9);
  EXPECT_FALSE(found.exceeded());
}

} // namespace
} // namespace ptxbench::exec
