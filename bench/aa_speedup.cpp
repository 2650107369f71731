// A/A benchmark of the evaluator: the library baseline evaluated as a candidate must give a
// speedup of 1.00 ± 0.01 (issue 3; bench/results/aa_speedup_h200.md).
//
// Problem. A speedup is the reference's latency, timed in the supervisor, over the candidate's,
// timed by CUPTI in the child process. Any asymmetry between the two paths (process, stream,
// L2 flush, output reset, launch overhead, the order of interleaved trials) shows up as a
// speedup away from 1 when both sides run the same code.
//
// Approach. The A/A candidates (bench/aa/<problem>.cu) are ordinary candidates — gate,
// nvcc with the shim, kernel.so, a fresh child per evaluation, `time` requests interleaved
// with reference trials — whose `run` calls the supervisor's own baseline factory through a
// hook exported only by the benchmark's child binary, ptxbench-candidate-aa
// (aa_baseline_hook.cpp). So the algorithm, workspace and plan are those of reference/. The
// benchmark also times one reference call in this process and compares the kernels it
// launched with those the candidate's last timed call launched (same algorithm ⇒ same
// kernels).
//
//   aa_speedup --candidate PATH [--problems a,b] [--repeats N] [--kernels DIR]
//              [--timing batched|strict]   (default: EvalOptions' default, strict)
//              [--interleave-calls N]      (default: EvalOptions' default; 0: whole trials)
//              [--reference interleave|cached] [--gap-ms G]
//              [--counts on|off]           (default off: the A/A times only)
//              [--counter-session when-idle|beside-timing]  (default: when-idle)
//              [--children spare|on-demand]  (default: spare)
//              [--spare-prepare beside-evaluation|after-timing]  (default: beside-evaluation)
//              [--gqa-baseline flashinfer|cudnn]  (default: flashinfer)
// prints a markdown report on stdout. With --reference cached the first repeat of a problem
// times the reference (the cache is empty) and the later ones reuse that latency, as
// `ptxbench eval --cached-reference` does: their speedups show what reuse costs in accuracy.
// --gap-ms idles before every repeat but the first (a service's gaps between requests).
// --counts on adds the counting pass; with --counter-session beside-timing and no gap, the
// next evaluation's spare then opens its counter session beside every evaluation's trials, and
// a speedup within 1.00 ± 0.01 is the check that this does not move timed latencies.
// --children on-demand starts each evaluation's child when it is needed (no spare, so no
// counter session opened ahead); --spare-prepare after-timing prepares the next spare only once
// the running evaluation has timed (spare_child.hpp). --gqa-baseline cudnn makes the GQA problems'
// baseline, on both sides, cuDNN SDPA: the candidate names its problem as "<problem>@cudnn" to the
// hook. PTXBENCH_AA_BUFFER_PROBE=1 in the environment adds the buffer probe: the baseline timed
// with CUDA events on the child's mapped call slot, on the child's own copies (the hook) and on the
// supervisor's own buffers (here) — where a kernel runs slower in the child, whether it is the
// memory or the process.
#include "bench/aa_autotune_handover.hpp"
#include "bench/bench_evaluator.hpp"
#include "bench/event_probe.hpp"
#include "cuda/device.hpp"
#include "exec/buffers.hpp"
#include "measure/timing.hpp"
#include "protocol/device_buffer.hpp"
#include "reference/gemm_autotune.hpp"
#include "reference/reference.hpp"
#include "reference/shapes.hpp"
#include "suite/suite.hpp"
#include "trace/json_io.hpp"
#include "util/fs.hpp"
#include "util/strings.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>
#include <fmt/format.h>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#ifndef PTXBENCH_AA_KERNELS
#define PTXBENCH_AA_KERNELS "bench/aa"
#endif

