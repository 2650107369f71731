#include "exec/evaluator.hpp"

#include "cuda/check.hpp"
#include "cuda/device.hpp"
#include "exec/dynamic_report.hpp"
#include "exec/gpu_evaluation.hpp"
#include "util/hash.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <cuda_runtime.h>
#include <fmt/format.h>
#include <future>
#include <random>
#include <sys/prctl.h>
#include <unistd.h>

#ifndef PTXBENCH_CANDIDATE_BUILD_PATH
#define PTXBENCH_CANDIDATE_BUILD_PATH ""
#endif
#ifndef PTXBENCH_VERSION
#define PTXBENCH_VERSION "unknown"
#endif

namespace ptxbench::exec {
namespace {

using Status = trace::EvaluationStatus;

std::string now_iso() {
  const auto now = std::chrono::system_clock::now();
  const std::time_t seconds = std::chrono::system_clock::to_time_t(now);
  std::tm local{};
  localtime_r(&seconds, &local);
  const auto micros =
      std::chrono::duration_cast<std::chrono::microseconds>(now.time_since_epoch()).count() %
      1'000'000;
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &local);
  return fmt::format("{}.{:06}", text, micros);
}

std::string version_text(int version) {
  return fmt::format("{}.{}", version / 1000, (version % 1000) / 10);
}

// The name of CUDA device `device`, or why it cannot run the GPU part for `arch`.
util::Expected<std::string> usable_gpu(compile::Arch arch, int device) {
  PTXBENCH_TRY(cuda::require_device());
  cudaDeviceProp props{};
  if (cudaGetDeviceProperties(&props, device) != cudaSuccess)
    return util::make_error(util::ErrorKind::unsupported,
                            fmt::format("cannot query CUDA device {}", device));
  const int needed = arch == compile::Arch::sm_90a ? 90 : 100;
  if (props.major * 10 + props.minor != needed)
    return util::make_error(util::ErrorKind::unsupported,
                            fmt::format("{} is sm_{}{}; {} code runs only on sm_{}", props.name,
                                        props.major, props.minor, compile::to_string(arch),
                                        needed));
  return std::string(props.name);
}

// A broken launch rule (launch_rules.hpp) decides the status of a call that otherwise passed,
// only got its numbers wrong (inconsistent work only one that passed) or took wall time its
// latencies do not explain (foreign work does); otherwise it is
// recorded beside the status as a violation. `broken_rule` is set only when it decided.
void apply_launch_rules(Evaluation& ev, LaunchRules mode) {
  const sass::ArchReport* arch =
      ev.check.sass ? sass::find_arch(*ev.check.sass, compile::to_string(ev.check.arch)) : nullptr;
  ev.foreign_kernels = foreign_kernels(ev.launches, arch);
  ev.broken_rule = judge_launches(ev.launches, arch);
  if (!ev.broken_rule)
    return;
  const auto found = [&](std::string_view violation) {
    return std::find(ev.violations.begin(), ev.violations.end(), violation) != ev.violations.end();
  };
  // Foreign work also explains a latency its wall time or the GPU's peak contradicts.
  const bool latency_contradicted =
      ev.status == Status::runtime_error &&
      (found(detail::kUnexplainedWallTime) || found(detail::kFasterThanThePeak));
  const bool decides =
      mode == LaunchRules::enforce && (ev.status == Status::passed || latency_contradicted ||
                                       (ev.status == Status::incorrect_numerical &&
                                        ev.broken_rule->rule != Rule::inconsistent_work));
  if (!decides) { // the status stands; the rule is one more thing found
    ev.violations.push_back(std::string(to_string(ev.broken_rule->rule)) + ": " +
                            ev.broken_rule->message);
    ev.broken_rule.reset();
    return;
  }
  std::string message = ev.broken_rule->message;
  if (ev.status != Status::passed)
    message += " — besides: " + ev.message;
  ev.status = Status::runtime_error;
  ev.message = std::move(message);
}

void fill_libs(Evaluation& ev) {
  int runtime = 0, driver = 0;
  cudaRuntimeGetVersion(&runtime);
  cudaDriverGetVersion(&driver);
  ev.libs = {{"cuda", version_text(runtime)},
             {"driver", driver > 0 ? version_text(driver) : "none"},
             {"nvcc", version_text(CUDART_VERSION)},
             {"ptxbench", PTXBENCH_VERSION}};
  if (!ev.library.empty())
    ev.libs.emplace_back("baseline", ev.library);
}

void verdict_from_check(Evaluation& ev) {
  if (ev.check.outcome == CheckOutcome::banned_library) {
    ev.status = Status::compile_error;
    ev.message = ev.check.banned_message();
    if (ev.check.banned)
      ev.message +=
          fmt::format(" (source line {}: {})", ev.check.banned->line, ev.check.banned->excerpt);
  } else if (ev.check.outcome == CheckOutcome::compile_error) {
    ev.status = Status::compile_error;
    ev.message = ev.check.build         ? ev.check.build->diagnostic
                 : ev.check.triton_gate ? "rejected by the Triton gate:\n" +
                                              compile::render_text(*ev.check.triton_gate)
                                        : "compile error";
  }
}

frontend::ChildPaths child_paths(const std::filesystem::path& binary,
                                 const EvaluatorOptions& options) {
  frontend::ChildPaths paths;
  paths.candidate_binary = binary;
  paths.python = options.python;
  paths.python_root = options.python_root.empty() ? python_root_path() : options.python_root;
  paths.child_library =
      options.child_library.empty() ? child_library_path() : options.child_library;
  if (const char* inherited = std::getenv("PYTHONPATH"); inherited != nullptr)
    paths.inherited_pythonpath = inherited;
  return paths;
}

} // namespace

