// The live device read on the H200: the values params.md expects of that part.
#include "measure/live_device.hpp"

#include <gtest/gtest.h>

using namespace ptxbench::measure;

TEST(LiveDeviceGpu, TheH200ReportsItsArchitectureParameters) {
  auto device = read_live_device(0);
  ASSERT_TRUE(device) << device.error().message;
  EXPECT_EQ(device->arch(), "sm_90a");
  EXPECT_GT(device->sms, 0);
  EXPECT_EQ(device->smem_per_block_optin_bytes, 232448);
  EXPECT_EQ(device->smem_per_sm_bytes, 233472);
  EXPECT_GT(device->l2_bytes, 40 << 20);
  EXPECT_GT(device->max_sm_clock_mhz, 1000);
  EXPECT_GT(device->peak_memory_tb_s(), 2.0);
  std::string table = render_live_device(*device);
  EXPECT_NE(table.find(device->name), std::string::npos);
  std::printf("%s", table.c_str()); // recorded in the GPU test log
}
