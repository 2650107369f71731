#include "cli/run_job.hpp"

#include "adapt/notes_feedback.hpp"
#include "adapt/tokenizer.hpp"
#include "agent/broker_executor.hpp"
#include "agent/executor.hpp"
#include "agent/progress.hpp"
#include "agent/prompt.hpp"
#include "agent/remote_executor.hpp"
#include "agent/runner.hpp"
#include "cli/tools.hpp"
#include "cuda/device.hpp"
#include "exec/evaluator.hpp"
#include "frontend/frontend.hpp"
#include "measure/live_device.hpp"
#include "model/factory.hpp"
#include "model/http_transport.hpp"
#include "pack/compose.hpp"
#include "pack/manifest.hpp"
#include "report/export.hpp"
#include "store/enums.hpp"
#include "util/process.hpp"
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
  static constexpr char kMessage[] =
      "\nptxbench: stop requested; the turns in flight finish first (Ctrl-C again stops at once; "
      "the run stays resumable)\n";
  [[maybe_unused]] ssize_t written = ::write(STDERR_FILENO, kMessage, sizeof kMessage - 1);
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
  PTXBENCH_TRY_ASSIGN(auto plan, agent::parse_plan(store.info().config_json, store.path()));
  plan.jobs = job.plan.jobs;
  if (!job.plan.registry.empty())
    plan.registry = job.plan.registry;
  if (!job.plan.eval.service.empty()) {
    plan.eval.service = job.plan.eval.service;
    plan.eval.broker.clear();
  }
  if (!job.plan.eval.broker.empty()) {
    plan.eval.broker = job.plan.eval.broker;
    plan.eval.service.clear();
  }
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
  if (auto stopped = signals.stopped_code())
    return *stopped;
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
  PTXBENCH_TRY_ASSIGN(auto trajectories, store.trajectories());
  for (const auto& trajectory : trajectories) {
    PTXBENCH_TRY_ASSIGN(auto turns, store.finished_turns(trajectory.id));
    fmt::print("\n{}\n", agent::trajectory_label(trajectory.key));
    for (const auto& turn : turns) {
      const bool cut = turn.reply_end && *turn.reply_end != store::ReplyEnd::complete;
      fmt::print(
          "  turn {}: {}{}{}\n", turn.index + 1,
          store::enum_name(store::kTurnCategories, turn.category),
          cut ? fmt::format(" (reply {})", store::enum_name(store::kReplyEnds, *turn.reply_end))
              : "",
          turn.infra_reason ? " (" + *turn.infra_reason + ")" : "");
      for (const auto& line : util::split_lines(util::head_lines(turn.feedback.value_or(""), 4)))
        if (!util::trim(line).empty())
          fmt::print("    | {}\n", util::printable(line));
    }
  }
  fmt::print("\n");
  return util::Ok{};
}

// The top-level keys whose values differ: "max_output_tokens 100 -> 200".
std::string settings_change(const nlohmann::ordered_json& before,
                            const nlohmann::ordered_json& after) {
  std::string change;
  auto value = [](const nlohmann::ordered_json& json, const std::string& key) {
    return json.contains(key) ? json[key].dump() : std::string("(absent)");
  };
  std::vector<std::string> keys;
  for (const auto& [key, _] : before.items())
    keys.push_back(key);
  for (const auto& [key, _] : after.items())
    if (!before.contains(key))
      keys.push_back(key);
  for (const auto& key : keys)
    if (value(before, key) != value(after, key))
      change += fmt::format("{}{} {} -> {}", change.empty() ? "" : ", ", key, value(before, key),
                            value(after, key));
  return change;
}

