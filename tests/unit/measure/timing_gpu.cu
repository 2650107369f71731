// CUPTI call timer on a real GPU: agreement with events, other-stream work, late work,
// L2 flush, module identity of kernels.
#include "measure/live_device.hpp"
#include "measure/timing.hpp"
#include "unit/measure/gpu_helpers.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <gtest/gtest.h>
#include <string>

namespace ptxbench::measure {
namespace {

using testing::DeviceBuffer;

// Created before any test launches a kernel, so every module load is seen (skipped in the
// probe child run under ncu, which owns CUPTI there).
const bool kTimerFirst = [] {
  if (std::getenv("PTXBENCH_MEASURE_PROBE") == nullptr)
    (void)cupti_call_timer();
  return true;
}();

__global__ void copy_kernel(const float4* src, float4* dst, std::size_t count) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < count;
       i += std::size_t(gridDim.x) * blockDim.x)
    dst[i] = src[i];
}

__global__ void read_kernel(const float4* src, std::size_t count, float* sink) {
  float sum = 0.0f;
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < count;
       i += std::size_t(gridDim.x) * blockDim.x)
    sum += src[i].x + src[i].w;
  if (sum == 12345.0f)
    *sink = sum;
}

__device__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void spin_kernel(unsigned long long ns) {
  const unsigned long long start = global_ns();
  while (global_ns() - start < ns) {
  }
}

struct Streams {
  Streams() {
    cudaStreamCreateWithFlags(&main, cudaStreamNonBlocking);
    cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking);
    cudaEventCreateWithFlags(&joined, cudaEventDisableTiming);
  }
  ~Streams() {
    cudaStreamDestroy(main);
    cudaStreamDestroy(side);
    cudaEventDestroy(joined);
  }
  cudaStream_t main = nullptr, side = nullptr;
  cudaEvent_t joined = nullptr;
};

CallTimer& timer() {
  auto made = cupti_call_timer();
  if (!made)
    throw std::runtime_error(made.error().message);
  return **made;
}

// Measured on an H200: in a fresh process the first few timed calls carry milliseconds of
// host-side launch cost inside the window (a two-stream 1 ms spin read 6.2 ms even after one
// warm-up call, 1.4 ms once the process had run other tests), so every test warms up the way
// an evaluation trial does (10 calls) before it measures.
void warm_up(const CallFn& call, cudaStream_t stream) {
  for (int i = 0; i < 10; ++i) {
    auto timing = timer().time_call(call, stream);
    ASSERT_TRUE(timing) << timing.error().message;
  }
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
}

// Events on the call stream also time the host launch path after the start event; on an H200
// (2026-11-30) they read 0.26 ms above CUPTI for this copy in one process (0.793 vs 0.537 ms)
// and 2.85 ms above it when the test ran alone in a fresh process, so events only bound CUPTI
// from above here (open item: a launch-independent cross-check).
TEST(CuptiTimer, CopyOfOneGibMatchesBandwidthAndEventsBoundIt) {
  const std::size_t bytes = std::size_t(1) << 30;
  DeviceBuffer src(bytes), dst(bytes);
  Streams streams;
  auto flusher = L2Flusher::create(0);
  ASSERT_TRUE(flusher) << flusher.error().message;
  const CallFn call = [&](cudaStream_t s) {
    copy_kernel<<<132 * 8, 512, 0, s>>>(src.as<float4>(), dst.as<float4>(), bytes / 16);
    return int(cudaGetLastError());
  };
  auto trial = run_trial(timer(), *flusher, call, {}, streams.main, {3, 20});
  ASSERT_TRUE(trial) << trial.error().message;
  std::vector<double> events = trial->event_ms;
  std::sort(events.begin(), events.end());
  const double event_median = events[events.size() / 2];
  const double tb_per_s = 2.0 * double(bytes) / (trial->median_ms * 1e-3) / 1e12;
  std::printf("copy 1 GiB: CUPTI median %.4f ms, event median %.4f ms, %.2f TB/s\n",
              trial->median_ms, event_median, tb_per_s);
  EXPECT_LE(trial->median_ms, event_median * 1.01);
  // Read+write against the device's theoretical bandwidth, so the bound holds on an H100 and an
  // H200 alike (the fractions measured on each: bench/results/gpu_tests_h200.md).
  const auto device = read_live_device(0);
  ASSERT_TRUE(device) << device.error().message;
  const double peak = device->peak_memory_tb_s();
  std::printf("theoretical %.2f TB/s, copy at %.2f of it\n", peak, tb_per_s / peak);
  EXPECT_GT(tb_per_s, 0.7 * peak);
  EXPECT_LT(tb_per_s, peak);
  EXPECT_FALSE(trial->late_work);
  ASSERT_EQ(trial->last_call_activities.size(), 1u);
  EXPECT_NE(trial->last_call_activities[0].name.find("copy_kernel"), std::string::npos);
  std::printf("module of copy_kernel: '%s'\n", trial->last_call_activities[0].module.c_str());
  EXPECT_EQ(trial->last_call_activities[0].module.rfind("cupti-module:", 0), 0u);
}

