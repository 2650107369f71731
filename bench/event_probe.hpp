// CUDA-event timing of a few variants of one call, interleaved round by round, each call behind
// an L2 flush: a cross-process check that needs neither CUPTI nor the evaluator (the A/A hook's
// buffer probe in the child, aa_speedup's same probe in the supervisor). Diagnostics only: the
// evaluator's latencies come from CUPTI (measure/timing.hpp).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cuda_runtime.h>
#include <functional>
#include <optional>
#include <vector>

namespace ptxbench::bench {

// Rounds of the A/A's buffer probe, the same on both sides (the hook in the child, aa_speedup in
// the supervisor), and the untimed rounds before them.
inline constexpr int kBufferProbeRounds = 25;
inline constexpr int kBufferProbeWarmup = 5;

// One call of a variant enqueued on the stream; false when it failed.
using ProbeCall = std::function<bool(cudaStream_t)>;

// The median event time (ms) of each variant over `rounds` rounds after `warmup` rounds; nullopt
// when a call or a CUDA step failed.
inline std::optional<std::vector<float>>
interleaved_event_ms(cudaStream_t stream, const std::vector<ProbeCall>& variants, int rounds,
                     int warmup) {
  constexpr std::size_t kFlushBytes = std::size_t{256} << 20; // over the H200's 60 MiB of L2
  void* flush = nullptr;
  cudaEvent_t start = nullptr;
  cudaEvent_t stop = nullptr;
  if (cudaMalloc(&flush, kFlushBytes) != cudaSuccess)
    return std::nullopt;
  bool ok = cudaEventCreate(&start) == cudaSuccess && cudaEventCreate(&stop) == cudaSuccess;
  std::vector<std::vector<float>> samples(variants.size());
  for (int round = 0; ok && round < warmup + rounds; ++round)
    for (std::size_t v = 0; ok && v < variants.size(); ++v) {
      ok = cudaMemsetAsync(flush, (round + static_cast<int>(v)) & 0xFF, kFlushBytes, stream) ==
               cudaSuccess &&
           cudaEventRecord(start, stream) == cudaSuccess && variants[v](stream) &&
           cudaEventRecord(stop, stream) == cudaSuccess &&
           cudaEventSynchronize(stop) == cudaSuccess;
      float ms = 0.0f;
      if (ok && round >= warmup && cudaEventElapsedTime(&ms, start, stop) == cudaSuccess)
        samples[v].push_back(ms);
    }
  if (start != nullptr)
    cudaEventDestroy(start);
  if (stop != nullptr)
    cudaEventDestroy(stop);
  cudaFree(flush);
  if (!ok)
    return std::nullopt;
  std::vector<float> medians;
  for (std::vector<float>& s : samples) {
    std::sort(s.begin(), s.end());
    medians.push_back(s.empty() ? 0.0f : s[s.size() / 2]);
  }
  return medians;
}

} // namespace ptxbench::bench