// Records each model's resolved settings: at the start of a run, and on resume when none were
// stored or when --override accepts a change; a change without --override refuses the resume.
util::Status settle_model_settings(store::RunStore& store, const model::ModelRegistry& registry,
                                   const RunJob& job, std::string_view command) {
  for (const std::string& name : job.plan.models) {
    const nlohmann::ordered_json current = model::settings_json(*registry.find(name));
    PTXBENCH_TRY_ASSIGN(auto stored, store.model_settings(name));
    std::string reason = job.mode == RunMode::fresh ? "run started" : "";
    if (job.mode == RunMode::resume && !stored)
      reason = "first recorded on resume (the run began before settings were stored)";
    if (job.mode == RunMode::resume && stored) {
      auto before = nlohmann::ordered_json::parse(stored->settings_json, nullptr, false);
      const std::string change = settings_change(before, current);
      if (change.empty())
        continue;
      if (!job.override_settings)
        return util::make_error(
            util::ErrorKind::invalid_input,
            fmt::format("the settings of model \"{}\" changed since they were recorded ({}): {}; "
                        "restore the registry entry, or resume with --override to continue with "
                        "the new settings (recorded in the run)",
                        name, stored->recorded_at, change));
      reason = "override on resume: " + change;
      fmt::print(stderr, "ptxbench {}: model \"{}\": {}\n", command, name, reason);
    }
    PTXBENCH_TRY(store.record_model_settings(name, current.dump(), reason));
  }
  return util::Ok{};
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

// The opening prompts of one trajectory in tokens, and how they were counted: by the model
// server's tokenizer when the registry entry names one and it answers, else estimated
// (pack::measure: ceil(bytes / 4), and code often counts more), saying why.
struct PromptCount {
  std::int64_t tokens = 0;
  bool exact = false;
  std::string how;
};

PromptCount count_prompt_tokens(const agent::Prompts& prompts, const model::ModelSpec& spec) {
  const auto estimate = static_cast<std::int64_t>(pack::measure(prompts.system).approx_tokens +
                                                  pack::measure(prompts.task).approx_tokens);
  constexpr std::string_view kEstimate = "estimate: ceil(bytes / 4); code often counts more";
  if (!spec.tokenizer)
    return {estimate, false, std::string(kEstimate)};
  auto transport = model::make_curl_transport();
  adapt::EndpointTokenizer tokenizer(*transport, spec.tokenizer->url, spec.tokenizer->model,
                                     *adapt::tokenize_api_from_string(spec.tokenizer->api));
  auto system = tokenizer.count(prompts.system);
  auto task = system ? tokenizer.count(prompts.task) : util::Expected<std::int64_t>(0);
  if (!system || !task)
    return {estimate, false,
            fmt::format("{}; the tokenizer at {} failed: {}", kEstimate, spec.tokenizer->url,
                        util::printable((system ? task : system).error().message))};
  return {*system + *task, true, "counted by the tokenizer at " + spec.tokenizer->url};
}

// Before a run: a warning for every model × problem × variant whose opening prompts and output
// budget do not fit the context the registry gives the model (`context_tokens`), counted as
// count_prompt_tokens says; an estimate near the limit may not fit either.
void warn_unfitting_prompts(const agent::RunPlan& plan, const RunEnvironment& env,
                            std::string_view command) {
  auto planned = agent::expand(plan, env.suite(), env.manifest());
  if (!planned)
    return;
  std::set<std::tuple<std::string, std::string, std::string, bool>> seen;
  for (const agent::PlannedTrajectory& item : *planned) {
    const model::ModelSpec* spec = env.registry().find(item.key.model);
    if (spec == nullptr || !spec->context_tokens ||
        !seen.insert({item.key.model, item.problem->name(), item.variant, item.guidance}).second)
      continue;
    auto prompts = agent::build_prompts(*item.problem, plan.loop.arch, env.manifest(), item.variant,
                                        {}, frontend::of(plan.loop.language),
                                        item.guidance ? env.guidance_text() : "");
    if (!prompts)
      continue;
    const PromptCount prompt = count_prompt_tokens(*prompts, *spec);
    const std::int64_t output = spec->sampling.max_output_tokens.value_or(0);
    if (prompt.tokens + output <= *spec->context_tokens)
      continue;
    fmt::print(stderr,
               "ptxbench {}: warning: {} / {} / {}: the opening prompt is {}{} tokens ({}){} and "
               "does not fit the {} tokens of context the registry gives {}; the first call may "
               "end the trajectory as context_overflow (a smaller --variant, or none)\n",
               command, item.key.model, item.problem->name(), item.variant, prompt.exact ? "" : "~",
               prompt.tokens, prompt.how,
               output > 0 ? fmt::format(" + {} max_output_tokens", output) : "",
               *spec->context_tokens, item.key.model);
  }
}

// The run's directory and the problems of its trajectories that retrieve notes.
adapt::NotesRun notes_run(const agent::RunPlan& plan, const suite::Suite& suite,
                          const std::filesystem::path& run_dir, const pack::Manifest& manifest) {
  adapt::NotesRun run{run_dir.empty() ? run_dir : std::filesystem::absolute(run_dir), {}};
  auto planned = agent::expand(plan, suite, manifest);
  if (!planned)
    return run;
  std::set<std::string> problems;
  for (const agent::PlannedTrajectory& item : *planned)
    if (item.condition.retrieval != agent::Retrieval::none)
      problems.insert(item.problem->name());
  run.problems.assign(problems.begin(), problems.end());
  return run;
}

} // namespace

std::string live_device_text(compile::Arch arch) {
  auto device = measure::read_live_device(0);
  if (!device || device->arch() != compile::to_string(arch))
    return {};
  return measure::render_live_device(*device);
}

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

std::optional<ExitCode> StopSignals::stopped_code() const {
  if (received() == 0)
    return std::nullopt;
  return static_cast<ExitCode>(128 + received());
}