TEST(CuptiTimer, WorkOnASecondStreamJoinedBeforeReturnIsCharged) {
  Streams streams;
  const CallFn call = [&](cudaStream_t s) {
    spin_kernel<<<1, 1, 0, s>>>(10'000);
    spin_kernel<<<1, 1, 0, streams.side>>>(1'000'000);
    cudaEventRecord(streams.joined, streams.side);
    cudaStreamWaitEvent(s, streams.joined, 0);
    return int(cudaGetLastError());
  };
  warm_up(call, streams.main);
  auto timing = timer().time_call(call, streams.main);
  ASSERT_TRUE(timing) << timing.error().message;
  std::printf("two streams: CUPTI %.4f ms, events %.4f ms\n", timing->latency_ms, timing->event_ms);
  // The 1 ms side-stream spin is charged; the rest is launch cost (0.4–0.5 ms seen on an H200).
  EXPECT_GE(timing->latency_ms, 0.99);
  EXPECT_LT(timing->latency_ms, 2.5);
  EXPECT_FALSE(timing->late_work);
  ASSERT_EQ(timing->activities.size(), 2u);
  EXPECT_NE(timing->activities[0].stream_id, timing->activities[1].stream_id);
}

TEST(CuptiTimer, WorkLeftRunningOnAnotherStreamIsLateWork) {
  Streams streams;
  const CallFn call = [&](cudaStream_t s) {
    spin_kernel<<<1, 1, 0, s>>>(10'000);
    spin_kernel<<<1, 1, 0, streams.side>>>(3'000'000); // not joined
    return int(cudaGetLastError());
  };
  warm_up(call, streams.main);
  auto timing = timer().time_call(call, streams.main);
  ASSERT_TRUE(timing) << timing.error().message;
  std::printf("unjoined stream: CUPTI %.4f ms, events %.4f ms, late %zu\n", timing->latency_ms,
              timing->event_ms, timing->late_activities);
  EXPECT_TRUE(timing->late_work);
  EXPECT_EQ(timing->late_activities, 1u);
  EXPECT_LT(timing->event_ms, 2.5); // the call stream did not wait for the 3 ms side spin
}

TEST(CuptiTimer, FailingCallReportsItsStatus) {
  Streams streams;
  auto timing = timer().time_call([](cudaStream_t) { return 42; }, streams.main);
  ASSERT_TRUE(timing);
  EXPECT_EQ(timing->call_status, 42);
}

double median_of(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values.empty() ? 0.0 : values[values.size() / 2];
}

double wall_ms(const std::chrono::steady_clock::time_point& since) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - since)
      .count();
}

