#include "cli/run_job.hpp"

#include "agent/executor.hpp"
#include "agent/prompt.hpp"
#include "agent/remote_executor.hpp"
#include "agent/runner.hpp"
#include "cli/tools.hpp"
#include "cuda/device.hpp"
#include "exec/evaluator.hpp"
#include "measure/live_device.hpp"
#include "model/http_transport.hpp"
#include "pack/compose.hpp"
#include "pack/manifest.hpp"
#include "report/export.hpp"
#include "store/enums.hpp"
#include "util/strings.hpp"
#include "util/terminal.hpp"

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <ctime>
#include <fmt/core.h>
#include <set>
#include <tuple>
#include <unistd.h>

namespace ptxbench::cli {
namespace {

std::atomic<bool> g_cancel{false};
std::atomic<int> g_stop_signal{0}; // the signal that set g_cancel
static_assert(std::atomic<int>::is_always_lock_free);

extern "C" void on_stop_signal(int signal) {
  if (g_cancel.load()) {
    std::signal(signal, SIG_DFL);
    std::raise(signal);
    return;
  }
  g_stop_signal.store(signal);
  g_cancel.store(true);
}

util::Expected<std::unique_ptr<store::RunStore>> open_store(const RunJob& job) {
  if (job.mode == RunMode::resume)
    return store::RunStore::open_existing(job.dir);
  if (std::filesystem::exists(job.dir / store::RunStore::kDatabaseName))
    return util::make_error(util::ErrorKind::invalid_input,
                            job.dir.string() +
                                " already holds a run; continue it with "
                                "`ptxbench run --resume " +
                                job.dir.string() + "`");
  return store::RunStore::open(
      job.dir, store::RunInfo{agent::plan_to_json(job.plan).dump(), PTXBENCH_VERSION, ""});
}

// The plan a resumed run continues: the one stored when it started (jobs may change).
util::Expected<agent::RunPlan> stored_plan(const store::RunStore& store, const RunJob& job) {
  auto plan = agent::parse_plan(store.info().config_json, store.path());
  if (!plan)
    return plan.take_error();
  plan->jobs = job.plan.jobs;
  if (!job.plan.eval.service.empty())
    plan->eval.service = job.plan.eval.service;
  return plan;
}

bool every_trajectory_overflowed(const agent::RunSummary& summary) {
  return !summary.trajectories.empty() &&
         std::ranges::all_of(summary.trajectories, [](const agent::TrajectoryOutcome& t) {
           return t.result && t.result->exit == store::ExitReason::context_overflow;
         });
}

// 128 + the signal after a Ctrl-C (130) or SIGTERM (143), as shells report a signalled job;
// 1 when a trajectory failed or stayed unfinished, or when every one ran out of context (the
// run measured nothing).
ExitCode exit_code(const agent::RunSummary& summary, const StopSignals& signals) {
  if (signals.received() != 0)
    return static_cast<ExitCode>(128 + signals.received());
  for (const auto& t : summary.trajectories)
    if (t.error)
      return ExitCode::failure;
  if (every_trajectory_overflowed(summary)) {
    fmt::print(stderr, "every trajectory ended context_overflow: the prompt and replies do not "
                       "fit the model's context (a smaller --variant, --context latest-pair, or a "
                       "model with a longer context)\n");
    return ExitCode::failure;
  }
  return summary.unfinished() == 0 ? ExitCode::ok : ExitCode::failure;
}

void print_exports(const report::ExportedFiles& files, const std::filesystem::path& dir) {
  fmt::print("Exports: {} trajectories in {}, traces {}, per-turn CSV {}\n",
             files.trajectories.size(), (dir / "exports" / "trajectories").string(),
             files.traces.string(), files.turns_csv.string());
}

// Each finished turn: index, category and the first lines of the feedback the model got.
util::Status print_turns(store::RunStore& store) {
  auto trajectories = store.trajectories();
  if (!trajectories)
    return trajectories.take_error();
  for (const auto& trajectory : *trajectories) {
    auto turns = store.finished_turns(trajectory.id);
    if (!turns)
      return turns.take_error();
    fmt::print("\n{} / {} / {} / #{}\n", trajectory.key.model, trajectory.key.problem,
               trajectory.key.prompt_variant, trajectory.key.sample);
    for (const auto& turn : *turns) {
      fmt::print("  turn {}: {}\n", turn.index + 1,
                 store::enum_name(store::kTurnCategories, turn.category));
      for (const auto& line : util::split_lines(util::head_lines(turn.feedback.value_or(""), 4)))
        if (!util::trim(line).empty())
          fmt::print("    | {}\n", util::printable(line));
    }
  }
  fmt::print("\n");
  return util::Ok{};
}

// The live parameters of GPU 0 when it is the plan's architecture (they go into the prompts).
std::string live_device_text(compile::Arch arch) {
  auto device = measure::read_live_device(0);
  if (!device || device->arch() != compile::to_string(arch))
    return {};
  return measure::render_live_device(*device);
}

// The evaluation service's client settings; the bearer token comes from the environment.
agent::RemoteOptions remote_options(const agent::RunPlan& plan) {
  agent::RemoteOptions options;
  options.urls = plan.eval.service;
  options.eval = agent::eval_options(plan);
  if (const char* token = std::getenv(kServiceTokenEnv); token != nullptr)
    options.token = model::Secret(token);
  return options;
}

// The opening prompts of one trajectory in tokens, estimated (pack::measure: ceil(bytes / 4)).
std::size_t estimated_prompt_tokens(const agent::Prompts& prompts) {
  return pack::measure(prompts.system).approx_tokens + pack::measure(prompts.task).approx_tokens;
}

// Before a run: a warning for every model × problem × variant whose opening prompts and output
// budget do not fit the context the registry gives the model (`context_tokens`). The count is
// an estimate and code tokenizes denser than bytes / 4, so a prompt near the limit may not fit
// either; `ptxbench pack list --tokenizer URL` counts exactly.
void warn_unfitting_prompts(const agent::RunPlan& plan, const RunEnvironment& env,
                            std::string_view command) {
  auto planned = agent::expand(plan, env.suite(), env.manifest());
  if (!planned)
    return;
  std::set<std::tuple<std::string, std::string, std::string>> seen;
  for (const agent::PlannedTrajectory& item : *planned) {
    const model::ModelSpec* spec = env.registry().find(item.key.model);
    if (spec == nullptr || !spec->context_tokens ||
        !seen.insert({item.key.model, item.problem->name(), item.variant}).second)
      continue;
    auto prompts =
        agent::build_prompts(*item.problem, plan.loop.arch, env.manifest(), item.variant);
    if (!prompts)
      continue;
    const auto prompt = static_cast<std::int64_t>(estimated_prompt_tokens(*prompts));
    const std::int64_t output = spec->sampling.max_output_tokens.value_or(0);
    if (prompt + output <= *spec->context_tokens)
      continue;
    fmt::print(stderr,
               "ptxbench {}: warning: {} / {} / {}: the opening prompt is ~{} tokens (estimate: "
               "ceil(bytes / 4); code often counts more){} and does not fit the {} tokens of "
               "context the registry gives {}; the first call may end the trajectory as "
               "context_overflow (a smaller --variant, or none)\n",
               command, item.key.model, item.problem->name(), item.variant, prompt,
               output > 0 ? fmt::format(" + {} max_output_tokens", output) : "",
               *spec->context_tokens, item.key.model);
  }
}

} // namespace

StopSignals::StopSignals() {
  g_cancel.store(false);
  g_stop_signal.store(0);
  m_int = std::signal(SIGINT, on_stop_signal);
  m_term = std::signal(SIGTERM, on_stop_signal);
}

StopSignals::~StopSignals() {
  std::signal(SIGINT, m_int);
  std::signal(SIGTERM, m_term);
}

const std::atomic<bool>* StopSignals::flag() const {
  return &g_cancel;
}

int StopSignals::received() const {
  return g_stop_signal.load();
}

util::Expected<std::unique_ptr<RunEnvironment>>
RunEnvironment::make(const agent::RunPlan& plan, GpuUse gpu, std::string_view command) {
  auto registry =
      model::load_registry(plan.registry.empty() ? model::default_registry_path() : plan.registry);
  if (!registry)
    return registry.take_error();
  auto manifest = pack::Manifest::load(pack::Manifest::default_path());
  if (!manifest)
    return manifest.take_error();
  std::unique_ptr<RunEnvironment> env(
      new RunEnvironment(std::move(*registry), std::move(*manifest)));
  auto suite = env->m_tools.suite();
  if (!suite)
    return suite.take_error();
  env->m_suite = *suite;
  auto checker = env->m_tools.checker();
  if (!checker)
    return checker.take_error();
  if (auto checked = agent::check_plan(plan, **suite, env->m_manifest, env->m_registry); !checked)
    return checked.take_error();
  env->start_executor(plan, gpu, command, **checker);
  return env;
}

void RunEnvironment::start_executor(const agent::RunPlan& plan, GpuUse gpu,
                                    std::string_view command, exec::Checker& checker) {
  m_transport = model::make_curl_transport();
  if (!plan.eval.service.empty() && gpu == GpuUse::when_present) {
    m_executor =
        std::make_unique<agent::RemoteExecutor>(checker, *m_transport, remote_options(plan));
  } else if (gpu == GpuUse::when_present && cuda::device_count() > 0) {
    m_evaluator = std::make_unique<exec::Evaluator>(checker, *m_suite);
    m_executor =
        std::make_unique<agent::GpuExecutor>(checker, *m_evaluator, agent::eval_options(plan));
    m_live_device = live_device_text(plan.loop.arch);
  } else {
    m_executor = std::make_unique<agent::StaticExecutor>(checker);
    fmt::print(stderr,
               "ptxbench {}: {}; every turn stops after the static check (gate, nvcc, "
               "SASS) and is recorded as static_only\n",
               command, gpu == GpuUse::never ? "--static-only" : "no CUDA device here");
  }
}

agent::RunDeps RunEnvironment::deps(bool progress, const std::atomic<bool>* cancel) {
  agent::RunDeps deps;
  deps.executor = m_executor.get();
  deps.suite = m_suite;
  deps.manifest = &m_manifest;
  deps.registry = &m_registry;
  deps.client.transport = m_transport.get();
  deps.live_device = m_live_device;
  deps.progress_out = progress ? stderr : nullptr;
  deps.display = isatty(STDERR_FILENO) != 0 ? agent::Display::redraw : agent::Display::lines;
  deps.cancel = cancel;
  return deps;
}

std::filesystem::path default_run_dir(std::string_view prefix) {
  std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &utc);
  return std::filesystem::path("runs") / fmt::format("{}-{}", prefix, stamp);
}

