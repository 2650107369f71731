// On a machine without a usable GPU (CPU CI) every GPU entry point answers `unsupported`
// with a message that says why, instead of crashing.
#include "cuda/device.hpp"
#include "measure/instruction_counter.hpp"
#include "measure/nvml_monitor.hpp"
#include "measure/timing.hpp"

#include <cuda_runtime.h>
#include <gtest/gtest.h>

namespace ptxbench::measure {
namespace {

bool gpu_present() {
  return cuda::device_count() > 0;
}

TEST(NoGpu, TimerFlusherAndCounterAreUnsupportedWithTheRuntimeAnswer) {
  if (gpu_present())
    GTEST_SKIP() << "a GPU is present";
  auto timer = cupti_call_timer();
  ASSERT_FALSE(timer);
  EXPECT_EQ(timer.error().kind, util::ErrorKind::unsupported);
  EXPECT_NE(timer.error().message.find("cudaGetDeviceCount"), std::string::npos)
      << timer.error().message;
  auto flusher = L2Flusher::create(0);
  ASSERT_FALSE(flusher);
  EXPECT_EQ(flusher.error().kind, util::ErrorKind::unsupported);
  auto counter = InstructionCounter::create(0);
  ASSERT_FALSE(counter);
  EXPECT_EQ(counter.error().kind, util::ErrorKind::unsupported);
}

TEST(NoGpu, MonitorIsUnsupportedWithoutNvmlOrDevice) {
  if (gpu_present())
    GTEST_SKIP() << "a GPU is present";
  auto monitor = GpuMonitor::create(0);
  ASSERT_FALSE(monitor);
  EXPECT_EQ(monitor.error().kind, util::ErrorKind::unsupported);
  EXPECT_FALSE(monitor.error().message.empty());
}

} // namespace
} // namespace ptxbench::measure
