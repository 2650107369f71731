#include "exec/evaluator.hpp"

#include "exec/gpu_evaluation.hpp"

#include <cuda_runtime.h>
#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <random>

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
  const auto micros = std::chrono::duration_cast<std::chrono::microseconds>(
                          now.time_since_epoch()).count() % 1'000'000;
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &local);
  return fmt::format("{}.{:06}", text, micros);
}

std::string version_text(int version) {
  return fmt::format("{}.{}", version / 1000, (version % 1000) / 10);
}

// The device name, or why this machine cannot run the GPU part for `arch`.
util::Expected<std::string> usable_gpu(compile::Arch arch) {
  int count = 0;
  if (const cudaError_t status = cudaGetDeviceCount(&count); status != cudaSuccess || count == 0)
    return util::make_error(util::ErrorKind::unsupported,
                            fmt::format("no CUDA device here ({})",
                                        status != cudaSuccess ? cudaGetErrorString(status) : "none"));
  cudaDeviceProp props{};
  if (cudaGetDeviceProperties(&props, 0) != cudaSuccess)
    return util::make_error(util::ErrorKind::unsupported, "cannot query CUDA device 0");
  const int needed = arch == compile::Arch::sm_90a ? 90 : 100;
  if (props.major * 10 + props.minor != needed)
    return util::make_error(util::ErrorKind::unsupported,
                            fmt::format("{} is sm_{}{}; {} code runs only on sm_{}", props.name,
                                        props.major, props.minor, compile::to_string(arch), needed));
  return std::string(props.name);
}

DynamicState state_of(std::size_t static_count, double executed) {
  if (executed > 0) return DynamicState::present;
  return static_count == 0 ? DynamicState::absent : DynamicState::not_executed;
}

double executed_of(sass::Family family, const trace::Json& raw) {
  auto value = [&](const char* key) { return raw.value(key, 0.0); };
  if (family == sass::Family::gmma) return value("gmma");
  if (family == sass::Family::tma) return value("tma_load") + value("tma_store") + value("tma_reduce");
  return -1.0; // no counter for this family
}

void derive_dynamic(Evaluation& ev, const suite::Problem& problem) {
  if (!ev.dynamic || !ev.check.sass) return;
  DynamicReport& dyn = *ev.dynamic;
  const sass::ArchReport* arch = sass::find_arch(*ev.check.sass, compile::to_string(ev.check.arch));
  const bool available = dyn.raw && dyn.raw->value("available", false);
  if (!available && dyn.reason.empty())
    dyn.reason = dyn.raw ? dyn.raw->value("reason", std::string("no counts")) : "no counts";
  bool any_present = false, any_unknown = false;
  for (sass::Family family : sass::target_families_for(compile::to_string(ev.check.arch))) {
    FamilyDynamic f{family, arch ? arch->totals[sass::index_of(family)] : 0, 0.0, DynamicState::unknown};
    const double executed = available ? executed_of(family, *dyn.raw) : -1.0;
    if (executed >= 0) {
      f.executed = executed;
      f.state = state_of(f.static_count, executed);
    }
    any_present = any_present || f.state == DynamicState::present;
    any_unknown = any_unknown || f.state == DynamicState::unknown;
    dyn.families.push_back(f);
  }
  const bool all_absent = std::all_of(dyn.families.begin(), dyn.families.end(),
                                      [](const FamilyDynamic& f) { return f.state == DynamicState::absent; });
  dyn.verdict = any_present ? DynamicState::present
                : any_unknown ? DynamicState::unknown
                : all_absent  ? DynamicState::absent
                              : DynamicState::not_executed;
  if (available) {
    dyn.tensor_flops = dyn.raw->value("hgmma_bf16_flops", 0.0);
    dyn.coverage = problem.flops > 0 ? dyn.tensor_flops / static_cast<double>(problem.flops) : 0.0;
  }
}

