// Whether a range-profiler session kept open across a candidate's life pays: the counting
// pass of one call of the wgmma+TMA GEMM (M=8192, N=7168, K=5120) with and without a session
// opened ahead of time (InstructionCounter::open_session, warmed with a one-block kernel), and
// whether an open session changes the kernel's timed latency (strict CUPTI trials of 10
// warm-up + 50 timed calls, L2 flushed before each, interleaved: closed, open, closed, …).
//   counter_session [--cycles N]     prints a markdown report on stdout
//   counter_session --hold S         opens a session, waits S seconds, counts once, closes:
//                                    run two at once to see whether two processes can each
//                                    hold a session on one GPU (the evaluator's children do)
#include "bench/phase_text.hpp"
#include "bench/wgmma_gemm_call.hpp"
#include "measure/instruction_counter.hpp"
#include "measure/nvml_monitor.hpp"
#include "measure/timing.hpp"
#include "util/phases.hpp"

#include <chrono>
#include <cstdint>
#include <cstring>
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <fmt/format.h>
#include <thread>
#include <vector>

namespace {

using namespace ptxbench;
using Gemm = bench::WgmmaGemmCall;

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

struct Bench {
  measure::CallTimer& timer;
  measure::L2Flusher flusher;
  measure::InstructionCounter counter;
  Gemm gemm;
  cudaStream_t stream = nullptr;

  double trial() { return bench::strict_trial_median(timer, flusher, gemm, stream); }

  void count(const char* label, int cycle) {
    auto counts = counter.count([&](cudaStream_t s) { return gemm(s); }, stream,
                                [&](cudaStream_t s) { gemm.reset(s); });
    if (!counts) {
      fmt::print("| {} | {} | error: {} | | | |\n", cycle, label, counts.error().message);
      return;
    }
    fmt::print("| {} | {} | {:.1f} | {:.0f} | {:.6g} | {} |\n", cycle, label, counts->pass_ms,
               counts->total("smsp__sass_inst_executed_op_shared_gmma.sum").value_or(0.0),
               counts->total("sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32.sum").value_or(0.0),
               bench::phases_text(counts->steps));
  }
};

} // namespace

