// strict_call_steps: where the strict protocol's ~1 ms per call goes (issue 35). An evaluation's
// timing phase is its GPU time plus ~1.0 ms per call that does not depend on the candidate
// (`calibrated_overhead_ms`, bench/results/eval_throughput_h200.md, stop 29); this splits that
// millisecond without touching the evaluator:
//   1. one strict call as the child times it (measure::run_trial with 0 warm-up and 1 timed
//      call, the outputs reset in `before_each`), with host timestamps taken inside the
//      caller's own lambdas: trial entry → reset enqueued → (persisting lines released, L2
//      flush enqueued, device synchronised, window opened, start event) → call launched →
//      (end event, stream and device synchronised, CUPTI forced flush, records charged) →
//      returned; the second gap less the call's own latency is the window's closing cost;
//   2. the primitives alone: cudaDeviceSynchronize on an idle device, the L2 flush waited for,
//      time_call of a call that launches nothing (synchronisations, timestamps, CUPTI's forced
//      flush with no records);
//   3. the supervisor↔child round trip without CUDA: a time request and a one-call reply
//      encoded, written through a pipe to another process, decoded, answered the same way.
// For the child's one-block kernel (what the calibration times) and the wgmma+TMA GEMM.
//   strict_call_steps [--calls N]   (default 200) prints a markdown report on stdout
//   strict_call_steps --round-trip  part 3 alone (no GPU needed)
#include "bench/wgmma_gemm_call.hpp"
#include "measure/instruction_counter.hpp"
#include "measure/timing.hpp"
#include "protocol/protocol.hpp"
#include "util/error.hpp"
#include "util/stats.hpp"

#include <array>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>
#include <cupti.h>
#include <fmt/format.h>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