ExitCode run_job(RunJob job, std::string_view command) {
  std::unique_ptr<store::RunStore> store;
  if (job.mode == RunMode::resume) {
    auto opened = open_store(job);
    if (!opened)
      return report_error(command, opened.error());
    store = std::move(*opened);
    auto plan = stored_plan(*store, job);
    if (!plan)
      return report_error(command, plan.error());
    job.plan = std::move(*plan);
  }
  // A new run's folder is made only for a plan that names what exists (make checks it), so a
  // mistyped model leaves nothing behind that the corrected command would refuse.
  auto environment = RunEnvironment::make(job.plan, job.gpu, command);
  if (!environment)
    return report_error(command, environment.error());
  warn_unfitting_prompts(job.plan, **environment, command);
  if (!store) {
    auto opened = open_store(job);
    if (!opened)
      return report_error(command, opened.error());
    store = std::move(*opened);
  }
  StopSignals signals;
  agent::RunDeps deps = (*environment)->deps(job.progress, signals.flag());
  deps.store = store.get();
  const agent::Executor& executor = (*environment)->executor();
  fmt::print("Run directory: {} ({} on {})\n", job.dir.string(), executor.name(),
             compile::to_string(job.plan.loop.arch));
  std::fflush(stdout);
  auto summary = agent::run_plan(job.plan, deps);
  if (!summary)
    return report_error(command, summary.error());
  if (job.show_turns)
    if (auto status = print_turns(*store); !status)
      return report_error(command, status.error());
  fmt::print("{}", agent::render_summary(*summary));
  auto files = report::export_run(*store, job.dir / "exports");
  if (!files)
    return report_error(command, files.error());
  print_exports(*files, job.dir);
  return exit_code(*summary, signals);
}

} // namespace ptxbench::cli
