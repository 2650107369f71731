// Range-profiler counts on a real GPU: a wgmma+TMA GEMM shows GMMA, TMA and exactly 2·M·N·K
// tensor FLOPs; a SIMT GEMM shows none; timing works again after a counting pass.
#include "measure/instruction_counter.hpp"
#include "measure/nvml_monitor.hpp"
#include "unit/measure/gpu_helpers.hpp"

#include <cstdio>
#include <gtest/gtest.h>

namespace ptxbench::measure {
namespace {

using testing::GemmBuffers;

InstructionCounter& counter() {
  static InstructionCounter instance = [] {
    auto made = InstructionCounter::create(0);
    if (!made)
      throw std::runtime_error(made.error().message);
    return std::move(*made);
  }();
  return instance;
}

// The totals of the H200's counter table (sass/counters.hpp, sm_90a), by row.
double metric_of(const InstructionCounts& counts, const char* metric) {
  return counts.total(metric).value_or(-1.0);
}
double gmma_of(const InstructionCounts& c) {
  return metric_of(c, "smsp__sass_inst_executed_op_shared_gmma.sum");
}
double tma_load_of(const InstructionCounts& c) {
  return metric_of(c, "smsp__sass_inst_executed_op_tma_ld.sum");
}
double tma_store_of(const InstructionCounts& c) {
  return metric_of(c, "smsp__sass_inst_executed_op_tma_st.sum");
}
double tma_reduce_of(const InstructionCounts& c) {
  return metric_of(c, "smsp__sass_inst_executed_op_tma_red.sum");
}
double hgmma_bf16_flops_of(const InstructionCounts& c) {
  return metric_of(c, "sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32.sum");
}

void print(const char* label, const InstructionCounts& counts) {
  std::printf("%s: %zu passes, %.1f ms, kernels %zu\n", label, counts.passes, counts.pass_ms,
              counts.kernels.size());
  for (const MetricValue& metric : counts.metrics)
    std::printf("  %s = %.0f\n", metric.name.c_str(), metric.value);
}

TEST(InstructionCounter, AcceptsAllHopperMetricsOnGH100) {
  std::printf("chip %s\n", counter().chip().c_str());
  for (const std::string& rejected : counter().rejected_metrics())
    std::printf("rejected: %s\n", rejected.c_str());
  EXPECT_EQ(counter().chip(), "GH100");
  EXPECT_EQ(counter().arch(), "sm_90a"); // the table chosen by compute capability 9.0
  EXPECT_EQ(counter().metrics().size(), 5u);
  EXPECT_TRUE(counter().rejected_metrics().empty());
}

TEST(InstructionCounter, WgmmaTmaGemmExecutesGmmaTmaAndAllItsFlopsOnTensorCores) {
  GemmBuffers gemm(256);
  const CallFn call = [&](cudaStream_t s) {
    sm90_wgmma_tma_gemm_run(gemm.a.as<__nv_bfloat16>(), gemm.b.as<__nv_bfloat16>(),
                            gemm.c.as<__nv_bfloat16>(), gemm.M, s);
    return int(cudaGetLastError());
  };
  auto counts = counter().count(call, nullptr);
  ASSERT_TRUE(counts) << counts.error().message;
  print("wgmma gemm M=256", *counts);
  EXPECT_EQ(counts->call_status, 0);
  EXPECT_GT(gmma_of(*counts), 0.0);
  EXPECT_GT(tma_load_of(*counts), 0.0);
  EXPECT_EQ(tma_reduce_of(*counts), 0.0);
  EXPECT_EQ(hgmma_bf16_flops_of(*counts), 2.0 * 256 * testing::kGemmN * testing::kGemmK);
  // 4 warps per warpgroup issue one HGMMA.64x128x16 per 64x128x16 block of the problem.
  EXPECT_EQ(gmma_of(*counts), 4.0 * 256 * testing::kGemmN * testing::kGemmK / (64.0 * 128 * 16));
  EXPECT_EQ(counts->kernels.size(), 1u);
  EXPECT_LT(counts->pass_ms, 1000.0);
}

// User replay (the candidate child's mode) runs the call once per pass, outputs reset before
// each run, and must count exactly what kernel replay counts.
TEST(InstructionCounter, UserReplayCountsExactlyWhatKernelReplayCounts) {
  // Process lifetime, like counter(): the profiler is initialised per process, and a
  // counter's destructor de-initialises it.
  static auto user = [] {
    CounterOptions options;
    options.replay = CounterReplay::user;
    options.availability = CounterAvailability::assume;
    return InstructionCounter::create_with(0, options);
  }();
  ASSERT_TRUE(user) << user.error().message;
  GemmBuffers gemm(256);
  int resets = 0;
  const CallFn call = [&](cudaStream_t s) {
    sm90_wgmma_tma_gemm_run(gemm.a.as<__nv_bfloat16>(), gemm.b.as<__nv_bfloat16>(),
                            gemm.c.as<__nv_bfloat16>(), gemm.M, s);
    return int(cudaGetLastError());
  };
  auto reset = [&](cudaStream_t s) {
    ++resets;
    cudaMemsetAsync(gemm.c.as<char>(), 0xFF, gemm.c.bytes(), s);
  };
  auto counts = user->count(call, nullptr, reset);
  ASSERT_TRUE(counts) << counts.error().message;
  print("wgmma gemm M=256, user replay", *counts);
  for (const util::Phase& step : counts->steps)
    std::printf("  step %s %.2f ms\n", step.name.c_str(), double(step.elapsed.count()) / 1000.0);
  std::printf("replay %s, %zu calls, %d resets\n", std::string(to_string(counts->replay)).c_str(),
              counts->calls, resets);
  EXPECT_EQ(counts->replay, CounterReplay::user);
  EXPECT_EQ(counts->calls, counts->passes);
  EXPECT_EQ(resets, static_cast<int>(counts->calls));
  EXPECT_EQ(hgmma_bf16_flops_of(*counts), 2.0 * 256 * testing::kGemmN * testing::kGemmK);
  EXPECT_EQ(gmma_of(*counts), 4.0 * 256 * testing::kGemmN * testing::kGemmK / (64.0 * 128 * 16));
  auto kernel = counter().count(call, nullptr);
  ASSERT_TRUE(kernel) << kernel.error().message;
  EXPECT_EQ(tma_load_of(*counts), tma_load_of(*kernel));
  EXPECT_EQ(tma_store_of(*counts), tma_store_of(*kernel));
  EXPECT_EQ(counts->kernels.size(), 1u);
}

TEST(InstructionCounter, ASessionOpenedAheadCountsTheSameWithoutEnablingAgain) {
  CounterOptions options;
  options.replay = CounterReplay::user;
  options.availability = CounterAvailability::assume;
  // The process's other counters (counter(), the user-replay one) hold no session now: each
  // count opens and closes its own.
  auto counter = InstructionCounter::create_with(0, options);
  ASSERT_TRUE(counter) << counter.error().message;
  GemmBuffers gemm(256);
  const CallFn call = [&](cudaStream_t s) {
    sm90_wgmma_tma_gemm_run(gemm.a.as<__nv_bfloat16>(), gemm.b.as<__nv_bfloat16>(),
                            gemm.c.as<__nv_bfloat16>(), gemm.M, s);
    return int(cudaGetLastError());
  };
  auto reset = [&](cudaStream_t s) { cudaMemsetAsync(gemm.c.as<char>(), 0xFF, gemm.c.bytes(), s); };
  auto has_step = [](const InstructionCounts& counts, const char* name) {
    for (const util::Phase& step : counts.steps)
      if (step.name == name)
        return true;
    return false;
  };
  auto own = counter->count(call, nullptr, reset);
  ASSERT_TRUE(own) << own.error().message;
  EXPECT_TRUE(has_step(*own, "enable"));
  EXPECT_TRUE(has_step(*own, "disable"));
  EXPECT_FALSE(counter->session_open());

  auto warm = counter->open_session(launch_warmup_kernel, nullptr);
  ASSERT_TRUE(warm) << warm.error().message;
  EXPECT_TRUE(counter->session_open());
  EXPECT_FALSE(counter->open_session(launch_warmup_kernel, nullptr)); // one at a time
  for (int i = 0; i < 2; ++i) { // the second count makes its own counter data image
    auto kept = counter->count(call, nullptr, reset);
    ASSERT_TRUE(kept) << kept.error().message;
    print("wgmma gemm M=256, session opened ahead", *kept);
    EXPECT_FALSE(has_step(*kept, "enable"));
    EXPECT_FALSE(has_step(*kept, "disable"));
    EXPECT_EQ(gmma_of(*kept), gmma_of(*own));
    EXPECT_EQ(tma_load_of(*kept), tma_load_of(*own));
    EXPECT_EQ(hgmma_bf16_flops_of(*kept), hgmma_bf16_flops_of(*own));
    // Auto ranges are numbered within the session: the warm-up kernel took range "0".
    EXPECT_EQ(kept->kernels.size(), own->kernels.size());
  }
  counter->close_session();
  EXPECT_FALSE(counter->session_open());
  auto after = counter->count(call, nullptr, reset); // a session of its own again
  ASSERT_TRUE(after) << after.error().message;
  EXPECT_EQ(gmma_of(*after), gmma_of(*own));
}

TEST(InstructionCounter, SimtGemmExecutesNoTargetInstructions) {
  GemmBuffers gemm(256);
  const CallFn call = [&](cudaStream_t s) {
    simt_gemm_run(gemm.a.as<__nv_bfloat16>(), gemm.b.as<__nv_bfloat16>(),
                  gemm.c.as<__nv_bfloat16>(), gemm.M, s);
    return int(cudaGetLastError());
  };
  auto counts = counter().count(call, nullptr);
  ASSERT_TRUE(counts) << counts.error().message;
  print("simt gemm M=256", *counts);
  EXPECT_EQ(gmma_of(*counts), 0.0);
  EXPECT_EQ(tma_load_of(*counts) + tma_store_of(*counts) + tma_reduce_of(*counts), 0.0);
  EXPECT_EQ(hgmma_bf16_flops_of(*counts), 0.0);
}

TEST(InstructionCounter, TimingWorksAgainAfterACountingPass) {
  GemmBuffers gemm(8192);
  const CallFn call = [&](cudaStream_t s) {
    sm90_wgmma_tma_gemm_run(gemm.a.as<__nv_bfloat16>(), gemm.b.as<__nv_bfloat16>(),
                            gemm.c.as<__nv_bfloat16>(), gemm.M, s);
    return int(cudaGetLastError());
  };
  auto timer = cupti_call_timer();
  ASSERT_TRUE(timer);
  auto before = (*timer)->time_call(call, nullptr);
  auto counts = counter().count(call, nullptr);
  ASSERT_TRUE(counts) << counts.error().message;
  auto after = (*timer)->time_call(call, nullptr);
  ASSERT_TRUE(before && after);
  std::printf("gemm M=8192: before %.4f ms, after %.4f ms (events %.4f), pass %.1f ms\n",
              before->latency_ms, after->latency_ms, after->event_ms, counts->pass_ms);
  ASSERT_EQ(after->activities.size(), 1u);
  EXPECT_NEAR(after->latency_ms, before->latency_ms, 0.15 * before->latency_ms);
  EXPECT_EQ(hgmma_bf16_flops_of(*counts), 2.0 * 8192 * testing::kGemmN * testing::kGemmK);
  std::printf("gemm kernel module: '%s'\n", after->activities[0].module.c_str());
}

TEST(GpuMonitor, SnapshotHasPlausibleClocksAndPower) {
  auto monitor = GpuMonitor::create(0);
  ASSERT_TRUE(monitor) << monitor.error().message;
  auto snap = monitor->snapshot();
  ASSERT_TRUE(snap) << snap.error().message;
  std::printf("%s: SM %u/%u MHz, mem %u MHz, %.1f W, %u C, reasons 0x%llx\n",
              snap->device_name.c_str(), snap->sm_clock_mhz, snap->max_sm_clock_mhz,
              snap->memory_clock_mhz, snap->power_w, snap->temperature_c,
              static_cast<unsigned long long>(snap->clock_event_reasons));
  EXPECT_NE(snap->device_name.find("H"), std::string::npos);
  EXPECT_GE(snap->sm_clock_mhz, 100u);
  EXPECT_LE(snap->sm_clock_mhz, snap->max_sm_clock_mhz);
  EXPECT_GT(snap->memory_clock_mhz, 1000u);
  EXPECT_GT(snap->power_w, 20.0);
  EXPECT_LT(snap->power_w, 1000.0);
  EXPECT_GT(snap->temperature_c, 10u);
}

} // namespace
} // namespace ptxbench::measure
