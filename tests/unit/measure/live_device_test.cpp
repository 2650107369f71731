// The live-device table the prompts carry: derived peaks and the rendered rows.
#include "measure/live_device.hpp"

#include <gtest/gtest.h>

using namespace ptxbench::measure;

namespace {

LiveDevice h100_like() {
  LiveDevice d;
  d.name = "NVIDIA H100 80GB HBM3";
  d.cc_major = 9;
  d.cc_minor = 0;
  d.sms = 132;
  d.max_threads_per_sm = 2048;
  d.registers_per_sm = 65536;
  d.smem_per_sm_bytes = 233472;
  d.smem_per_block_optin_bytes = 232448;
  d.l2_bytes = 52428800;
  d.global_memory_bytes = 85520809984;
  d.max_sm_clock_mhz = 1980;
  d.memory_clock_mhz = 2619;
  d.memory_bus_bits = 5120;
  d.clock_source = "nvml";
  return d;
}

} // namespace

TEST(LiveDevice, PeaksFollowFromSmsClockAndBus) {
  LiveDevice d = h100_like();
  // 132 SMs × 4096 FLOP/clk × 1.98 GHz; 2 × 2.619 GHz × 640 B.
  EXPECT_NEAR(d.peak_bf16_tflop_s(), 1070.53, 0.01);
  EXPECT_NEAR(d.peak_memory_tb_s(), 3.352, 0.001);
  EXPECT_EQ(d.arch(), "sm_90a");
  d.cc_major = 10;
  EXPECT_EQ(d.arch(), "sm_100a");
  EXPECT_NEAR(d.peak_bf16_tflop_s(), 2141.06, 0.01);
  d.cc_major = 8;
  EXPECT_EQ(d.arch(), "sm_80");
  EXPECT_EQ(d.peak_bf16_tflop_s(), 0);
}

TEST(LiveDevice, TheTableNamesEveryLiveRowOfTheParams) {
  std::string table = render_live_device(h100_like());
  for (const char* row :
       {"| SMs | 132 |", "| Shared memory per SM | 233472 B |",
        "| Shared memory per block (opt-in) | 232448 B |", "| L2 cache | 52428800 B (50 MiB) |",
        "| Max SM clock | 1980 MHz (NVML) |", "= 3.35 TB/s theoretical",
        "| Dense bf16 tensor peak | 1071 TFLOP/s", "build target sm_90a"})
    EXPECT_NE(table.find(row), std::string::npos) << row << "\n" << table;
}
