#include "measure/gpu_health.hpp"

#include <algorithm>
#include <array>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nvml.h>
#include <optional>

namespace ptxbench::measure {
namespace {

constexpr std::array<std::string_view, 4> kMomentNames{"before the evaluation", "before timing",
                                                       "after timing", "after the evaluation"};
constexpr std::array<std::string_view, 3> kStateNames{"ok", "throttled", "broken"};

// Reasons that mean heat or a hardware fault slowed the GPU. The power cap (sw_power_cap) is
// not one: the H200 sits there under load and interleaved trials measure through it.
// (NVML 13 names the hardware bits only with the older "Throttle" prefix.)
constexpr std::uint64_t kThrottleReasons =
    nvmlClocksThrottleReasonHwSlowdown | nvmlClocksEventReasonSwThermalSlowdown |
    nvmlClocksThrottleReasonHwThermalSlowdown | nvmlClocksThrottleReasonHwPowerBrakeSlowdown;
constexpr std::uint64_t kIdleReason = nvmlClocksEventReasonGpuIdle;

bool is_application_xid(std::uint64_t xid) {
  return std::find(kApplicationXids.begin(), kApplicationXids.end(), xid) != kApplicationXids.end();
}

std::optional<std::string> ecc_rise(const HealthEvidence& evidence) {
  std::optional<std::uint64_t> first;
  for (const HealthSample& sample : evidence.samples) {
    const auto& count = sample.gpu.ecc_uncorrected_volatile;
    if (!count)
      continue;
    if (!first)
      first = *count;
    else if (*count > *first)
      return fmt::format("uncorrected ECC errors rose from {} to {} ({})", *first, *count,
                         to_string(sample.moment));
  }
  return std::nullopt;
}

std::optional<std::string> broken_reason(const HealthEvidence& evidence) {
  if (auto ecc = ecc_rise(evidence))
    return ecc;
  std::vector<std::uint64_t> hardware;
  for (std::uint64_t xid : evidence.xid_errors)
    if (!is_application_xid(xid))
      hardware.push_back(xid);
  if (!hardware.empty())
    return fmt::format("Xid {}", fmt::join(hardware, ", Xid "));
  if (!evidence.cuda_fault.empty())
    return "CUDA probe: " + evidence.cuda_fault;
  return std::nullopt;
}

std::string slowdown_names(std::uint64_t mask) {
  return fmt::format("{}", fmt::join(decode_clock_event_reasons(mask & kThrottleReasons), ", "));
}

std::optional<unsigned> slowdown_threshold(const HealthEvidence& evidence) {
  for (const HealthSample& sample : evidence.samples)
    if (sample.gpu.slowdown_temperature_c && *sample.gpu.slowdown_temperature_c > 0)
      return sample.gpu.slowdown_temperature_c;
  return std::nullopt;
}

std::optional<std::string> throttled_reason(const HealthSample& sample,
                                            std::optional<unsigned> threshold) {
  const GpuSnapshot& gpu = sample.gpu;
  const std::string_view when = to_string(sample.moment);
  if ((gpu.clock_event_reasons & kThrottleReasons) != 0)
    return fmt::format("{} at {} C {}", slowdown_names(gpu.clock_event_reasons), gpu.temperature_c,
                       when);
  if (is_timing(sample.moment) && (gpu.clock_event_reasons & kIdleReason) == 0 &&
      gpu.max_sm_clock_mhz > 0) {
    const double ratio = static_cast<double>(gpu.sm_clock_mhz) / gpu.max_sm_clock_mhz;
    if (ratio < kMinTimingClockRatio)
      return fmt::format("SM clock {} of {} MHz ({:.2f} < {:.2f}) {}", gpu.sm_clock_mhz,
                         gpu.max_sm_clock_mhz, ratio, kMinTimingClockRatio, when);
  }
  if (threshold && gpu.temperature_c >= *threshold)
    return fmt::format("{} C, at or above the slowdown threshold {} C, {}", gpu.temperature_c,
                       *threshold, when);
  return std::nullopt;
}

} // namespace

std::string_view to_string(SampleMoment moment) {
  return kMomentNames[static_cast<std::size_t>(moment) - 1];
}

bool is_timing(SampleMoment moment) {
  return moment == SampleMoment::before_timing || moment == SampleMoment::after_timing;
}

std::string_view to_string(HealthState state) {
  return kStateNames[static_cast<std::size_t>(state) - 1];
}

HealthVerdict judge_health(const HealthEvidence& evidence) {
  if (auto broken = broken_reason(evidence))
    return {HealthState::broken, std::move(*broken)};
  const auto threshold = slowdown_threshold(evidence);
  for (const HealthSample& sample : evidence.samples)
    if (auto throttled = throttled_reason(sample, threshold))
      return {HealthState::throttled, std::move(*throttled)};
  if (!evidence.xid_errors.empty()) // only an application's, or it would be broken
    return {HealthState::healthy, fmt::format("Xid {} (a faulting kernel's, not the GPU's)",
                                              fmt::join(evidence.xid_errors, ", Xid "))};
  return {};
}

std::string health_text(const HealthVerdict& verdict, const std::vector<std::string>& unavailable) {
  std::string out(to_string(verdict.state));
  if (!verdict.reason.empty())
    out += ": " + verdict.reason;
  if (!unavailable.empty())
    out += fmt::format(" (unavailable: {})", fmt::join(unavailable, ", "));
  return out;
}

} // namespace ptxbench::measure
