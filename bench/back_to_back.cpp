// 100 back-to-back evaluations in one supervisor process (one exec::Evaluator), good and bad
// candidates mixed, to show that every bad input gets a clear verdict and that nothing leaks:
// no GPU memory and no stray `ptxbench-candidate` processes (issue 3;
// bench/results/back_to_back_h200.md).
//
// Each evaluation records its verdict against the expected one, its wall time, the device's
// free memory (cudaMemGetInfo in the supervisor, which sees every process) before and after,
// and the number of live processes whose command line names ptxbench-candidate (what
// `pgrep -f ptxbench-candidate` counts) beyond the Evaluator's one spare child, which has
// run no candidate (exec/spare_child.hpp). The unknown-problem case is what the library gives a
// caller before any evaluation starts (suite lookup, ErrorKind::not_found); the CLI maps it to
// exit status 2.
//
//   back_to_back [--count N] [--timeout-s S]     prints a markdown report on stdout
#include "bench/bench_evaluator.hpp"
#include "trace/json_io.hpp"
#include "util/fs.hpp"

#include <chrono>
#include <cuda_runtime.h>
#include <filesystem>
#include <fmt/format.h>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#ifndef PTXBENCH_TEST_KERNELS
#define PTXBENCH_TEST_KERNELS "tests/kernels"
#endif