// Batched mode (one synchronise per trial) reads the same latency as strict mode (one per
// call), and with the stream busy when each call is enqueued the CUDA events agree with
// CUPTI (measured on an H200, strict mode: events 0.26 ms above CUPTI for this copy).
TEST(BatchedTrial, MatchesStrictModeAndEventsAgreeWithCupti) {
  const std::size_t bytes = std::size_t(1) << 30;
  DeviceBuffer src(bytes), dst(bytes);
  Streams streams;
  auto flusher = L2Flusher::create(0);
  ASSERT_TRUE(flusher) << flusher.error().message;
  const CallFn call = [&](cudaStream_t s) {
    copy_kernel<<<132 * 8, 512, 0, s>>>(src.as<float4>(), dst.as<float4>(), bytes / 16);
    return int(cudaGetLastError());
  };
  warm_up(call, streams.main);
  auto began = std::chrono::steady_clock::now();
  auto strict = run_trial(timer(), *flusher, call, {}, streams.main, {10, 50, TimingMode::strict});
  const double strict_wall = wall_ms(began);
  began = std::chrono::steady_clock::now();
  auto batched =
      run_trial(timer(), *flusher, call, {}, streams.main, {10, 50, TimingMode::batched});
  const double batched_wall = wall_ms(began);
  ASSERT_TRUE(strict && batched);
  ASSERT_EQ(batched->mode, TimingMode::batched) << batched->strict_reason;
  EXPECT_EQ(strict->mode, TimingMode::strict);
  const double strict_events = median_of(strict->event_ms);
  const double batched_events = median_of(batched->event_ms);
  std::printf("copy 1 GiB: strict CUPTI %.4f ms events %.4f ms wall %.1f ms; batched CUPTI %.4f "
              "ms events %.4f ms (events/CUPTI %.4f) wall %.1f ms, closest boundary gap %.2f us\n",
              strict->median_ms, strict_events, strict_wall, batched->median_ms, batched_events,
              batched_events / batched->median_ms, batched_wall,
              static_cast<double>(batched->min_gap_ns) * 1e-3);
  EXPECT_NEAR(batched->median_ms, strict->median_ms, 0.03 * strict->median_ms);
  EXPECT_NEAR(batched_events, batched->median_ms, 0.02 * batched->median_ms);
  EXPECT_LT(batched_wall, strict_wall);
  EXPECT_EQ(batched->latencies_ms.size(), 50u);
  ASSERT_EQ(batched->last_call_activities.size(), 1u);
  EXPECT_NE(batched->last_call_activities[0].name.find("copy_kernel"), std::string::npos);
}

