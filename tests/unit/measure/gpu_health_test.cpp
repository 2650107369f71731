// The fleet's health policy (measure/gpu_health.hpp) on samples as NVML gives them; the healthy
// ones are H200 samples from bench/results (gpu_health_h200.md).
#include "measure/gpu_health.hpp"

#include <gtest/gtest.h>

namespace ptxbench::measure {
namespace {

constexpr std::uint64_t kIdle = 0x1, kPowerCap = 0x4, kHwSlowdown = 0x8, kSwThermal = 0x20,
                        kHwThermal = 0x40, kPowerBrake = 0x80;

GpuSnapshot h200(unsigned sm_clock_mhz, std::uint64_t reasons, unsigned temperature_c = 55) {
  GpuSnapshot gpu;
  gpu.device_name = "NVIDIA H200";
  gpu.sm_clock_mhz = sm_clock_mhz;
  gpu.memory_clock_mhz = 3201;
  gpu.max_sm_clock_mhz = 1980;
  gpu.power_w = 489.128;
  gpu.temperature_c = temperature_c;
  gpu.clock_event_reasons = reasons;
  gpu.clock_event_names = decode_clock_event_reasons(reasons);
  gpu.ecc_uncorrected_volatile = 0;
  gpu.slowdown_temperature_c = 87;
  return gpu;
}

// The supervisor's samples around an evaluation and the evaluation's own around its timing.
HealthEvidence around(GpuSnapshot before_timing, GpuSnapshot after_timing) {
  HealthEvidence evidence;
  evidence.samples = {{SampleMoment::before_evaluation, h200(1980, 0, 40)},
                      {SampleMoment::before_timing, std::move(before_timing)},
                      {SampleMoment::after_timing, std::move(after_timing)},
                      {SampleMoment::after_evaluation, h200(1965, kPowerCap, 50)}};
  return evidence;
}

TEST(GpuHealth, ThePowerCapAtTheLowestClockSeenOnTheH200IsHealthy) {
  // aa_speedup_h200_stop11.log: 1575 of 1980 MHz (0.795) at 59 C, sw_power_cap, A/A 1.00 ± 0.01.
  auto verdict = judge_health(around(h200(1980, 0, 38), h200(1575, kPowerCap, 59)));
  EXPECT_EQ(verdict.state, HealthState::healthy) << verdict.reason;
  // eval_wall_time_h200.md (batched): 1500 MHz, 0.758 of the maximum.
  verdict = judge_health(around(h200(1980, 0, 39), h200(1500, kPowerCap, 51)));
  EXPECT_EQ(verdict.state, HealthState::healthy) << verdict.reason;
  EXPECT_EQ(health_text(verdict, {}), "ok");
}

TEST(GpuHealth, AThermalOrHardwareSlowdownInAnySampleIsThrottled) {
  auto verdict = judge_health(around(h200(1980, 0), h200(1830, kPowerCap | kHwThermal, 91)));
  EXPECT_EQ(verdict.state, HealthState::throttled);
  EXPECT_EQ(verdict.reason, "hw_thermal_slowdown at 91 C after timing");
  EXPECT_EQ(health_text(verdict, {}), "throttled: hw_thermal_slowdown at 91 C after timing");
  for (std::uint64_t reason : {kHwSlowdown, kSwThermal, kPowerBrake}) {
    HealthEvidence evidence = around(h200(1980, 0), h200(1900, kPowerCap));
    evidence.samples.back().gpu.clock_event_reasons = reason; // the supervisor's, afterwards
    EXPECT_EQ(judge_health(evidence).state, HealthState::throttled) << reason;
  }
}

TEST(GpuHealth, AClockBelowSevenTenthsOfTheMaximumDuringTimingIsThrottled) {
  auto verdict = judge_health(around(h200(1980, 0), h200(1188, kPowerCap))); // 0.6 x 1980
  EXPECT_EQ(verdict.state, HealthState::throttled);
  EXPECT_EQ(verdict.reason, "SM clock 1188 of 1980 MHz (0.60 < 0.70) after timing");
  // The same clock outside timing, or on an idle GPU, is how an idle GPU saves power.
  HealthEvidence idle = around(h200(1980, 0), h200(1965, kPowerCap));
  idle.samples.front().gpu = h200(345, kIdle, 35);
  EXPECT_EQ(judge_health(idle).state, HealthState::healthy);
  EXPECT_EQ(judge_health(around(h200(345, kIdle), h200(1965, kPowerCap))).state,
            HealthState::healthy);
}

TEST(GpuHealth, ATemperatureAtTheSlowdownThresholdIsThrottledAndWithoutOneTheRuleIsSkipped) {
  auto verdict = judge_health(around(h200(1980, 0), h200(1900, kPowerCap, 87)));
  EXPECT_EQ(verdict.state, HealthState::throttled);
  EXPECT_EQ(verdict.reason, "87 C, at or above the slowdown threshold 87 C, after timing");
  HealthEvidence no_threshold = around(h200(1980, 0), h200(1900, kPowerCap, 87));
  for (auto& sample : no_threshold.samples)
    sample.gpu.slowdown_temperature_c.reset();
  EXPECT_EQ(judge_health(no_threshold).state, HealthState::healthy);
}

TEST(GpuHealth, AnEccCounterNvmlDoesNotOfferIsUnavailableNotUnhealthy) {
  HealthEvidence evidence = around(h200(1980, 0), h200(1900, kPowerCap));
  for (auto& sample : evidence.samples)
    sample.gpu.ecc_uncorrected_volatile.reset();
  evidence.unavailable = {"ECC counter", "Xid events"};
  auto verdict = judge_health(evidence);
  EXPECT_EQ(verdict.state, HealthState::healthy);
  EXPECT_EQ(health_text(verdict, evidence.unavailable),
            "ok (unavailable: ECC counter, Xid events)");
}

TEST(GpuHealth, AnEccCountThatRoseAnXidOrAFailedCudaProbeIsBroken) {
  HealthEvidence ecc = around(h200(1980, 0), h200(1900, kPowerCap));
  ecc.samples.back().gpu.ecc_uncorrected_volatile = 2;
  auto verdict = judge_health(ecc);
  EXPECT_EQ(verdict.state, HealthState::broken);
  EXPECT_EQ(verdict.reason, "uncorrected ECC errors rose from 0 to 2 (after the evaluation)");

  HealthEvidence xid = around(h200(1980, 0), h200(1900, kPowerCap | kHwThermal, 92));
  xid.xid_errors = {79};
  verdict = judge_health(xid); // broken outranks the throttle seen with it
  EXPECT_EQ(verdict.state, HealthState::broken);
  EXPECT_EQ(health_text(verdict, {}), "broken: Xid 79");

  HealthEvidence fell_off = around(h200(1980, 0), h200(1900, kPowerCap));
  fell_off.xid_errors = {31, 79};
  EXPECT_EQ(health_text(judge_health(fell_off), {}), "broken: Xid 79");

  HealthEvidence cuda = around(h200(1980, 0), h200(1900, kPowerCap));
  cuda.cuda_fault = "cudaErrorIllegalAddress: an illegal memory access was encountered";
  verdict = judge_health(cuda);
  EXPECT_EQ(verdict.state, HealthState::broken);
  EXPECT_EQ(verdict.reason,
            "CUDA probe: cudaErrorIllegalAddress: an illegal memory access was encountered");
}

TEST(GpuHealth, AnXidAFaultingKernelCausesIsNotedButHealthy) {
  // A candidate's illegal address (Xid 13 or 31 from its child process) is its own runtime
  // error: a worker that drained and restarted for it would be taken down by every bad kernel.
  HealthEvidence evidence = around(h200(1980, 0), h200(1900, kPowerCap));
  evidence.xid_errors = {31, 13};
  auto verdict = judge_health(evidence);
  EXPECT_EQ(verdict.state, HealthState::healthy);
  EXPECT_EQ(health_text(verdict, {}), "ok: Xid 31, Xid 13 (a faulting kernel's, not the GPU's)");
}

TEST(GpuHealth, NoSamplesAtAllIsHealthy) {
  EXPECT_EQ(judge_health({}).state, HealthState::healthy); // a CPU worker
}

} // namespace
} // namespace ptxbench::measure
