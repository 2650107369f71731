#include "measure/nvml_monitor.hpp"

#include <gtest/gtest.h>

namespace ptxbench::measure {
namespace {

TEST(ClockEventReasons, DecodesEachBitInOrder) {
  EXPECT_TRUE(decode_clock_event_reasons(0).empty());
  EXPECT_EQ(decode_clock_event_reasons(0x1), std::vector<std::string>{"gpu_idle"});
  EXPECT_EQ(decode_clock_event_reasons(0x4 | 0x40),
            (std::vector<std::string>{"sw_power_cap", "hw_thermal_slowdown"}));
  EXPECT_EQ(decode_clock_event_reasons(0x1ff).size(), 9u);
}

TEST(ClockEventReasons, UnknownBitsAreNamedByValue) {
  EXPECT_EQ(decode_clock_event_reasons(0x1000), std::vector<std::string>{"bit_0x1000"});
}

TEST(ClockEventReasons, OnlyCapsAndSlowdownsSlowTheGpu) {
  EXPECT_FALSE(reasons_slow_the_gpu(0x1 | 0x2 | 0x10 | 0x100));
  for (std::uint64_t bit : {0x4u, 0x8u, 0x20u, 0x40u, 0x80u})
    EXPECT_TRUE(reasons_slow_the_gpu(bit));
}

} // namespace
} // namespace ptxbench::measure