// Output reset and flush memsets, then the call: the trial's own memsets are boundaries, not
// the call's work.
TEST(BatchedTrial, TheCallersResetMemsetsAreBoundariesNotCallWork) {
  const std::size_t bytes = std::size_t(64) << 20;
  DeviceBuffer out(bytes);
  Streams streams;
  auto flusher = L2Flusher::create(0);
  ASSERT_TRUE(flusher);
  const CallFn call = [&](cudaStream_t s) {
    spin_kernel<<<1, 1, 0, s>>>(200'000);
    return int(cudaGetLastError());
  };
  auto reset = [&](int) { cudaMemsetAsync(out.as<char>(), 0xFF, bytes, streams.main); };
  auto trial =
      run_trial(timer(), *flusher, call, reset, streams.main, {2, 10, TimingMode::batched});
  ASSERT_TRUE(trial);
  ASSERT_EQ(trial->mode, TimingMode::batched) << trial->strict_reason;
  ASSERT_EQ(trial->last_call_activities.size(), 1u);
  EXPECT_EQ(trial->last_call_activities[0].kind, GpuActivity::Kind::kernel);
  EXPECT_NEAR(trial->median_ms, 0.2, 0.02);
}

// A call that forks onto its own stream after waiting for the call stream, and joins back,
// stays inside its window: batched, and the side work is charged.
TEST(BatchedTrial, JoinedSecondStreamStaysBatchedAndIsCharged) {
  Streams streams;
  cudaEvent_t entered = nullptr;
  ASSERT_EQ(cudaEventCreateWithFlags(&entered, cudaEventDisableTiming), cudaSuccess);
  auto flusher = L2Flusher::create(0);
  ASSERT_TRUE(flusher);
  const CallFn call = [&](cudaStream_t s) {
    cudaEventRecord(entered, s);
    cudaStreamWaitEvent(streams.side, entered, 0);
    spin_kernel<<<1, 1, 0, s>>>(10'000);
    spin_kernel<<<1, 1, 0, streams.side>>>(1'000'000);
    cudaEventRecord(streams.joined, streams.side);
    cudaStreamWaitEvent(s, streams.joined, 0);
    return int(cudaGetLastError());
  };
  auto trial = run_trial(timer(), *flusher, call, {}, streams.main, {3, 10, TimingMode::batched});
  ASSERT_TRUE(trial);
  std::printf("joined side stream, batched: CUPTI %.4f ms, events %.4f ms, mode %s %s\n",
              trial->median_ms, median_of(trial->event_ms),
              std::string(to_string(trial->mode)).c_str(), trial->strict_reason.c_str());
  EXPECT_EQ(trial->mode, TimingMode::batched) << trial->strict_reason;
  EXPECT_GE(trial->median_ms, 0.99);
  EXPECT_LT(trial->median_ms, 1.5);
  EXPECT_FALSE(trial->late_work);
  cudaEventDestroy(entered);
}

// Work left running on another stream escapes its window: the batch is unattributable, the
// trial is timed strictly, and strict mode finds the late work.
TEST(BatchedTrial, UnjoinedStreamFallsBackToStrictWhichReportsLateWork) {
  Streams streams;
  auto flusher = L2Flusher::create(0);
  ASSERT_TRUE(flusher);
  const CallFn call = [&](cudaStream_t s) {
    spin_kernel<<<1, 1, 0, s>>>(10'000);
    spin_kernel<<<1, 1, 0, streams.side>>>(300'000); // not joined
    return int(cudaGetLastError());
  };
  auto trial = run_trial(timer(), *flusher, call, {}, streams.main, {1, 5, TimingMode::batched});
  ASSERT_TRUE(trial);
  std::printf("unjoined side stream: mode %s, reason: %s\n",
              std::string(to_string(trial->mode)).c_str(), trial->strict_reason.c_str());
  EXPECT_EQ(trial->mode, TimingMode::strict);
  EXPECT_FALSE(trial->strict_reason.empty());
  EXPECT_TRUE(trial->late_work);
}

// A call that launches on a stream that does not wait for the call stream (and synchronises
// it before returning) may overlap its own boundary: decided strictly, charged in full.
TEST(BatchedTrial, SideStreamThatSkipsTheCallStreamIsTimedStrictly) {
  Streams streams;
  auto flusher = L2Flusher::create(0);
  ASSERT_TRUE(flusher);
  const CallFn call = [&](cudaStream_t) {
    spin_kernel<<<1, 1, 0, streams.side>>>(500'000);
    return int(cudaStreamSynchronize(streams.side));
  };
  auto trial = run_trial(timer(), *flusher, call, {}, streams.main, {2, 10, TimingMode::batched});
  ASSERT_TRUE(trial);
  std::printf("side stream without waiting: mode %s, CUPTI %.4f ms, reason: %s\n",
              std::string(to_string(trial->mode)).c_str(), trial->median_ms,
              trial->strict_reason.c_str());
  EXPECT_EQ(trial->mode, TimingMode::strict);
  EXPECT_FALSE(trial->late_work);
  EXPECT_GE(trial->median_ms, 0.49);
}

// A call that synchronises its own stream inside stays attributable.
TEST(BatchedTrial, CallThatSynchronisesInsideStaysBatched) {
  Streams streams;
  auto flusher = L2Flusher::create(0);
  ASSERT_TRUE(flusher);
  const CallFn call = [&](cudaStream_t s) {
    spin_kernel<<<1, 1, 0, s>>>(100'000);
    return int(cudaStreamSynchronize(s));
  };
  auto trial = run_trial(timer(), *flusher, call, {}, streams.main, {2, 10, TimingMode::batched});
  ASSERT_TRUE(trial);
  EXPECT_EQ(trial->mode, TimingMode::batched) << trial->strict_reason;
  EXPECT_NEAR(trial->median_ms, 0.1, 0.01);
}

TEST(BatchedTrial, FailingCallEndsTheTrialWithItsStatus) {
  Streams streams;
  auto flusher = L2Flusher::create(0);
  ASSERT_TRUE(flusher);
  int calls = 0;
  const CallFn call = [&](cudaStream_t) { return ++calls == 3 ? 42 : 0; };
  auto trial = run_trial(timer(), *flusher, call, {}, streams.main, {1, 5, TimingMode::batched});
  ASSERT_TRUE(trial);
  EXPECT_EQ(trial->call_status, 42);
  EXPECT_EQ(calls, 3);
}

TEST(L2Flusher, FlushMakesARepeatedSmallReadSlower) {
  const std::size_t bytes = std::size_t(32) << 20;
  DeviceBuffer src(bytes), sink(sizeof(float));
  Streams streams;
  auto flusher = L2Flusher::create(0);
  ASSERT_TRUE(flusher);
  EXPECT_GE(flusher->bytes(), std::size_t(40) << 20);
  const CallFn call = [&](cudaStream_t s) {
    read_kernel<<<132 * 4, 512, 0, s>>>(src.as<float4>(), bytes / 16, sink.as<float>());
    return int(cudaGetLastError());
  };
  auto cold = run_trial(timer(), *flusher, call, {}, streams.main, {3, 25});
  ASSERT_TRUE(cold);
  std::vector<double> warm;
  for (int i = 0; i < 25; ++i) {
    call(streams.main); // warms L2 with the same data
    auto timing = timer().time_call(call, streams.main);
    ASSERT_TRUE(timing);
    warm.push_back(timing->latency_ms);
  }
  std::sort(warm.begin(), warm.end());
  std::printf("32 MiB read: cold %.4f ms, warm %.4f ms, flush %zu bytes\n", cold->median_ms,
              warm[warm.size() / 2], flusher->bytes());
  EXPECT_GT(cold->median_ms, 1.2 * warm[warm.size() / 2]);
}

// The persisting carve-out a call can set aside, and the largest window that fits in half of
// it (0 without persisting L2).
struct Persisting {
  std::size_t carve_out = 0, window = 0;
};
Persisting persisting_limits() {
  int carve_out = 0, window = 0;
  cudaDeviceGetAttribute(&carve_out, cudaDevAttrMaxPersistingL2CacheSize, 0);
  cudaDeviceGetAttribute(&window, cudaDevAttrMaxAccessPolicyWindowSize, 0);
  const std::size_t bytes = std::min<std::size_t>(std::size_t(carve_out) / 2, std::size_t(window));
  return {std::size_t(carve_out), bytes / 16 * 16};
}

// Marks [data, data + bytes) persisting on `stream` (0 bytes clears the window).
void persist(cudaStream_t stream, const void* data, std::size_t bytes) {
  cudaStreamAttrValue value{};
  value.accessPolicyWindow.base_ptr = const_cast<void*>(data);
  value.accessPolicyWindow.num_bytes = bytes;
  value.accessPolicyWindow.hitRatio = bytes != 0 ? 1.0f : 0.0f;
  value.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
  value.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
  cudaStreamSetAttribute(stream, cudaStreamAttributeAccessPolicyWindow, &value);
}

// Class 20 of peers-and-cheats.md §2: a call that keeps its input in persisting L2 lines. The
// carve-out is set aside outside the timed calls (an attacker's first call would), and each
// read goes through a persisting window. Measured side by side, median of 25 each: warm (no
// flush), cold (no window, flushed), a persisting read after the flush alone, and after the
// strict boundary, which also releases persisting lines. On the H200 the L2-sized memset
// evicts persisting lines by itself (0.0063 ms, as cold as without a window, against 0.0038
// warm); the release guards devices where it would not.
TEST(L2Flusher, PersistingLinesDoNotSurviveTheFlushOrTheStrictBoundary) {
  const Persisting limits = persisting_limits();
  if (limits.window < (std::size_t(4) << 20))
    GTEST_SKIP() << "no persisting L2 on this device";
  const std::size_t bytes = limits.window;
  DeviceBuffer src(bytes), sink(sizeof(float));
  Streams streams;
  auto flusher = L2Flusher::create(0);
  ASSERT_TRUE(flusher);
  bool windowed = true;
  const CallFn call = [&](cudaStream_t s) {
    persist(s, src.as<void>(), windowed ? bytes : 0);
    read_kernel<<<132 * 4, 512, 0, s>>>(src.as<float4>(), bytes / 16, sink.as<float>());
    return int(cudaGetLastError());
  };
  auto timed = [&](const std::function<void()>& before) {
    std::vector<double> ms;
    for (int i = 0; i < 25; ++i) {
      cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, limits.carve_out);
      call(streams.main);
      cudaDeviceSynchronize();
      before();
      auto timing = timer().time_call(call, streams.main);
      EXPECT_TRUE(timing);
      ms.push_back(timing ? timing->latency_ms : 0.0);
    }
    return median_of(ms);
  };
  const double warm = timed([] {});
  const double flush_only = timed([&] { flusher->flush(streams.main); });
  const double released = timed([&] {
    flusher->release_persisting();
    cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, limits.carve_out); // the call's own
    flusher->flush(streams.main);
  });
  windowed = false;
  const double cold = timed([&] { flusher->flush(streams.main); });
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < 100; ++i)
    flusher->release_persisting();
  const double release_us =
      std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count() /
      100;
  persist(streams.main, nullptr, 0);
  std::printf("%zu-byte read, %zu-byte carve-out: warm %.4f ms, cold %.4f ms, persisting + "
              "flush %.4f ms, persisting + release + flush %.4f ms; release %.1f us\n",
              bytes, limits.carve_out, warm, cold, flush_only, released, release_us);
  EXPECT_GT(cold, 1.2 * warm);
  EXPECT_GT(flush_only, 0.9 * cold) << "persisting lines outlive the flush";
  EXPECT_GT(released, 0.9 * cold) << "persisting lines outlive the release and the flush";
  EXPECT_EQ(flusher->persisting_bytes(), 0u);
}

// Between batched calls nothing can release persisting lines in stream order, so a batch
// after which a carve-out is set aside is timed strictly, and says why.
TEST(BatchedTrial, APersistingCarveOutIsTimedStrictly) {
  const std::size_t bytes = persisting_limits().carve_out;
  if (bytes == 0)
    GTEST_SKIP() << "no persisting L2 on this device";
  Streams streams;
  auto flusher = L2Flusher::create(0);
  ASSERT_TRUE(flusher);
  const CallFn call = [&](cudaStream_t s) {
    cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, bytes);
    spin_kernel<<<1, 1, 0, s>>>(20'000);
    return int(cudaGetLastError());
  };
  auto trial = run_trial(timer(), *flusher, call, {}, streams.main, {2, 10, TimingMode::batched});
  flusher->release_persisting();
  ASSERT_TRUE(trial);
  EXPECT_EQ(trial->mode, TimingMode::strict);
  EXPECT_NE(trial->strict_reason.find("persisting L2"), std::string::npos) << trial->strict_reason;
  EXPECT_EQ(flusher->persisting_bytes(), 0u);
}

} // namespace
} // namespace ptxbench::measure