std::filesystem::path candidate_binary_path() {
  if (const char* env = std::getenv("PTXBENCH_CANDIDATE"); env != nullptr && *env != '\0')
    return env;
  std::error_code error;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", error);
  if (!error && std::filesystem::exists(self.parent_path() / "ptxbench-candidate"))
    return self.parent_path() / "ptxbench-candidate";
  return PTXBENCH_CANDIDATE_BUILD_PATH;
}

Evaluator::Evaluator(const Checker& checker, const suite::Suite& suite,
                     const std::filesystem::path& candidate_binary,
                     std::filesystem::path reference_cache,
                     const EvaluatorOptions& evaluator_options)
    : m_checker(checker), m_suite(suite),
      m_candidate_binary(candidate_binary.empty() ? candidate_binary_path() : candidate_binary),
      m_reference_cache(std::move(reference_cache)),
      m_counts_cache(evaluator_options.counts_folder.value_or(CountsCache::default_folder())),
      m_child_paths(child_paths(m_candidate_binary, evaluator_options)),
      m_warm(std::make_unique<detail::WarmState>(
          m_candidate_binary, evaluator_options.device, evaluator_options.warm_bytes,
          evaluator_options.children, evaluator_options.counter_session,
          evaluator_options.spare_prepare)) {
  // This process holds the evaluations' secret seeds and check patterns: not dumpable, so a
  // candidate child (which drops CAP_SYS_PTRACE, child/system_call_filter.hpp) cannot open its
  // /proc memory, though it may open other files read-only.
  (void)prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
}

Evaluator::~Evaluator() = default;

std::size_t Evaluator::warm_bytes() const {
  return m_warm->inputs.idle_cost();
}

int Evaluator::spare_processes() const {
  return m_warm->spares.count();
}

void Evaluator::settle() {
  m_warm->spares.settle();
}

void Evaluator::allow_counter_sessions_ahead(bool allowed) {
  m_warm->spares.allow_sessions_ahead(allowed);
}