namespace {

using namespace ptxbench;
using Clock = std::chrono::steady_clock;

double us(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double, std::micro>(to - from).count();
}

struct Gaps {
  std::vector<double> entry, reset, before_window, launch, after_call, latency, total;
};

double median(std::vector<double> values) {
  return values.empty() ? 0.0 : util::median(values);
}

// Part 1: `calls` strict one-call trials of `call`, each gap timed from the caller's lambdas.
Gaps strict_calls(measure::CallTimer& timer, measure::L2Flusher& flusher,
                  const measure::CallFn& call, const std::function<void(cudaStream_t)>& reset,
                  cudaStream_t stream, int calls) {
  Gaps gaps;
  for (int i = 0; i < calls; ++i) {
    Clock::time_point entered, reset_done, launched, returned_from_call;
    auto before_each = [&](int) {
      entered = Clock::now();
      reset(stream);
      reset_done = Clock::now();
    };
    auto timed = [&](cudaStream_t s) {
      launched = Clock::now();
      const int status = call(s);
      returned_from_call = Clock::now();
      return status;
    };
    const Clock::time_point began = Clock::now();
    auto trial = measure::run_trial(timer, flusher, timed, before_each, stream,
                                    {0, 1, measure::TimingMode::strict});
    const Clock::time_point ended = Clock::now();
    if (!trial || trial->latencies_ms.empty())
      throw util::Fatal(trial ? "no latency" : trial.error().message);
    gaps.entry.push_back(us(began, entered));
    gaps.reset.push_back(us(entered, reset_done));
    gaps.before_window.push_back(us(reset_done, launched));
    gaps.launch.push_back(us(launched, returned_from_call));
    gaps.after_call.push_back(us(returned_from_call, ended));
    gaps.latency.push_back(trial->latencies_ms.front() * 1e3);
    gaps.total.push_back(us(began, ended));
  }
  return gaps;
}

template <typename Work> double median_us(int calls, Work&& work) {
  std::vector<double> samples;
  for (int i = 0; i < calls; ++i) {
    const Clock::time_point began = Clock::now();
    work();
    samples.push_back(us(began, Clock::now()));
  }
  return median(samples);
}

// Part 3: the pipe round trip of one time request and its reply, encoded and decoded as the
// supervisor and the child do, between this process and a forked echo.
double round_trip_us(int calls) {
  protocol::Request request;
  request.op = protocol::RequestOp::time;
  request.id = 0x1234'5678'9abc'def0ULL;
  request.warmup = 0;
  request.iterations = 1;
  request.mode = measure::TimingMode::strict;
  protocol::Reply reply;
  reply.id = request.id;
  reply.latencies_ms = {1.4953};
  reply.event_ms = {1.5012};
  reply.last_set = 2;
  reply.kernels = {
      {"_Z22gemm_wgmma_tma_kernelPK13__nv_bfloat16S1_PS_l", 7, 1.4953,
       "grid 132x1x1 block 384x1x1 cluster 1x1x1 smem 0+229376 B (executed 233472 B) regs 168"}};
  reply.kernel_sets = {{{"_Z22gemm_wgmma_tma_kernelPK13__nv_bfloat16S1_PS_l"}, 1}};
  const std::string request_line = protocol::encode(request) + "\n";
  const std::string reply_line = protocol::encode(reply) + "\n";
  int to_child[2], to_parent[2];
  if (pipe(to_child) != 0 || pipe(to_parent) != 0)
    throw util::Fatal("pipe failed");
  // Requests and replies alternate, so a read never holds more than one line.
  auto read_line = [](int fd) {
    std::string line;
    std::array<char, 4096> buffer{};
    while (line.empty() || line.back() != '\n') {
      const ssize_t n = read(fd, buffer.data(), buffer.size());
      if (n <= 0)
        break;
      line.append(buffer.data(), static_cast<std::size_t>(n));
    }
    if (!line.empty())
      line.pop_back();
    return line;
  };
  const pid_t pid = fork();
  if (pid == 0) {
    for (int i = 0; i < calls; ++i) {
      auto decoded = protocol::decode_request(read_line(to_child[0]));
      const std::string answer = decoded ? reply_line : std::string("\n");
      (void)write(to_parent[1], answer.data(), answer.size());
    }
    _exit(0);
  }
  std::vector<double> samples;
  for (int i = 0; i < calls; ++i) {
    const Clock::time_point began = Clock::now();
    (void)write(to_child[1], request_line.data(), request_line.size());
    auto decoded = protocol::decode_reply(read_line(to_parent[0]));
    samples.push_back(us(began, Clock::now()));
    if (!decoded)
      throw util::Fatal("the reply did not decode: " + decoded.error().message);
  }
  waitpid(pid, nullptr, 0);
  for (int fd : {to_child[0], to_child[1], to_parent[0], to_parent[1]})
    close(fd);
  return median(samples);
}

void print_gaps(const char* name, const Gaps& gaps) {
  const double latency = median(gaps.latency);
  std::vector<double> closing;
  for (std::size_t i = 0; i < gaps.after_call.size(); ++i)
    closing.push_back(gaps.after_call[i] - gaps.latency[i]);
  fmt::print("| {} | {:.1f} | {:.1f} | {:.1f} | {:.1f} | {:.1f} | {:.1f} | {:.1f} | {:.1f} |\n",
             name, median(gaps.total), latency, median(gaps.entry), median(gaps.reset),
             median(gaps.before_window), median(gaps.launch), median(closing),
             median(gaps.total) - latency);
}

} // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::strcmp(argv[1], "--round-trip") == 0) {
    fmt::print("round trip {:.1f} µs (median of 200)\n", round_trip_us(200));
    return 0;
  }
  const int calls = argc == 3 && std::strcmp(argv[1], "--calls") == 0 ? std::atoi(argv[2]) : 200;
  auto timer = measure::cupti_call_timer(); // tracing before any module loads, as the child
  if (!timer)
    throw util::Fatal(timer.error().message);
  auto flusher = measure::L2Flusher::create(0);
  if (!flusher)
    throw util::Fatal(flusher.error().message);
  cudaStream_t stream = nullptr;
  cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  bench::WgmmaGemmCall gemm;
  auto gemm_call = [&](cudaStream_t s) { return gemm(s); };
  auto gemm_reset = [&](cudaStream_t s) { gemm.reset(s); };
  auto tiny_call = [](cudaStream_t s) { return measure::launch_warmup_kernel(s); };
  auto tiny_reset = [&](cudaStream_t s) { gemm.reset(s); }; // the child resets outputs either way
  // Warm everything once (module loading, CUPTI buffers).
  (void)strict_calls(**timer, *flusher, gemm_call, gemm_reset, stream, 5);
  (void)strict_calls(**timer, *flusher, tiny_call, tiny_reset, stream, 5);

  fmt::print("# strict_call_steps ({} calls each, medians, µs)\n\n", calls);
  const auto setting = [](const char* name) {
    const char* value = std::getenv(name);
    return value != nullptr && *value != '\0' ? std::string(value) : std::string("default");
  };
  fmt::print("CUPTI activity buffers (measure/activity_buffers.hpp): PTXBENCH_CUPTI_BUFFER_BYTES "
             "{}, PTXBENCH_CUPTI_IDLE_BUFFERS {}; CUPTI's record buffers: "
             "PTXBENCH_CUPTI_DEVICE_BUFFER_BYTES {}, PTXBENCH_CUPTI_HOST_PINNED {}\n\n",
             setting("PTXBENCH_CUPTI_BUFFER_BYTES"), setting("PTXBENCH_CUPTI_IDLE_BUFFERS"),
             setting("PTXBENCH_CUPTI_DEVICE_BUFFER_BYTES"), setting("PTXBENCH_CUPTI_HOST_PINNED"));
  // What CUPTI took of them (its attributes read back; a setting CUPTI ignored shows here).
  std::size_t device_bytes = 0;
  std::size_t device_size = sizeof device_bytes;
  std::uint8_t pinned = 0;
  std::size_t pinned_size = sizeof pinned;
  if (cuptiActivityGetAttribute(CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE, &device_size,
                                &device_bytes) == CUPTI_SUCCESS &&
      cuptiActivityGetAttribute(CUPTI_ACTIVITY_ATTR_MEM_ALLOCATION_TYPE_HOST_PINNED, &pinned_size,
                                &pinned) == CUPTI_SUCCESS)
    fmt::print("CUPTI's attributes: record buffer {} B, in {}\n\n", device_bytes,
               pinned != 0 ? "pinned host memory" : "device memory");
  else
    fmt::print("CUPTI's attributes: not readable\n\n");
  fmt::print("## 1. One strict call as the child times it\n\n| call | total | its latency | "
             "trial entry | output reset enqueued (the first CUDA call after the last flush) | "
             "reset done → launch (release, flush, sync, window open) | launch | after the call "
             "less its latency (sync, CUPTI flush, charge) | overhead (total − latency) "
             "|\n|---|---|---|---|---|---|---|---|---|\n");
  print_gaps("one-block kernel (the calibration)",
             strict_calls(**timer, *flusher, tiny_call, tiny_reset, stream, calls));
  print_gaps("wgmma+TMA GEMM",
             strict_calls(**timer, *flusher, gemm_call, gemm_reset, stream, calls));

  fmt::print("\n## 2. The primitives alone\n\n| step | median µs |\n|---|---|\n");
  fmt::print("| cudaDeviceSynchronize, device idle | {:.1f} |\n",
             median_us(calls, [] { cudaDeviceSynchronize(); }));
  fmt::print(
      "| persisting L2 lines released (cudaCtxResetPersistingL2Cache), waited for | {:.1f} |\n",
      median_us(calls, [&] {
        flusher->release_persisting();
        cudaDeviceSynchronize();
      }));
  fmt::print("| L2 flush ({} MiB), waited for | {:.1f} |\n", flusher->bytes() >> 20,
             median_us(calls, [&] {
               flusher->flush(stream);
               cudaStreamSynchronize(stream);
             }));
  fmt::print("| output reset (memset of the GEMM's C), waited for | {:.1f} |\n",
             median_us(calls, [&] {
               gemm.reset(stream);
               cudaStreamSynchronize(stream);
             }));
  fmt::print("| time_call of a call that launches nothing | {:.1f} |\n", median_us(calls, [&] {
               (void)(*timer)->time_call([](cudaStream_t) { return 0; }, stream);
             }));
  fmt::print("| time_call of the one-block kernel | {:.1f} |\n",
             median_us(calls, [&] { (void)(*timer)->time_call(tiny_call, stream); }));

  fmt::print("\n## 3. Supervisor ↔ child round trip, no CUDA\n\n| step | median µs |\n|---|---|\n");
  fmt::print("| time request and one-call reply: encode, pipe, decode, both ways | {:.1f} |\n",
             round_trip_us(calls));
  cudaStreamDestroy(stream);
  return 0;
}