namespace {

using namespace ptxbench;
using Status = trace::EvaluationStatus;

struct Case {
  std::string name;
  std::string kernel; // file under tests/kernels
  int variant = 0;    // PTXBENCH_VARIANT of gemm_bad_variants.cu
  std::string problem = "gemm_n7168_k5120";
  std::string expected; // a status spelling, or "BAD_INPUT"
  bool counts = false;  // run the dynamic-count pass too
};

const std::vector<Case>& cases() {
  static const std::vector<Case> all{
      {"wgmma_tma_gemm (correct)", "sm90_wgmma_tma_gemm.cu", 0, "gemm_n7168_k5120", "PASSED", true},
      {"simt_gemm (correct)", "simt_gemm.cu", 0, "gemm_n7168_k5120", "PASSED"},
      {"transposed B", "gemm_bad_variants.cu", 1, "gemm_n7168_k5120", "INCORRECT_NUMERICAL"},
      {"writes nothing", "gemm_bad_variants.cu", 2, "gemm_n7168_k5120", "INCORRECT_NUMERICAL"},
      {"replays set 0", "gemm_bad_variants.cu", 3, "gemm_n7168_k5120", "INCORRECT_NUMERICAL"},
      {"illegal address", "gemm_bad_variants.cu", 4, "gemm_n7168_k5120", "RUNTIME_ERROR"},
      {"__trap()", "gemm_bad_variants.cu", 5, "gemm_n7168_k5120", "RUNTIME_ERROR"},
      {"never returns", "gemm_bad_variants.cu", 6, "gemm_n7168_k5120", "TIMEOUT"},
      {"exit(0) in run", "gemm_bad_variants.cu", 7, "gemm_n7168_k5120", "RUNTIME_ERROR"},
      {"late work", "gemm_bad_variants.cu", 9, "gemm_n7168_k5120", "RUNTIME_ERROR"},
      {"mutates input", "gemm_bad_variants.cu", 10, "gemm_n7168_k5120", "INCORRECT_NUMERICAL"},
      {"wrong signature", "gemm_wrong_signature.cu", 0, "gemm_n7168_k5120", "COMPILE_ERROR"},
      {"unknown problem", "simt_gemm.cu", 0, "gemm_n7168_k5121", "BAD_INPUT"},
  };
  return all;
}

std::string source_of(const Case& c) {
  auto text = util::read_file(std::string(PTXBENCH_TEST_KERNELS) + "/" + c.kernel);
  if (!text)
    throw util::Fatal(text.error().message);
  return c.variant == 0 ? *text : fmt::format("#define PTXBENCH_VARIANT {}\n{}", c.variant, *text);
}

// Live processes whose command line contains "ptxbench-candidate" (pgrep -f).
int stray_candidates() {
  int count = 0;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    std::ifstream in(entry.path() / "cmdline", std::ios::binary);
    std::string cmdline((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (cmdline.find("ptxbench-candidate") != std::string::npos)
      ++count;
  }
  return count;
}

double free_mib() {
  std::size_t free = 0, total = 0;
  if (cudaMemGetInfo(&free, &total) != cudaSuccess)
    throw util::Fatal("cudaMemGetInfo failed");
  return static_cast<double>(free) / (1024.0 * 1024.0);
}

struct Outcome {
  std::string verdict;
  std::string message;
};

Outcome evaluate(bench::BenchEvaluator& bench, const Case& c, std::chrono::milliseconds timeout) {
  auto problem = bench.suite->find(c.problem);
  if (!problem)
    return {"BAD_INPUT",
            fmt::format("{}: {}", util::to_string(problem.error().kind), problem.error().message)};
  exec::EvalOptions options;
  options.sets = 2;
  options.trials = 1;
  options.warmup = 1;
  options.iterations = 3;
  options.timeout = timeout;
  options.reference_timing = exec::ReferenceTiming::cached;
  options.dynamic_counts = c.counts;
  auto ev = bench.evaluator->evaluate(source_of(c), **problem, options);
  if (!ev)
    return {"ERROR", ev.error().message};
  return {std::string(trace::to_string(ev->status)), ev->message};
}

std::string one_line(std::string text, std::size_t max) {
  for (char& ch : text)
    if (ch == '\n' || ch == '|')
      ch = ' ';
  return text.size() > max ? text.substr(0, max) + "…" : text;
}

} // namespace

int main(int argc, char** argv) {
  try {
    int count = 100;
    double timeout_s = 3.0;
    for (int i = 1; i + 1 < argc; i += 2) {
      const std::string flag = argv[i];
      if (flag == "--count")
        count = std::stoi(argv[i + 1]);
      else if (flag == "--timeout-s")
        timeout_s = std::stod(argv[i + 1]);
    }
    const auto timeout = std::chrono::milliseconds(static_cast<long long>(timeout_s * 1000));
    bench::BenchEvaluator bench;
    // Warm-up outside the record: fills the compile cache and the reference-latency cache.
    (void)evaluate(bench, cases().front(), timeout);
    bench.evaluator->settle();
    const double free_start = free_mib();
    const int strays_start = stray_candidates() - bench.evaluator->spare_processes();
    fmt::print("| # | case | expected | verdict | ok | wall s | free MiB before | free MiB after "
               "| candidates alive | message |\n|---|---|---|---|---|---|---|---|---|---|\n");
    int mismatches = 0, max_strays = 0;
    std::map<std::string, int> per_verdict;
    double total_s = 0.0;
    for (int i = 0; i < count; ++i) {
      const Case& c = cases()[static_cast<std::size_t>(i) % cases().size()];
      const double before = free_mib();
      const auto start = std::chrono::steady_clock::now();
      const Outcome outcome = evaluate(bench, c, timeout);
      const double wall =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      bench.evaluator->settle(); // the finished child's end runs in the background
      const double after = free_mib();
      const int strays = stray_candidates() - bench.evaluator->spare_processes();
      const bool ok = outcome.verdict == c.expected;
      mismatches += ok ? 0 : 1;
      max_strays = std::max(max_strays, strays);
      ++per_verdict[outcome.verdict];
      total_s += wall;
      fmt::print("| {} | {} | {} | {} | {} | {:.2f} | {:.0f} | {:.0f} | {} | {} |\n", i, c.name,
                 c.expected, outcome.verdict, ok ? "yes" : "**NO**", wall, before, after, strays,
                 one_line(outcome.message, 140));
      std::fflush(stdout);
    }
    const double free_end = free_mib();
    fmt::print("\n## Summary\n\n- evaluations: {} in {:.1f} s; verdict ≠ expected: {}\n", count,
               total_s, mismatches);
    for (const auto& [verdict, n] : per_verdict)
      fmt::print("- {}: {}\n", verdict, n);
    fmt::print("- device free memory: {:.0f} MiB after the warm-up, {:.0f} MiB at the end "
               "(change {:+.0f} MiB)\n",
               free_start, free_end, free_end - free_start);
    fmt::print("- ptxbench-candidate processes alive: {} before, at most {} after any evaluation, "
               "{} at the end\n",
               strays_start, max_strays, stray_candidates() - bench.evaluator->spare_processes());
    const bool leak =
        free_start - free_end > 64.0 || stray_candidates() > bench.evaluator->spare_processes();
    fmt::print("- result: {}\n",
               mismatches == 0 && !leak ? "all verdicts as expected, no leak" : "FAILED");
    return mismatches == 0 && !leak ? 0 : 1;
  } catch (const std::exception& e) {
    fmt::print(stderr, "back_to_back: {}\n", e.what());
    return 2;
  }
}
