// How a pair of trials is cut into interleaved chunks (gpu_timing.cpp "Chunks"), and which
// pair of trials strays from the others (gpu_timing.cpp "Outlier pairs").
#pragma once

#include <cstddef>
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

} // namespace ptxbench::exec