util::Expected<std::unique_ptr<RunEnvironment>>
RunEnvironment::make(const agent::RunPlan& plan, GpuUse gpu, std::string_view command,
                     const std::string& run_name, const std::filesystem::path& run_dir) {
  PTXBENCH_TRY_ASSIGN(
      auto registry,
      model::load_registry(plan.registry.empty() ? model::default_registry_path() : plan.registry));
  PTXBENCH_TRY_ASSIGN(auto manifest, pack::Manifest::load(pack::Manifest::default_path()));
  std::unique_ptr<RunEnvironment> env(new RunEnvironment(std::move(registry), std::move(manifest)));
  PTXBENCH_TRY_ASSIGN(auto suite, env->m_tools.suite());
  env->m_suite = suite;
  PTXBENCH_TRY_ASSIGN(auto checker, env->m_tools.checker());
  PTXBENCH_TRY(agent::check_plan(plan, *suite, env->m_manifest, env->m_registry));
  for (const std::string& name : plan.models)
    PTXBENCH_TRY(
        model::check_client_setup(*env->m_registry.find(name), model::process_environment()));
  if (!plan.guidance.file.empty()) {
    PTXBENCH_TRY_ASSIGN(env->m_guidance, agent::load_guidance(plan.guidance.file));
    if (!plan.guidance.sha256.empty() && plan.guidance.sha256 != env->m_guidance.sha256)
      return util::make_error(
          util::ErrorKind::invalid_input,
          fmt::format("guidance file {} changed since the run started (sha256 {} then, {} now); "
                      "restore it to resume",
                      plan.guidance.file.string(), plan.guidance.sha256, env->m_guidance.sha256));
  }
  if (!plan.notes.file.empty()) {
    PTXBENCH_TRY_ASSIGN(
        auto hook,
        adapt::notes_feedback_hook(plan.notes, notes_run(plan, *suite, run_dir, env->m_manifest)));
    env->m_notes = std::move(hook);
  }
  env->start_executor(plan, gpu, command, *checker, run_name);
  return env;
}

void RunEnvironment::start_executor(const agent::RunPlan& plan, GpuUse gpu,
                                    std::string_view command, exec::Checker& checker,
                                    const std::string& run_name) {
  m_transport = model::make_curl_transport();
  const frontend::Frontend& language = frontend::of(plan.loop.language);
  if (!plan.eval.broker.empty() && gpu == GpuUse::when_present) {
    agent::BrokerClientOptions options;
    options.broker.url = plan.eval.broker;
    options.run = run_name.empty() ? fmt::format("{}:{}", util::host_name(), ::getpid()) : run_name;
    options.eval = agent::eval_options(plan);
    m_executor = std::make_unique<agent::BrokerExecutor>(checker, std::move(options));
  } else if (!plan.eval.service.empty() && gpu == GpuUse::when_present) {
    m_executor =
        std::make_unique<agent::RemoteExecutor>(checker, *m_transport, remote_options(plan));
  } else if (gpu == GpuUse::when_present && cuda::device_count() > 0) {
    // A language whose candidates start a child of their own (Triton's Python child) would
    // never use a spare ptxbench-candidate.
    exec::EvaluatorOptions options;
    if (!language.uses_candidate_binary())
      options.children = exec::ChildStart::on_demand;
    m_evaluator =
        std::make_unique<exec::Evaluator>(checker, *m_suite, std::filesystem::path(),
                                          exec::ReferenceLatencyCache::default_file(), options);
    m_executor =
        std::make_unique<agent::GpuExecutor>(checker, *m_evaluator, agent::eval_options(plan));
    m_live_device = live_device_text(plan.loop.arch);
  } else {
    m_executor = std::make_unique<agent::StaticExecutor>(checker, language);
    fmt::print(stderr, "ptxbench {}: {}; {}\n", command,
               gpu == GpuUse::never ? "--static-only" : "no CUDA device here",
               language.static_run_notice());
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
  deps.notice_out = stderr;
  deps.display = isatty(STDERR_FILENO) != 0 ? agent::Display::redraw : agent::Display::lines;
  deps.cancel = cancel;
  deps.extra_feedback = m_notes;
  deps.guidance = m_guidance.text;
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
  auto environment = RunEnvironment::make(
      job.plan, job.gpu, command,
      fmt::format("{}:{}", util::host_name(), std::filesystem::absolute(job.dir).string()),
      job.dir);
  if (!environment)
    return report_error(command, environment.error());
  job.plan.guidance.sha256 = (*environment)->guidance_sha256();
  warn_unfitting_prompts(job.plan, **environment, command);
  if (!store) {
    auto opened = open_store(job);
    if (!opened)
      return report_error(command, opened.error());
    store = std::move(*opened);
  }
  if (auto status = settle_model_settings(*store, (*environment)->registry(), job, command);
      !status)
    return report_error(command, status.error());
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