void find_foreign_kernels(Evaluation& ev) {
  if (!ev.timing || !ev.check.sass) return;
  const sass::ArchReport* arch = sass::find_arch(*ev.check.sass, compile::to_string(ev.check.arch));
  for (const std::string& kernel : ev.timing->kernels) {
    bool own = false;
    for (const auto& f : arch ? arch->functions : std::vector<sass::FunctionReport>{})
      own = own || f.mangled_name == kernel || f.demangled_name == kernel;
    if (!own) ev.foreign_kernels.push_back(kernel);
  }
  if (!ev.foreign_kernels.empty())
    ev.violations.push_back(fmt::format("{} kernel(s) launched that are not in the candidate's "
                                         "kernel.so", ev.foreign_kernels.size()));
}

void fill_libs(Evaluation& ev) {
  int runtime = 0, driver = 0;
  cudaRuntimeGetVersion(&runtime);
  cudaDriverGetVersion(&driver);
  ev.libs = {{"cuda", version_text(runtime)},
             {"driver", driver > 0 ? version_text(driver) : "none"},
             {"nvcc", version_text(CUDART_VERSION)},
             {"ptxbench", PTXBENCH_VERSION}};
  if (!ev.library.empty()) ev.libs.emplace_back("baseline", ev.library);
}

void verdict_from_check(Evaluation& ev) {
  if (ev.check.outcome == CheckOutcome::banned_library) {
    ev.status = Status::compile_error;
    ev.message = ev.check.banned->message();
  } else if (ev.check.outcome == CheckOutcome::compile_error) {
    ev.status = Status::compile_error;
    ev.message = ev.check.build ? ev.check.build->diagnostic : "compile error";
  }
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
                     std::filesystem::path candidate_binary, std::filesystem::path reference_cache,
                     EvaluatorOptions evaluator_options)
    : m_checker(checker), m_suite(suite),
      m_candidate_binary(candidate_binary.empty() ? candidate_binary_path() : candidate_binary),
      m_reference_cache(std::move(reference_cache)),
      m_warm(std::make_unique<detail::WarmState>(m_candidate_binary, evaluator_options.warm_bytes,
                                                 evaluator_options.children)) {}

Evaluator::~Evaluator() = default;

std::size_t Evaluator::warm_bytes() const { return m_warm->inputs.idle_cost(); }

int Evaluator::spare_processes() const { return m_warm->spares.count(); }

void Evaluator::settle() { m_warm->spares.settle(); }

util::Expected<Evaluation> Evaluator::evaluate(const std::string& source,
                                               const suite::Problem& problem,
                                               const EvalOptions& options) {
  util::PhaseLog phases;
  Evaluation ev;
  ev.problem = problem.name();
  ev.solution_name = solution_name(source, problem);
  ev.timestamp = now_iso();
  ev.sets = options.sets;
  auto report = phases.time("check", [&] { return m_checker.check(source, problem, options.arch); });
  if (!report) return report.take_error();
  ev.check = std::move(*report);
  verdict_from_check(ev);
  if (ev.check.outcome == CheckOutcome::ok) {
    auto gpu = phases.time("gpu", [&] { return usable_gpu(options.arch); });
    if (!gpu) {
      const bool tools = options.sanitize != Sanitize::off || options.audit != Audit::none;
      ev.needs_gpu = fmt::format("correctness, timing{} and dynamic instruction counts need a "
                                 "GPU: {}",
                                 tools ? ", the sanitizer and ncu audit passes" : "",
                                 gpu.error().message);
    } else {
      ev.gpu_ran = true;
      ev.gpu = *gpu;
      ev.seed = options.seed ? *options.seed
                             : (std::uint64_t{std::random_device{}()} << 32) ^ std::random_device{}();
      detail::GpuEvaluation run(ev, m_suite, problem, options, m_reference_cache, *m_warm,
                                phases, m_tool_runner);
      if (auto status = run.run(m_candidate_binary, ev.check.build->library); !status)
        return status.take_error();
      derive_dynamic(ev, problem);
      find_foreign_kernels(ev);
    }
  }
  fill_libs(ev);
  ev.phases = phases.phases();
  return ev;
}

} // namespace ptxbench::exec