namespace {

using namespace ptxbench;

struct Arguments {
  std::string candidate;
  std::vector<std::string> problems{"gemm_n7168_k5120", "mha_with_lse_d128"};
  int repeats = 3;
  std::string kernels = PTXBENCH_AA_KERNELS;
  int gap_ms = 0; // idle before every repeat but the first
  reference::GqaBaseline gqa = reference::GqaBaseline::flashinfer;
  exec::EvaluatorOptions evaluator;
  exec::EvalOptions options = [] {
    exec::EvalOptions o; // the paper's protocol, no counting pass (A/A times only)
    o.dynamic_counts = false;
    o.launch_rules = exec::LaunchRules::report; // the candidate is the library baseline itself
    return o;
  }();
};

std::vector<std::string> split_commas(const std::string& text) {
  std::vector<std::string> out(1);
  for (char c : text)
    if (c == ',')
      out.emplace_back();
    else
      out.back() += c;
  return out;
}

Arguments parse(int argc, char** argv) {
  Arguments args;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i], value = argv[i + 1];
    if (flag == "--candidate")
      args.candidate = value;
    else if (flag == "--problems")
      args.problems = split_commas(value);
    else if (flag == "--repeats")
      args.repeats = std::stoi(value);
    else if (flag == "--kernels")
      args.kernels = value;
    else if (flag == "--timing" && (value == "batched" || value == "strict"))
      args.options.timing_mode =
          value == "batched" ? measure::TimingMode::batched : measure::TimingMode::strict;
    else if (flag == "--interleave-calls")
      args.options.interleave_calls = std::stoi(value);
    else if (flag == "--reference" && (value == "interleave" || value == "cached"))
      args.options.reference_timing =
          value == "cached" ? exec::ReferenceTiming::cached : exec::ReferenceTiming::interleave;
    else if (flag == "--gap-ms")
      args.gap_ms = std::stoi(value);
    else if (flag == "--counts" && (value == "on" || value == "off"))
      args.options.dynamic_counts = value == "on";
    else if (flag == "--counter-session" && (value == "when-idle" || value == "beside-timing"))
      args.evaluator.counter_session = value == "beside-timing"
                                           ? exec::CounterSessionAhead::beside_timing
                                           : exec::CounterSessionAhead::when_idle;
    else if (flag == "--spare-prepare" && (value == "beside-evaluation" || value == "after-timing"))
      args.evaluator.spare_prepare = value == "after-timing"
                                         ? exec::SparePrepare::after_timing
                                         : exec::SparePrepare::beside_evaluation;
    else if (flag == "--children" && (value == "spare" || value == "on-demand"))
      args.evaluator.children =
          value == "spare" ? exec::ChildStart::spare : exec::ChildStart::on_demand;
    else if (flag == "--gqa-baseline" && (value == "flashinfer" || value == "cudnn"))
      args.options.gqa_reference = args.gqa =
          value == "cudnn" ? reference::GqaBaseline::cudnn : reference::GqaBaseline::flashinfer;
    else
      throw util::Fatal("unknown argument " + flag);
  }
  if (args.candidate.empty())
    throw util::Fatal("--candidate PATH (ptxbench-candidate-aa) is required");
  return args;
}

// Each GEMM problem's baseline built here, so its algorithm is chosen (and kept in the autotune
// cache) before any child starts, and the cache's records handed to every child in the
// environment (aa_autotune_handover.hpp).
void hand_autotune_records_to_children(const std::vector<std::string>& problems) {
  auto suite = suite::Suite::load_default();
  if (!suite)
    throw util::Fatal(suite.error().message);
  std::vector<reference::GemmShape> shapes;
  for (const std::string& name : problems) {
    auto problem = suite->find(name);
    if (!problem || (*problem)->kind != suite::OpKind::gemm)
      continue;
    if (auto shape = reference::gemm_shape(**problem))
      shapes.push_back(*shape);
    if (auto baseline = reference::make_library_reference(**problem); !baseline)
      fmt::print(stderr, "aa_speedup: {}: no library baseline to hand over ({})\n", name,
                 baseline.error().message);
  }
  const auto& file = reference::AutotuneCache::shared().file();
  auto text = util::read_file(file);
  if (!text) {
    fmt::print(stderr, "aa_speedup: no autotune records to hand to the children ({})\n",
               text.error().message);
    return;
  }
  auto records = reference::parse_autotune_records(*text, file.string());
  if (!records) {
    fmt::print(stderr, "aa_speedup: {}\n", records.error().message);
    return;
  }
  // Only these problems' shapes: a cache that grew over many devices and shapes must not
  // outgrow what one environment string may hold.
  std::erase_if(*records, [&](const reference::AutotuneRecord& record) {
    return std::find(shapes.begin(), shapes.end(), record.key.shape) == shapes.end();
  });
  ::setenv(bench::kAaAutotuneRecordsVariable, reference::autotune_records_json(*records).c_str(),
           1);
}

