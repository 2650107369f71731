#include "exec/trial_pairs.hpp"

#include "util/stats.hpp"

#include <algorithm>
#include <cmath>

namespace ptxbench::exec {

std::vector<TrialChunk> trial_chunks(int warmup, int iterations, int interleave_calls) {
  if (interleave_calls <= 0 || interleave_calls >= iterations)
    return {{warmup, iterations}};
  std::vector<TrialChunk> chunks{{warmup, interleave_calls}};
  for (int timed = interleave_calls; timed < iterations; timed += interleave_calls)
    chunks.push_back({0, std::min(interleave_calls, iterations - timed)});
  return chunks;
}

std::optional<StrayPair> stray_pair(const std::vector<double>& reference_ms,
                                    const std::vector<double>& candidate_ms, double limit) {
  if (reference_ms.size() < 3 || reference_ms.size() != candidate_ms.size())
    return std::nullopt;
  std::vector<double> ratios;
  for (std::size_t i = 0; i < reference_ms.size(); ++i) {
    if (!(reference_ms[i] > 0.0) || !(candidate_ms[i] > 0.0))
      return std::nullopt;
    ratios.push_back(reference_ms[i] / candidate_ms[i]);
  }
  StrayPair worst;
  worst.median = util::median(ratios);
  for (std::size_t i = 0; i < ratios.size(); ++i) {
    const double stray = ratios[i] / worst.median - 1.0;
    if (std::abs(stray) > std::abs(worst.stray)) {
      worst.index = i;
      worst.ratio = ratios[i];
      worst.stray = stray;
    }
  }
  if (!(std::abs(worst.stray) > limit))
    return std::nullopt;
  return worst;
}

std::uint64_t CheckPattern::next() {
  std::uint64_t z = (m_state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

std::vector<bool> CheckPattern::trial(int iterations, double rate) {
  std::vector<bool> checked(static_cast<std::size_t>(std::max(iterations, 0)), false);
  if (checked.empty())
    return checked;
  // 53 random bits as a uniform double in [0, 1).
  auto uniform = [&] { return static_cast<double>(next() >> 11) * 0x1.0p-53; };
  bool any = false;
  for (std::size_t i = 0; i < checked.size(); ++i) {
    checked[i] = uniform() < rate;
    any = any || checked[i];
  }
  if (!any)
    checked[next() % checked.size()] = true;
  return checked;
}

double unchecked_probability(int skipped, double rate) {
  return std::pow(1.0 - rate, skipped);
}

std::optional<double> speed_of_light_ms(std::int64_t flops, double peak_tflop_s) {
  if (flops <= 0 || peak_tflop_s <= 0)
    return std::nullopt;
  return static_cast<double>(flops) / (peak_tflop_s * 1e12) * 1e3;
}

std::optional<double> calibration_cap(const std::vector<double>& preload_ms, double floor_ms) {
  if (preload_ms.empty())
    return std::nullopt;
  const double largest = *std::max_element(preload_ms.begin(), preload_ms.end());
  return largest + std::max(floor_ms, kCalibrationAllowanceShare * util::median(preload_ms));
}

UnexplainedTime unexplained_time(const std::vector<double>& candidate_overhead_ms,
                                 const std::vector<double>& calibration_ms, double candidate_ms,
                                 double floor_ms, std::optional<double> cap_ms) {
  UnexplainedTime found;
  if (candidate_overhead_ms.empty() || calibration_ms.empty())
    return found;
  found.calibration_ms = util::median(calibration_ms);
  if (cap_ms && found.calibration_ms > *cap_ms) {
    found.calibration_ms = *cap_ms;
    found.capped = true;
  }
  found.unexplained_ms = util::median(candidate_overhead_ms) - found.calibration_ms;
  found.allowed_ms = std::max(floor_ms, kUnexplainedShare * candidate_ms);
  found.judged = candidate_overhead_ms.size() >= kMinOverheadSamples;
  return found;
}

} // namespace ptxbench::exec
