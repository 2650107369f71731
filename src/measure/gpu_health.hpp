// Whether a GPU was fit to measure an evaluation, judged from what NVML and a CUDA probe saw
// around it (issue 31's health check; docs/service.md "Health").
//
// Problem. A speedup measured while the GPU slowed down for heat or a hardware fault is not the
// kernel's, and a GPU whose memory or context broke makes every later verdict suspect; both
// must cost the fleet a re-run, never the model a turn. But an H200 under load sits at its
// power cap almost all the time (`sw_power_cap` in 94 of 104 after-timing samples, SM clock
// down to 0.758 of its maximum) while A/A speedups stay within 1.00 ± 0.01, because reference
// and candidate trials alternate call by call: a rule that rejects the power cap rejects every
// evaluation.
//
// Approach. One pure function over the samples (the supervisor's before and after the
// evaluation, the evaluation's own before and after its timing) and the probes' findings.
//   broken     an uncorrected volatile ECC count that rose between two samples; an Xid
//              critical-error event other than those a faulting kernel causes (13, 31, 43, 45:
//              the candidate's own runtime error, which its evaluation judges, must not take
//              the worker down); the supervisor's CUDA state failing its probe afterwards.
//   throttled  a thermal or hardware slowdown reason (sw_thermal_slowdown, hw_thermal_slowdown,
//              hw_slowdown, hw_power_brake_slowdown) in any sample; an SM clock below
//              kMinTimingClockRatio of the maximum in a timing sample that is not idle; a
//              temperature at or above NVML's slowdown threshold.
//   healthy    otherwise. The power cap alone is healthy.
// Broken is judged first (it outranks a throttle seen at the same time). A reading a GPU does
// not offer (NOT_SUPPORTED) is listed as unavailable and its rule skipped: never unhealthy.
// The thresholds and the H200 samples behind them: bench/results/gpu_health_h200.md.
#pragma once

#include "measure/nvml_monitor.hpp"

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ptxbench::measure {

// Xids a faulting kernel causes by itself (NVIDIA's Xid catalogue: graphics engine exception,
// memory page fault, GPU stopped processing, preemptive clean-up): noted, not broken.
inline constexpr std::array<std::uint64_t, 4> kApplicationXids{13, 31, 43, 45};

// Below every SM clock NVML reported after strict or batched timing on an H200 under its power
// cap (lowest 0.758 of the maximum; gpu_health_h200.md).
inline constexpr double kMinTimingClockRatio = 0.70;

// When a sample was taken. Persisted nowhere; explicit values as the house rule asks.
enum class SampleMoment : std::uint8_t {
  before_evaluation = 1, // the supervisor's, before the evaluation
  before_timing = 2,     // the evaluation's own (exec::Evaluation::clocks "before")
  after_timing = 3,      // the evaluation's own (exec::Evaluation::clocks "after")
  after_evaluation = 4,  // the supervisor's, after the evaluation
};
std::string_view to_string(SampleMoment moment);
bool is_timing(SampleMoment moment);

struct HealthSample {
  SampleMoment moment = SampleMoment::before_evaluation;
  GpuSnapshot gpu;
};

struct HealthEvidence {
  std::vector<HealthSample> samples;     // in the order taken
  std::vector<std::uint64_t> xid_errors; // Xid critical errors NVML reported meanwhile
  std::string cuda_fault; // the supervisor's CUDA probe after the evaluation failed: why
  // Readings or probes this GPU does not offer ("ECC counter", "Xid events", …): noted, never
  // unhealthy.
  std::vector<std::string> unavailable;
};

enum class HealthState : std::uint8_t { healthy = 1, throttled = 2, broken = 3 };
std::string_view to_string(HealthState state);

struct HealthVerdict {
  HealthState state = HealthState::healthy;
  // Throttled or broken: why, e.g. "hw_thermal_slowdown at 91 C after timing"; healthy: what
  // was noted and forgiven (an application's Xid), or empty.
  std::string reason;
};

HealthVerdict judge_health(const HealthEvidence& evidence);

// The worker's health column: "ok", "throttled: <reason>" or "broken: <reason>", then the
// unavailable readings, e.g. "ok (unavailable: ECC counter)".
std::string health_text(const HealthVerdict& verdict, const std::vector<std::string>& unavailable);

} // namespace ptxbench::measure