// The kernels one reference call launches, timed in this (the supervisor's) process, each
// with its launch configuration (measure::GpuActivity::launch) in `launches`.
std::set<std::string> reference_kernels(const bench::BenchEvaluator& bench,
                                        const suite::Problem& problem, reference::GqaBaseline gqa,
                                        std::vector<std::string>& launches) {
  auto timer = measure::cupti_call_timer();
  auto stream = cuda::create_stream();
  auto reference = reference::make_library_reference(problem, gqa);
  if (!timer || !stream || !reference)
    throw util::Fatal("reference kernels: set-up failed");
  auto buffers = exec::EvalBuffers::create(*bench.suite, problem, **reference, 1, 1, stream->get());
  if (!buffers)
    throw util::Fatal("reference kernels: " + buffers.error().message);
  auto call = [&](cudaStream_t s) {
    return (*reference)->run(buffers->reference_call(0, s)) ? 0 : -1;
  };
  (void)(*timer)->time_call(call, stream->get()); // warm-up: plans and modules load here
  auto timing = (*timer)->time_call(call, stream->get());
  if (!timing)
    throw util::Fatal("reference kernels: " + timing.error().message);
  if (std::getenv("PTXBENCH_AA_BUFFER_PROBE") != nullptr) {
    // The hook's buffer probe (aa_baseline_hook.cpp), here on the supervisor's own buffers.
    const auto medians =
        bench::interleaved_event_ms(stream->get(), {[&](cudaStream_t s) { return call(s) == 0; }},
                                    bench::kBufferProbeRounds, bench::kBufferProbeWarmup);
    if (medians)
      fmt::print("- supervisor buffer probe (CUDA events, median of {}): its own buffers {:.4f} "
                 "ms\n",
                 bench::kBufferProbeRounds, (*medians)[0]);
  }
  std::set<std::string> names;
  for (const measure::GpuActivity& a : timing->activities)
    if (a.kind == measure::GpuActivity::Kind::kernel) {
      names.insert(a.name);
      launches.push_back(a.launch);
    }
  return names;
}

std::string number_list(const std::vector<double>& values) {
  std::string out;
  for (double v : values)
    out += fmt::format("{}{:.4f}", out.empty() ? "" : " ", v);
  return out;
}

std::string joined(const std::vector<std::string>& items, std::string_view separator) {
  std::string out;
  for (const std::string& item : items)
    out += (out.empty() ? "" : std::string(separator)) + item;
  return out;
}