// The GPU part. No behaviour of a candidate may raise past here: what the supervisor's own code
// throws (a CUDA error in its context, a reply it could not read) becomes an error that names
// the phase, so a run records an infra turn and goes on.
util::Status Evaluator::gpu_phases(Evaluation& ev, const frontend::Frontend& language,
                                   const frontend::Candidate& candidate, const std::string& source,
                                   const suite::Problem& problem, const EvalOptions& options,
                                   util::PhaseLog& phases) {
  try {
    PTXBENCH_CUDA_CHECK(cudaSetDevice(m_warm->device)); // the calling thread's, for its phases
    detail::GpuEvaluation run(ev, m_suite, problem, options, m_reference_cache, m_counts_cache,
                              *m_warm, phases, m_tool_runner);
    PTXBENCH_TRY_ASSIGN(auto binding, candidate.binding());
    const detail::CandidateRun candidate_run{&candidate,
                                             ChildLaunch{m_child_paths, &candidate},
                                             !language.uses_candidate_binary(),
                                             std::move(binding),
                                             &m_checker.disassembler(),
                                             util::sha256_hex(source)};
    // The identities of kernel.so's cubins, read beside the GPU phases (launch_rules.hpp); a
    // candidate compiled in its warm-up has its cubins read after it (gpu_warm_up.cpp).
    std::future<util::Expected<std::vector<std::string>>> cubins;
    if (!candidate.warm_up_cubins())
      cubins = std::async(std::launch::async, [&] {
        return m_checker.disassembler().cubin_hashes(candidate.library());
      });
    PTXBENCH_TRY(run.run(candidate_run));
    if (cubins.valid()) {
      auto hashes = cubins.get();
      if (hashes)
        ev.launches.own_cubins = std::move(*hashes);
      else
        ev.violations.push_back("the identities of kernel.so's cubins are unknown: " +
                                hashes.error().message);
    }
    phases.time("verdicts", [&] {
      derive_dynamic(ev, problem);
      mark_undefined_behaviour(ev);
      apply_launch_rules(ev, options.launch_rules);
    });
    return util::Ok{};
  } catch (const std::exception& error) {
    const std::string phase = phases.phases().empty() ? "start" : phases.phases().back().name;
    return util::make_error(
        util::ErrorKind::subprocess,
        fmt::format("the evaluator failed in phase '{}': {}", phase, error.what()));
  }
}

util::Expected<Evaluation> Evaluator::evaluate(const std::string& source,
                                               const suite::Problem& problem,
                                               const EvalOptions& options) {
  util::PhaseLog phases;
  Evaluation ev;
  ev.problem = problem.name();
  ev.solution_name = solution_name(source, problem, options.language);
  ev.timestamp = now_iso();
  ev.sets = options.sets;
  const frontend::Frontend& language = frontend::of(options.language);
  PTXBENCH_TRY_ASSIGN(auto checked, phases.time("check", [&] {
    return language.check(
        m_checker.tools(m_tool_runner, m_child_paths.python, m_child_paths.python_root), source,
        problem, options.arch);
  }));
  ev.check = std::move(checked.report);
  verdict_from_check(ev);
  if (ev.check.outcome == CheckOutcome::ok) {
    auto gpu = phases.time("gpu", [&] { return usable_gpu(options.arch, m_warm->device); });
    if (!gpu) {
      std::string tools;
      if (options.sanitize != Sanitize::off)
        tools += ", the memory check";
      if (options.audit != Audit::none)
        tools += ", the ncu audit";
      if (options.debug != Debug::off)
        tools += ", the debugger pass";
      ev.needs_gpu = fmt::format("correctness, timing{} and dynamic instruction counts need a "
                                 "GPU: {}",
                                 tools, gpu.error().message);
    } else {
      ev.gpu_ran = true;
      ev.gpu = *gpu;
      ev.seed = options.seed
                    ? *options.seed
                    : (std::uint64_t{std::random_device{}()} << 32) ^ std::random_device{}();
      if (!checked.candidate)
        throw util::Fatal("the " + std::string(language.name()) +
                          " check passed a candidate without making it");
      PTXBENCH_TRY(gpu_phases(ev, language, *checked.candidate, source, problem, options, phases));
    }
  }
  fill_libs(ev);
  ev.phases = phases.phases();
  return ev;
}

} // namespace ptxbench::exec
