#include "cli/commands.hpp"
#include "cli/tools.hpp"
#include "exec/evaluator.hpp"
#include "frontend/frontend.hpp"
#include "trace/json_io.hpp"
#include "util/fs.hpp"
#include "util/terminal.hpp"

#include <cstdint>
#include <fmt/core.h>
#include <memory>
#include <optional>

namespace ptxbench::cli {
namespace {

struct EvalCliOptions {
  std::string kernel;
  std::string problem;
  std::string arch = "sm_90a";
  std::string trace_out;
  std::string language; // empty: from the file name (.py is Triton)
  std::string python = "python3";
  bool json = false;
  bool cached_reference = false;
  bool sanitize = false;
  bool debug = false;
  std::string audit;
  std::string reference = "flashinfer";
  std::string counts_cache = "off";
  std::optional<std::uint64_t> seed;
  int sets = 3;
  int trials = 3;
  int warmup = 10;
  int iterations = 50;
  double timeout_s = 60.0;
};

util::Expected<exec::EvalOptions> eval_options(const EvalCliOptions& o) {
  auto arch = compile::parse_arch(o.arch);
  if (!arch)
    return util::make_error(util::ErrorKind::invalid_input,
                            "unknown arch '" + o.arch + "' (sm_90a, sm_100a)");
  if (o.sets < 1 || o.trials < 1 || o.warmup < 0 || o.iterations < 1 || o.timeout_s <= 0)
    return util::make_error(
        util::ErrorKind::invalid_input,
        "--sets, --trials and --iters must be ≥ 1, --warmup ≥ 0, --timeout-s > 0");
  if (o.reference != "flashinfer" && o.reference != "cudnn")
    return util::make_error(util::ErrorKind::invalid_input,
                            "unknown --reference '" + o.reference + "' (flashinfer, cudnn)");
  if (o.counts_cache != "on" && o.counts_cache != "off")
    return util::make_error(util::ErrorKind::invalid_input,
                            "unknown --counts-cache '" + o.counts_cache + "' (on, off)");
  if (!o.audit.empty() && o.audit != "ncu")
    return util::make_error(util::ErrorKind::invalid_input,
                            "unknown --audit '" + o.audit + "' (the one audit is `ncu`)");
  PTXBENCH_TRY_ASSIGN(auto parsed_language, frontend::language_for(o.language, o.kernel));
  exec::EvalOptions options;
  options.arch = *arch;
  options.language = parsed_language;
  options.sanitize = o.sanitize ? exec::Sanitize::memcheck : exec::Sanitize::off;
  options.audit = o.audit == "ncu" ? exec::Audit::ncu : exec::Audit::none;
  options.debug = o.debug ? exec::Debug::cuda_gdb : exec::Debug::off;
  options.sets = o.sets;
  options.trials = o.trials;
  options.warmup = o.warmup;
  options.iterations = o.iterations;
  options.timeout = std::chrono::milliseconds(static_cast<long long>(o.timeout_s * 1000));
  options.reference_timing =
      o.cached_reference ? exec::ReferenceTiming::cached : exec::ReferenceTiming::interleave;
  options.gqa_reference =
      o.reference == "cudnn" ? reference::GqaBaseline::cudnn : reference::GqaBaseline::flashinfer;
  options.seed = o.seed;
  options.counts_cache =
      o.counts_cache == "on" ? exec::CountsCacheUse::on : exec::CountsCacheUse::off;
  return options;
}

ExitCode exit_code(const exec::Evaluation& ev) {
  if (ev.status != trace::EvaluationStatus::passed)
    return ExitCode::failure;
  return ev.gpu_ran ? ExitCode::ok : ExitCode::needs_gpu;
}

ExitCode run_eval(const EvalCliOptions& o) {
  auto options = eval_options(o);
  if (!options)
    return report_error("eval", options.error());
  auto source = read_candidate(o.kernel);
  if (!source)
    return report_error("eval", source.error());
  Toolchain tools;
  auto problem = tools.problem(o.problem);
  if (!problem)
    return report_error("eval", problem.error());
  auto checker = tools.checker();
  if (!checker)
    return report_error("eval", checker.error());
  // One evaluation per process: a spare candidate child would never be used.
  exec::EvaluatorOptions evaluator_options;
  evaluator_options.children = exec::ChildStart::on_demand;
  evaluator_options.python = o.python;
  exec::Evaluator evaluator(**checker, **tools.suite(), {},
                            exec::ReferenceLatencyCache::default_file(), evaluator_options);
  auto ev = evaluator.evaluate(*source, **problem, *options);
  if (!ev)
    return report_error("eval", ev.error());
  if (!o.trace_out.empty())
    if (auto written = trace::append_trace(o.trace_out, exec::to_trace(*ev, **problem)); !written)
      return report_error("eval", written.error());
  // A candidate's log may hold any bytes: invalid UTF-8 is printed as U+FFFD, never thrown on,
  // and control characters (terminal escapes) in text as visible escapes.
  if (o.json)
    fmt::print(
        "{}\n",
        exec::to_json(*ev, **problem).dump(2, ' ', false, trace::Json::error_handler_t::replace));
  else
    fmt::print("{}", util::printable(exec::render_text(*ev)));
  return exit_code(*ev);
}

} // namespace

Action setup_eval(CLI::App& sub) {
  auto o = std::make_shared<EvalCliOptions>();
  sub.add_option("kernel", o->kernel, "the candidate: kernel.cu, or kernel.py (Triton)")
      ->required();
  sub.add_option("--problem", o->problem, "problem name (see `ptxbench problems`)")->required();
  sub.add_option("--arch", o->arch, "sm_90a or sm_100a")->capture_default_str();
  sub.add_option("--language", o->language,
                 "cuda or triton (default: triton for a .py file, else cuda)");
  sub.add_option("--python", o->python,
                 "the Python that has torch and Triton, for a Triton candidate's child")
      ->capture_default_str();
  sub.add_flag("--json", o->json, "print JSON instead of text");
  sub.add_option("--trace-out", o->trace_out,
                 "append the FlashInfer-Trace line to this JSONL file");
  sub.add_option("--sets", o->sets, "seeded input sets")->capture_default_str();
  sub.add_option("--trials", o->trials, "timing trials (interleaved with the reference)")
      ->capture_default_str();
  sub.add_option("--warmup", o->warmup, "warm-up calls per trial")->capture_default_str();
  sub.add_option("--iters", o->iterations, "timed calls per trial")->capture_default_str();
  sub.add_option("--timeout-s", o->timeout_s, "deadline of each request to the candidate process")
      ->capture_default_str();
  sub.add_flag("--cached-reference", o->cached_reference,
               "reuse a cached reference latency for this problem and GPU instead of timing "
               "it: faster, and on power-capped kernels a few per cent less accurate");
  sub.add_option("--reference", o->reference,
                 "the GQA problems' baseline: `flashinfer` (the paper's, FlashInfer 0.6.14) or "
                 "`cudnn` (cuDNN SDPA); other problems have one")
      ->capture_default_str();
  sub.add_option("--seed", o->seed,
                 "the inputs' seed (default: a secret one drawn for this evaluation); the same "
                 "seed gives the same correctness input sets")
      ->check(CLI::NonNegativeNumber); // CLI11 would wrap -3 into 2^64-3
  sub.add_option("--counts-cache", o->counts_cache,
                 "`on`: reuse the instruction counts of an earlier evaluation of the same source, "
                 "kernel.so, seed and GPU instead of counting (needs --seed; "
                 "docs/evaluation.md \"Counts cache\")")
      ->capture_default_str();
  sub.add_flag("--sanitize", o->sanitize,
               "also run one call under compute-sanitizer memcheck; an error is RUNTIME_ERROR "
               "with its kernel and source line");
  sub.add_flag("--debug", o->debug,
               "also run one call under cuda-gdb (batch mode): the faulting kernel, block, "
               "thread and source line of a crash, as evidence; CUDA candidates only");
  sub.add_option("--audit", o->audit,
                 "`ncu`: reproduce the paper's Nsight Compute source-counter audit of the "
                 "target-instruction counts (the architecture's counter table: GMMA/TMA, "
                 "TCGEN05) and compare it with the in-process counts; CUDA and Triton");
  return [o] { return run_eval(*o); };
}

} // namespace ptxbench::cli