// One evaluation of the A/A candidate with the paper protocol (3 sets, 3 trials × (10 + 50)
// calls, reference trials interleaved in chunks of `options.interleave_calls`); prints its
// table row and returns it.
util::Expected<exec::Evaluation> evaluate_once(bench::BenchEvaluator& bench,
                                               const suite::Problem& problem,
                                               const std::string& source, int repeat,
                                               const exec::EvalOptions& options) {
  PTXBENCH_TRY_ASSIGN(auto ev, bench.evaluator->evaluate(source, problem, options));
  if (ev.status != trace::EvaluationStatus::passed || !ev.timing) {
    fmt::print("| {} | {} | {} | {} | | | | | | | |\n", problem.name(), repeat,
               trace::to_string(ev.status), ev.message);
    return ev;
  }
  const exec::TimingReport& t = *ev.timing;
  std::vector<double> ratios;
  for (std::size_t i = 0; i < t.candidate_trial_ms.size() && i < t.reference_trial_ms.size(); ++i)
    ratios.push_back(t.reference_trial_ms[i] / t.candidate_trial_ms[i]);
  double timing_ms = 0.0, counts_ms = 0.0;
  for (const util::Phase& phase : ev.phases) {
    const double ms = static_cast<double>(phase.elapsed.count()) / 1000.0;
    if (phase.name == "timing")
      timing_ms = ms;
    else if (phase.name == "counts")
      counts_ms = ms;
  }
  fmt::print("| {} | {} | PASSED ({}{}) | {} | {} | {:.4f} | {:.4f} | **{:.4f}** | {} | {:.0f} | "
             "{:.0f} |\n",
             problem.name(), repeat, t.mode, t.reference_cached ? ", reference cached" : "",
             number_list(t.reference_trial_ms), number_list(t.candidate_trial_ms), t.reference_ms,
             t.candidate_ms, t.reference_ms / t.candidate_ms, number_list(ratios), timing_ms,
             counts_ms);
  for (const std::string& retimed : t.retimed_pairs)
    fmt::print("|  | {} | re-timed {} | | | | | | | | |\n", repeat, retimed);
  // What staging every call's inputs and checking ~60 % of them cost, and the wall time per
  // timed call beyond its reported latency on each side (issue 29 items 1, 2 and 4).
  fmt::print("|  | {} | checked {} of {} timed calls; staging {:.1f} ms, checks {:.1f} ms; "
             "overhead per call: candidate {:.4f} ms, reference {:.4f} ms, calibrated {:.4f} ms, "
             "unexplained {:.4f} ms | | | | | | | | |\n",
             repeat, t.checked_calls, t.timed_calls, t.staging_ms, t.checks_ms,
             t.candidate_overhead_ms.value_or(-1.0), t.reference_overhead_ms.value_or(-1.0),
             t.calibrated_overhead_ms.value_or(-1.0), t.unexplained_ms.value_or(-1.0));
  return ev;
}

// Every repeat of one problem; true when every speedup is within 1.00 ± 0.01.
bool run_problem(bench::BenchEvaluator& bench, const suite::Problem& problem,
                 const std::string& source, int repeats, int gap_ms,
                 const exec::EvalOptions& options) {
  fmt::print("## {}\n\n| problem | repeat | status | reference trial ms | candidate trial ms | "
             "reference ms | candidate ms | speedup | per-trial ratio | timing phase ms | "
             "counts phase ms |\n"
             "|---|---|---|---|---|---|---|---|---|---|---|\n",
             problem.name());
  std::vector<double> speedups;
  std::optional<exec::Evaluation> first;
  for (int repeat = 0; repeat < repeats; ++repeat) {
    if (repeat > 0 && gap_ms > 0)
      std::this_thread::sleep_for(std::chrono::milliseconds(gap_ms));
    auto ev = evaluate_once(bench, problem, source, repeat, options);
    if (!ev)
      throw util::Fatal(ev.error().message);
    const bool timed = ev->status == trace::EvaluationStatus::passed && ev->timing;
    speedups.push_back(timed ? ev->timing->reference_ms / ev->timing->candidate_ms : 0.0);
    if (!first)
      first = std::move(*ev);
  }
  double worst = 0.0;
  for (double s : speedups)
    worst = std::max(worst, std::fabs(s - 1.0));
  fmt::print("\n{}: speedups {}; largest |speedup − 1| = {:.4f} ({})\n\n", problem.name(),
             number_list(speedups), worst, worst <= 0.01 ? "within ± 0.01" : "OUTSIDE ± 0.01");
  // The reference's kernels (and the supervisor's side of the buffer probe) whatever the verdict.
  std::vector<std::string> reference_launches;
  const std::set<std::string> reference =
      reference_kernels(bench, problem, options.gqa_reference, reference_launches);
  if (first->timing) {
    const std::set<std::string> candidate(first->timing->kernels.begin(),
                                          first->timing->kernels.end());
    fmt::print("- candidate kernels (last timed call of repeat 0): {}\n",
               joined(first->timing->kernels, ", "));
    fmt::print("- reference kernels (one call in the supervisor): {}\n",
               joined({reference.begin(), reference.end()}, ", "));
    fmt::print("- same kernels: {}\n", candidate == reference ? "yes" : "NO");
    // The same name can run another grid, block, cluster or shared-memory split. Compared as
    // sets: the child lists its kernels in launch order, CUPTI's records here come as they end.
    const std::set<std::string> candidate_launches(first->timing->kernel_launches.begin(),
                                                   first->timing->kernel_launches.end());
    const std::set<std::string> reference_set(reference_launches.begin(), reference_launches.end());
    fmt::print("- candidate launches: {}\n- reference launches: {}\n- same launches: {}\n",
               joined(first->timing->kernel_launches, "; "), joined(reference_launches, "; "),
               candidate_launches == reference_set ? "yes" : "NO");
  }
  fmt::print("- baseline: {}; violations (repeat 0): {}\n- clocks (repeat 0): {}\n", first->library,
             joined(first->violations, "; "), first->clocks.dump());
  if (first->status != trace::EvaluationStatus::passed)
    fmt::print("\n```\n{}\n```\n", first->child_log);
  else // the hook's own lines (which baseline; the buffer probe's answer)
    for (const std::string& line : util::split_lines(first->child_log))
      if (line.starts_with("aa hook:"))
        fmt::print("- {}\n", line);
  fmt::print("\n");
  return worst <= 0.01;
}

} // namespace

