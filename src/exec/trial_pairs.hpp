// How a pair of trials is cut into interleaved chunks (gpu_timing.cpp "Chunks"), which pair of
// trials strays from the others (gpu_timing.cpp "Outlier pairs"), and which timed calls have
// their outputs compared (docs/evaluation.md "Every timed call may be checked").
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace ptxbench::exec {

struct StrayPair {
  std::size_t index = 0;
  double ratio = 0.0;  // reference / candidate of that pair
  double median = 0.0; // median ratio over all pairs
  double stray = 0.0;  // ratio / median - 1
};

// One side's stretch of a trial between two hand-overs: `warmup` untimed calls, then
// `iterations` timed ones.
struct TrialChunk {
  int warmup = 0;
  int iterations = 0;
};

// The chunks of one side's trial of `warmup` + `iterations` calls when the sides hand over
// every `interleave_calls` timed calls: the first chunk carries the trial's warm-up, the later
// ones only timed calls. `interleave_calls` <= 0 or >= `iterations` gives the whole trial as
// one chunk.
std::vector<TrialChunk> trial_chunks(int warmup, int iterations, int interleave_calls);

// The pair whose reference/candidate ratio strays most from the median ratio, if it strays
// by more than `limit` (a fraction); none with fewer than three pairs, mismatched lists or a
// non-positive latency.
std::optional<StrayPair> stray_pair(const std::vector<double>& reference_ms,
                                    const std::vector<double>& candidate_ms, double limit);

// The share of timed calls whose outputs are compared: each call independently, so a candidate
// that skips work on k of its timed calls goes unseen with probability (1 - rate)^k, 0.4^8 =
// 6.6e-4 for k = 8 (docs/evaluation.md "Every timed call may be checked").
inline constexpr double kTimedCheckRate = 0.6;

// A generator of the check pattern, seeded from the evaluation's protocol secret (splitmix64;
// GpuEvaluation::m_secret, never the caller's input seed).
class CheckPattern {
public:
  explicit CheckPattern(std::uint64_t seed) : m_state(seed ^ 0xC3A5C85C97CB3127ull) {}
  // Which of a trial's `iterations` timed calls are compared: each with probability `rate`,
  // independently of the others, and at least one (a trial that drew none gets one, chosen
  // uniformly).
  std::vector<bool> trial(int iterations, double rate = kTimedCheckRate);
  // The next 64 random bits (the calibration requests' positions, gpu_timing.cpp).
  std::uint64_t next();

private:
  std::uint64_t m_state;
};

// A candidate's reported latencies must explain the wall time the supervisor measures around its
// timed calls: per call, beyond the overhead calibrated on the harness's own kernel, at most
// the larger of these stays unexplained (docs/evaluation.md "Timing the child cannot forge").
inline constexpr double kUnexplainedFloorMs = 0.25;
// A Triton candidate's every call also runs the Python host (ctypes, tensor views, Triton's
// launcher), which the calibration on the child's own kernel does not.
inline constexpr double kUnexplainedFloorTritonMs = 1.0;
inline constexpr double kUnexplainedShare = 0.5;
// The bound needs this many single-call requests: a median of fewer is moved by one host hiccup
// (bench/results/verdicts_h200.md); the figures are still recorded.
inline constexpr std::size_t kMinOverheadSamples = 5;
// The calibration's cap (catalogue row 9). The child knows which requests are calibrations (it
// runs its own kernel for them), so native code that rewrote its memory could delay their
// replies, raising the calibrated overhead and with it what the bound lets the candidate hide.
// Before the candidate is loaded, while no code of its has run in the process, the supervisor
// takes kPreloadCalibrations calibrations (after one it does not keep: the process's first
// trial); the calibration the bound uses is at most the largest of them plus
// max(the floor, kCalibrationAllowanceShare × their median): what a host whose load changed
// since may honestly add.
inline constexpr int kPreloadCalibrations = 4;
inline constexpr double kCalibrationAllowanceShare = 0.25;
// The cap over the calibrations taken before the load; none without them.
std::optional<double> calibration_cap(const std::vector<double>& preload_ms, double floor_ms);
// What the bound found over an evaluation's single-call requests: the median overhead left
// unexplained per call (candidate less calibration, the calibration at most its cap) and what
// is allowed.
struct UnexplainedTime {
  double unexplained_ms = 0.0;
  double allowed_ms = 0.0;
  double calibration_ms = 0.0; // the calibration the bound used
  bool capped = false;         // the calibrations' median was above the cap
  bool judged = false;         // kMinOverheadSamples candidate samples and a calibration
  bool exceeded() const { return judged && unexplained_ms > allowed_ms; }
};
UnexplainedTime unexplained_time(const std::vector<double>& candidate_overhead_ms,
                                 const std::vector<double>& calibration_ms, double candidate_ms,
                                 double floor_ms, std::optional<double> cap_ms = std::nullopt);
// Catalogue row 21's floor: the shortest time in which `flops` FLOPs can be done at the GPU's
// dense bf16 tensor peak `peak_tflop_s` (its SMs × FLOP per clock per SM × its maximum SM
// clock: measure::LiveDevice::peak_bf16_tflop_s). No kernel computes faster than its tensor
// pipes at their highest clock, so a reported latency below it is not the kernel's. The
// problem's FLOPs (suite/metrics.hpp) are what the definition needs done; none when either is
// unknown.
std::optional<double> speed_of_light_ms(std::int64_t flops, double peak_tflop_s);
// A timing phase whose calls leave more unexplained than allowed is done again from its first
// trial, at most this many times; only the last phase's figures count (gpu_timing.cpp "Timing
// again").
inline constexpr int kMaxRetimedPhases = 2;
// Calibration requests per trial, at positions drawn from the protocol secret.
inline constexpr int kCalibrationsPerTrial = 3;

// The probability that none of `skipped` timed calls is compared when each is with `rate`.
double unchecked_probability(int skipped, double rate = kTimedCheckRate);

} // namespace ptxbench::exec
