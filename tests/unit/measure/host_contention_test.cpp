#include "measure/host_contention.hpp"

#include <atomic>
#include <gtest/gtest.h>
#include <thread>
#include <vector>

namespace ptxbench::measure {
namespace {

TEST(HostContention, ReadsTheSomeLinesTotalOfAPressureFile) {
  constexpr std::string_view kCpu = "some avg10=0.74 avg60=0.89 avg300=0.35 total=2108447\n"
                                    "full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n";
  EXPECT_EQ(psi_some_total_us(kCpu), 2108447u);
  EXPECT_EQ(psi_some_total_us("full avg10=0.00 total=5\nsome avg10=1.0 total=7\n"), 7u);
  EXPECT_FALSE(psi_some_total_us(""));
  EXPECT_FALSE(psi_some_total_us("some avg10=0.74\n"));
  EXPECT_FALSE(psi_some_total_us("some avg10=0.74 total=x\n"));
}

TEST(HostContention, ReadsTheRunDelayOfASchedstatLine) {
  EXPECT_EQ(schedstat_run_delay_ns("1009397 250 1\n"), 250u);
  EXPECT_FALSE(schedstat_run_delay_ns(""));
  EXPECT_FALSE(schedstat_run_delay_ns("1009397\n"));
  EXPECT_FALSE(schedstat_run_delay_ns("x 5 1\n"));
}

// More spinning threads than CPUs: the measuring thread, spinning too, waits for a CPU part of
// the time, and the kernel says so.
TEST(HostContention, ThreadsCompetingForEveryCpuShowAsRunDelayAndStall) {
  const unsigned cpus = std::max(1u, std::thread::hardware_concurrency());
  std::atomic<bool> stop{false};
  std::vector<std::thread> spinners;
  for (unsigned i = 0; i < 2 * cpus; ++i)
    spinners.emplace_back([&] {
      while (!stop.load(std::memory_order_relaxed)) {
      }
    });
  const CpuContentionClock clock;
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(300);
  while (std::chrono::steady_clock::now() < until) {
  }
  const CpuContention busy = clock.elapsed();
  stop = true;
  for (std::thread& t : spinners)
    t.join();
  if (!busy.run_delay_ms)
    GTEST_SKIP() << "this kernel keeps no schedstats";
  EXPECT_GT(*busy.run_delay_ms, 30.0) << "of " << busy.wall_ms << " ms";
  EXPECT_LT(*busy.run_delay_ms, busy.wall_ms);
  if (busy.stall_share) {
    EXPECT_GT(*busy.stall_share, 0.1);
    EXPECT_LE(*busy.stall_share, 1.0);
  }
}

TEST(HostContention, ASleepingThreadWaitsForNoCpu) {
  const CpuContentionClock clock;
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const CpuContention idle = clock.elapsed();
  EXPECT_GE(idle.wall_ms, 100.0);
  if (idle.run_delay_ms) {
    EXPECT_LT(*idle.run_delay_ms, 50.0);
  }
}

} // namespace
} // namespace ptxbench::measure
