// The fleet's health probe on a real GPU (measure/gpu_health_probe.hpp; run on the H200 with the
// gpu label): NVML's readings that the policy needs are there, an idle GPU is healthy, and a
// sticky CUDA error in this process makes it broken. Each test is its own process under CTest,
// so the broken context ends with it.
#include "measure/gpu_health_probe.hpp"

#include <cstdio>
#include <cuda_runtime.h>
#include <gtest/gtest.h>

namespace ptxbench::measure {
namespace {

__global__ void write_through_null(int* target) {
  *target = 1;
}

void print_evidence(const HealthEvidence& evidence) {
  for (const HealthSample& sample : evidence.samples) {
    const GpuSnapshot& gpu = sample.gpu;
    std::printf("%s: %s SM %u/%u MHz, %.1f W, %u C (slowdown at %s C), reasons 0x%llx, "
                "uncorrected volatile ECC %s\n",
                std::string(to_string(sample.moment)).c_str(), gpu.device_name.c_str(),
                gpu.sm_clock_mhz, gpu.max_sm_clock_mhz, gpu.power_w, gpu.temperature_c,
                gpu.slowdown_temperature_c ? std::to_string(*gpu.slowdown_temperature_c).c_str()
                                           : "-",
                static_cast<unsigned long long>(gpu.clock_event_reasons),
                gpu.ecc_uncorrected_volatile ? std::to_string(*gpu.ecc_uncorrected_volatile).c_str()
                                             : "unavailable");
  }
  for (std::uint64_t xid : evidence.xid_errors)
    std::printf("Xid %llu\n", static_cast<unsigned long long>(xid));
  for (const std::string& missing : evidence.unavailable)
    std::printf("unavailable: %s\n", missing.c_str());
}

TEST(GpuHealthProbe, AnIdleH200IsHealthyWithEccSlowdownThresholdAndXidEvents) {
  auto probe = make_gpu_health_probe(0);
  probe->before();
  const HealthEvidence evidence = probe->after();
  print_evidence(evidence);
  const HealthVerdict verdict = judge_health(evidence);
  std::printf("verdict: %s\n", health_text(verdict, evidence.unavailable).c_str());
  ASSERT_EQ(evidence.samples.size(), 2u);
  EXPECT_EQ(verdict.state, HealthState::healthy) << verdict.reason;
  EXPECT_TRUE(evidence.cuda_fault.empty()) << evidence.cuda_fault;
  EXPECT_TRUE(evidence.xid_errors.empty());
  // A data-centre Hopper offers every reading (an unavailable one would disable its rule).
  EXPECT_TRUE(evidence.unavailable.empty()) << health_text(verdict, evidence.unavailable);
  EXPECT_TRUE(evidence.samples.back().gpu.ecc_uncorrected_volatile.has_value());
  EXPECT_GT(evidence.samples.back().gpu.slowdown_temperature_c.value_or(0), 70u);
}

TEST(GpuHealthProbe, AStickyCudaErrorInThisProcessIsBroken) {
  auto probe = make_gpu_health_probe(0);
  probe->before();
  write_through_null<<<1, 1>>>(nullptr);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaErrorIllegalAddress);
  const HealthEvidence evidence = probe->after();
  print_evidence(evidence); // the Xid NVML reports for the fault, if any: 13 or 31 expected
  const HealthVerdict verdict = judge_health(evidence);
  std::printf("verdict: %s\n", health_text(verdict, evidence.unavailable).c_str());
  EXPECT_EQ(verdict.state, HealthState::broken);
  EXPECT_NE(verdict.reason.find("cudaErrorIllegalAddress"), std::string::npos) << verdict.reason;
}

} // namespace
} // namespace ptxbench::measure