int main(int argc, char** argv) {
  try {
    const Arguments args = parse(argc, argv);
    hand_autotune_records_to_children(args.problems);
    bench::BenchEvaluator bench(args.candidate, args.evaluator);
    cudaDeviceProp props{};
    cudaGetDeviceProperties(&props, 0);
    const bool cached = args.options.reference_timing == exec::ReferenceTiming::cached;
    fmt::print(
        "# A/A: the library baseline evaluated as a candidate\n\nGPU {}, candidate binary "
        "{}, {} timing, reference and candidate handing over every {} timed calls, "
        "reference {}, {} ms idle between repeats, counting pass {}, counter session "
        "opened ahead {}, {} children prepared {}, GQA baseline {}, call slot shared by {}\n\n",
        props.name, args.candidate, measure::to_string(args.options.timing_mode),
        args.options.interleave_calls,
        cached ? "cached (timed in the first repeat, reused after)" : "interleaved", args.gap_ms,
        args.options.dynamic_counts ? "on" : "off",
        args.evaluator.counter_session == exec::CounterSessionAhead::beside_timing ? "beside timing"
                                                                                   : "when idle",
        args.evaluator.children == exec::ChildStart::spare ? "spare" : "on-demand",
        args.evaluator.spare_prepare == exec::SparePrepare::after_timing ? "after timing"
                                                                         : "beside the evaluation",
        args.gqa == reference::GqaBaseline::cudnn ? "cuDNN" : "FlashInfer",
        protocol::to_string(protocol::preferred_sharing().value()));
    bool all_ok = true;
    for (const std::string& name : args.problems) {
      auto problem = bench.suite->find(name);
      if (!problem)
        throw util::Fatal(problem.error().message);
      auto source = util::read_file(args.kernels + "/" + name + ".cu");
      if (!source)
        throw util::Fatal(source.error().message);
      if (args.gqa == reference::GqaBaseline::cudnn)
        if (const std::string quoted = '"' + name + '"'; source->find(quoted) != std::string::npos)
          source->replace(source->find(quoted), quoted.size(), '"' + name + "@cudnn\"");
      all_ok =
          run_problem(bench, **problem, *source, args.repeats, args.gap_ms, args.options) && all_ok;
    }
    fmt::print("A/A result: {}\n", all_ok ? "every speedup within 1.00 ± 0.01" : "FAILED");
    return all_ok ? 0 : 1;
  } catch (const std::exception& e) {
    fmt::print(stderr, "aa_speedup: {}\n", e.what());
    return 2;
  }
}