int main(int argc, char** argv) {
  const int cycles = argc > 2 && std::strcmp(argv[1], "--cycles") == 0 ? std::atoi(argv[2]) : 4;
  auto timer = measure::cupti_call_timer(); // tracing before any module loads
  if (!timer)
    throw util::Fatal(timer.error().message);
  measure::CounterOptions options;
  options.replay = measure::CounterReplay::user;
  options.availability = measure::CounterAvailability::assume;
  auto counter = measure::InstructionCounter::create_with(0, options);
  if (!counter)
    throw util::Fatal(counter.error().message);
  auto flusher = measure::L2Flusher::create(0);
  if (!flusher)
    throw util::Fatal(flusher.error().message);
  Bench bench{**timer, std::move(*flusher), std::move(*counter), {}, nullptr};
  cudaStreamCreate(&bench.stream);
  auto monitor = measure::GpuMonitor::create(0);
  auto clocks = [&] {
    if (!monitor)
      return std::string("no NVML");
    auto snap = monitor->snapshot();
    return snap ? fmt::format("SM {} MHz, {:.0f} W, {} C", snap->sm_clock_mhz, snap->power_w,
                              snap->temperature_c)
                : std::string("no snapshot");
  };
  if (argc > 2 && std::strcmp(argv[1], "--launches") == 0) {
    const int launches = std::atoi(argv[2]);
    auto many = [&](cudaStream_t s) {
      for (int i = 0; i < launches; ++i)
        if (int status = measure::launch_warmup_kernel(s); status != 0)
          return status;
      return 0;
    };
    auto trial = [&] {
      auto timed = measure::run_trial(bench.timer, bench.flusher, many, {}, bench.stream,
                                      {10, 50, measure::TimingMode::strict});
      if (!timed)
        throw util::Fatal(timed.error().message);
      return timed->median_ms;
    };
    std::vector<double> closed, open;
    for (int cycle = 0; cycle < 3; ++cycle) {
      closed.push_back(trial());
      auto warm = bench.counter.open_session(measure::launch_warmup_kernel, bench.stream);
      if (!warm)
        throw util::Fatal(warm.error().message);
      open.push_back(trial());
      bench.counter.close_session();
    }
    fmt::print("launches {}: closed {} ms; open {} ms\n", launches, fmt::join(closed, " "),
               fmt::join(open, " "));
    return 0;
  }
  if (argc > 1 && std::strcmp(argv[1], "--late-load") == 0) {
    auto warm = bench.counter.open_session(measure::launch_warmup_kernel, bench.stream);
    if (!warm)
      throw util::Fatal(warm.error().message);
    fmt::print("late-load: session open ({}), GEMM module not loaded yet\n",
               bench::phases_text(*warm));
    fmt::print(
        "| | session | wall ms | GMMA | hgmma bf16 FLOPs | steps |\n|---|---|---|---|---|---|\n");
    std::vector<double> open_trials{bench.trial(), bench.trial()};
    bench.count("open, module loaded after the session", 0);
    open_trials.push_back(bench.trial());
    bench.counter.close_session();
    std::vector<double> closed_trials{bench.trial(), bench.trial(), bench.trial()};
    auto again = bench.counter.open_session(measure::launch_warmup_kernel, bench.stream);
    if (!again)
      throw util::Fatal(again.error().message);
    open_trials.push_back(bench.trial());
    bench.count("reopened", 1);
    fmt::print("open trials: {}\nclosed trials: {}\n", fmt::join(open_trials, " "),
               fmt::join(closed_trials, " "));
    return 0;
  }
  bench.gemm(bench.stream);
  cudaStreamSynchronize(bench.stream);
  if (argc > 2 && std::strcmp(argv[1], "--hold") == 0) {
    const auto began = std::chrono::steady_clock::now();
    auto warm = bench.counter.open_session(measure::launch_warmup_kernel, bench.stream);
    fmt::print("hold: open_session {} after {:.1f} ms\n", warm ? "ok" : warm.error().message,
               ms_since(began));
    std::this_thread::sleep_for(std::chrono::duration<double>(std::atof(argv[2])));
    fmt::print(
        "| | session | wall ms | GMMA | hgmma bf16 FLOPs | steps |\n|---|---|---|---|---|---|\n");
    bench.count("held", 0);
    fmt::print("hold: trial {:.4f} ms, closed {} ms after start\n", bench.trial(),
               (bench.counter.close_session(), ms_since(began)));
    return 0;
  }
  fmt::print("# counter_session\n\nstart: {}\n\n## Counting passes (ms)\n\n| cycle | session | "
             "wall ms | GMMA | hgmma bf16 FLOPs | steps |\n|---|---|---|---|---|---|\n",
             clocks());
  std::vector<double> closed, open;
  std::vector<std::string> session_rows;
  for (int cycle = 0; cycle < cycles; ++cycle) {
    bench.count("none (count opens and closes its own)", cycle);
    closed.push_back(bench.trial());
    const auto opened = std::chrono::steady_clock::now();
    auto warm = bench.counter.open_session(measure::launch_warmup_kernel, bench.stream);
    if (!warm) {
      fmt::print("| {} | open_session | error: {} | | | |\n", cycle, warm.error().message);
      continue;
    }
    session_rows.push_back(
        fmt::format("| {} | {:.1f} | {} |", cycle, ms_since(opened), bench::phases_text(*warm)));
    open.push_back(bench.trial());
    bench.count("open, first count", cycle);
    bench.count("open, second count", cycle);
    open.push_back(bench.trial());
    const util::Phase closed_step = bench.counter.close_session();
    session_rows.back() +=
        fmt::format(" {:.1f} |", static_cast<double>(closed_step.elapsed.count()) / 1000.0);
    closed.push_back(bench.trial());
  }
  fmt::print("\n## open_session (warm-up with a one-block kernel)\n\n| cycle | wall ms | steps | "
             "close ms |\n|---|---|---|---|\n");
  for (const std::string& row : session_rows)
    fmt::print("{}\n", row);
  fmt::print("\n## Timed trials (strict, median of 50 calls, ms), in the order run\n\n");
  fmt::print("closed: {}\nopen:   {}\n", fmt::join(closed, " "), fmt::join(open, " "));
  auto mean = [](const std::vector<double>& v) {
    double sum = 0;
    for (double x : v)
      sum += x;
    return v.empty() ? 0.0 : sum / double(v.size());
  };
  fmt::print("mean closed {:.4f}, mean open {:.4f}, open/closed {:.4f}\n\nend: {}\n", mean(closed),
             mean(open), mean(open) / mean(closed), clocks());
  cudaStreamDestroy(bench.stream);
  return 0;
}
