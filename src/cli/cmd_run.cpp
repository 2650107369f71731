#include "agent/remote_executor.hpp"
#include "cli/commands.hpp"
#include "cli/run_job.hpp"
#include "cli/tools.hpp"
#include "fleet/broker.hpp"
#include "frontend/frontend.hpp"

#include <array>
#include <fmt/core.h>
#include <memory>

namespace ptxbench::cli {
namespace {

struct RunCliOptions {
  std::string plan_file;
  std::string resume;
  std::string out;
  std::vector<std::string> models;
  std::vector<std::string> problems;
  std::vector<std::string> variants;
  std::vector<std::string> eval_service;
  std::string broker;
  std::string registry;
  std::string context;
  std::string arch;
  std::string language;
  int trajectories = 0;
  int turns = 0;
  int jobs = 0;
  double target_speedup = -1;
  std::string notes;
  int notes_mode = 0;
  std::vector<std::string> held_out;
  std::string guidance;
  std::vector<std::string> parameters; // NAME=VALUE
  bool static_only = false;
  bool no_memcheck = false;
  bool quiet = false;
  bool override_settings = false;
};

// What a resume takes from the run's stored plan; given with --resume they would be ignored.
constexpr std::array<std::string_view, 15> kPlanFlags{
    "--plan",    "--out",          "--model",       "--problem",
    "--variant", "--trajectories", "--turns",       "--target-speedup",
    "--context", "--arch",         "--no-memcheck", "--guidance",
    "--set",     "--held-out",     "--notes"};

util::Status check_resume_flags(const CLI::App& sub, const RunCliOptions& o) {
  if (o.resume.empty()) {
    if (o.override_settings)
      return util::make_error(util::ErrorKind::invalid_input, "--override goes with --resume");
    return util::Ok{};
  }
  for (std::string_view flag : kPlanFlags)
    if (sub.count(std::string(flag)) > 0)
      return util::make_error(
          util::ErrorKind::invalid_input,
          fmt::format("{} cannot be used with --resume: a resumed run continues the plan it "
                      "started with (stored in the run); start a new run with --out to change it",
                      flag));
  return util::Ok{};
}

// Flags given on the command line replace the plan file's values.
util::Status apply_flags(const RunCliOptions& o, agent::RunPlan& plan) {
  if (!o.models.empty())
    plan.models = o.models;
  if (!o.problems.empty())
    plan.problems = o.problems;
  if (!o.variants.empty())
    plan.prompt_variants = o.variants;
  if (!o.registry.empty())
    plan.registry = std::filesystem::absolute(o.registry);
  if (o.trajectories > 0)
    plan.trajectories = o.trajectories;
  if (o.turns > 0)
    plan.loop.max_turns = o.turns;
  if (o.jobs > 0)
    plan.jobs = o.jobs;
  if (o.no_memcheck)
    plan.eval.memcheck = false;
  if (o.target_speedup == 0)
    plan.loop.target_speedup.reset();
  if (o.target_speedup > 0)
    plan.loop.target_speedup = o.target_speedup;
  if (!o.context.empty()) {
    auto policy = agent::parse_context_policy(o.context);
    if (!policy)
      return util::make_error(util::ErrorKind::invalid_input,
                              "--context must be full or latest-pair");
    plan.loop.context = *policy;
  }
  if (!o.arch.empty()) {
    auto arch = compile::parse_arch(o.arch);
    if (!arch)
      return util::make_error(util::ErrorKind::invalid_input, "--arch must be sm_90a or sm_100a");
    plan.loop.arch = *arch;
  }
  if (!o.language.empty()) {
    PTXBENCH_TRY_ASSIGN(plan.loop.language, frontend::language_for(o.language));
  }
  if (!o.notes.empty())
    plan.notes.file = std::filesystem::absolute(o.notes);
  if (o.notes_mode > 0)
    plan.notes.mode = o.notes_mode;
  if (o.notes_mode > 0 && plan.notes.file.empty())
    return util::make_error(util::ErrorKind::invalid_input,
                            "--notes-mode needs --notes FILE (or the plan's repair_notes.file)");
  for (const std::string& dir : o.held_out)
    plan.notes.held_out.push_back(std::filesystem::absolute(dir));
  if (!o.guidance.empty())
    plan.guidance.file = std::filesystem::absolute(o.guidance);
  if (plan.models.empty())
    return util::make_error(util::ErrorKind::invalid_input,
                            "name a model (--model NAME, see config/models.json) or a --plan file");
  return util::Ok{};
}

// `--set NAME=VALUE` options as plan parameters.
util::Expected<agent::PlanParameters> parse_parameters(const std::vector<std::string>& given) {
  agent::PlanParameters parameters;
  for (const std::string& item : given) {
    const auto equals = item.find('=');
    if (equals == std::string::npos || equals == 0 || equals + 1 == item.size())
      return util::make_error(util::ErrorKind::invalid_input,
                              "--set " + item + ": expected NAME=VALUE");
    parameters[item.substr(0, equals)] = item.substr(equals + 1);
  }
  return parameters;
}

util::Expected<RunJob> make_job(const RunCliOptions& o) {
  if (!o.parameters.empty() && o.plan_file.empty())
    return util::make_error(util::ErrorKind::invalid_input,
                            "--set fills a plan's parameters: give the --plan file");
  RunJob job;
  job.gpu = o.static_only ? GpuUse::never : GpuUse::when_present;
  job.progress = !o.quiet;
  if (o.jobs > 0)
    job.plan.jobs = o.jobs;
  if (o.static_only && !o.eval_service.empty())
    return util::make_error(util::ErrorKind::invalid_input,
                            "--static-only and --eval-service exclude each other");
  if (o.static_only && !o.broker.empty())
    return util::make_error(util::ErrorKind::invalid_input,
                            "--static-only and --broker exclude each other");
  if (!o.eval_service.empty() && !o.broker.empty())
    return util::make_error(util::ErrorKind::invalid_input,
                            "--eval-service and --broker exclude each other");
  PTXBENCH_TRY(agent::check_service_urls(o.eval_service));
  if (!o.broker.empty())
    PTXBENCH_TRY(fleet::check_broker_url(o.broker));
  job.plan.eval.service = o.eval_service;
  job.plan.eval.broker = o.broker;
  if (!o.resume.empty()) {
    job.mode = RunMode::resume;
    job.dir = o.resume;
    job.override_settings = o.override_settings;
    if (!o.registry.empty())
      job.plan.registry = std::filesystem::absolute(o.registry);
    return job;
  }
  if (!o.plan_file.empty()) {
    PTXBENCH_TRY_ASSIGN(auto parameters, parse_parameters(o.parameters));
    PTXBENCH_TRY_ASSIGN(auto plan, agent::load_plan(o.plan_file, parameters));
    job.plan = std::move(plan);
    if (!o.eval_service.empty())
      job.plan.eval.service = o.eval_service;
    if (!o.broker.empty())
      job.plan.eval.broker = o.broker;
  }
  if (o.static_only && !job.plan.eval.broker.empty())
    return util::make_error(util::ErrorKind::invalid_input,
                            "--static-only and the plan's eval.broker exclude each other");
  if (o.static_only && !job.plan.eval.service.empty())
    return util::make_error(util::ErrorKind::invalid_input,
                            "--static-only and the plan's eval.service exclude each other");
  PTXBENCH_TRY(apply_flags(o, job.plan));
  if (!job.plan.registry.empty())
    job.plan.registry = std::filesystem::absolute(job.plan.registry);
  job.dir = o.out.empty() ? default_run_dir("run") : std::filesystem::path(o.out);
  return job;
}

} // namespace

Action setup_run(CLI::App& sub) {
  auto o = std::make_shared<RunCliOptions>();
  sub.add_option("--plan", o->plan_file,
                 "run plan JSON: models × problems × prompt variants × trajectories × turns "
                 "(config/plans/; flags below override it)");
  sub.add_option("--resume", o->resume,
                 "continue the run in this directory without repeating "
                 "finished turns");
  sub.add_option("--out", o->out, "run directory (default runs/run-<UTC time>)");
  sub.add_option("--model", o->models, "model name(s) from the registry");
  sub.add_option("--problem", o->problems,
                 "problem name(s), or primary / generalization / all (default gemm_n7168_k5120)");
  sub.add_option("--variant", o->variants,
                 "knowledge-pack variant(s), or paper (the kind's three), default, none");
  sub.add_option("--registry", o->registry,
                 "model registry JSON (default config/models.json; with --resume, replaces the "
                 "run's)");
  // Counts given on the command line must be ≥ 1: 0 is how "not given" is kept, so a 0 or a
  // negative value would otherwise fall back to the plan's number silently.
  sub.add_option("--trajectories", o->trajectories, "trajectories per model × problem × variant")
      ->check(at_least(1));
  sub.add_option("--turns", o->turns, "counted turns per trajectory (default 8)")
      ->check(at_least(1));
  sub.add_option("--target-speedup", o->target_speedup,
                 "stop a trajectory at this speedup (default 1.2; 0: never stop early)")
      ->check(at_least(0));
  sub.add_option("--context", o->context, "full or latest-pair (default full)");
  sub.add_option("--arch", o->arch, "sm_90a or sm_100a (default sm_90a)");
  sub.add_option("--language", o->language,
                 "candidate language: cuda (kernel.cu) or triton (kernel.py) (default cuda)");
  sub.add_option("--jobs", o->jobs, "trajectories in flight at once (default 4)")
      ->check(at_least(1));
  sub.add_option("--eval-service", o->eval_service,
                 "run the GPU step on evaluation service(s) (`ptxbench serve`) instead of a local "
                 "GPU: URL[,URL] — each turn goes to the one with the shortest queue; bearer "
                 "token from $PTXBENCH_SERVICE_TOKEN; with --resume, replaces the run's")
      ->delimiter(',');
  sub.add_option("--broker", o->broker,
                 "run the GPU step on a fleet through its PostgreSQL queue "
                 "(postgresql://user@host:port/db; password from $PGPASSWORD or ~/.pgpass): each "
                 "turn is one task that any worker of the turn's architecture takes "
                 "(`ptxbench serve --broker`); with --resume, replaces the run's");
  sub.add_option(
      "--notes", o->notes,
      "append repair notes retrieved from this corpus (fixit/notes/notes.jsonl of "
      "`ptxbench fixit notes`) to every failed turn's feedback (plan key repair_notes.file)");
  sub.add_option("--notes-mode", o->notes_mode,
                 "1: the notes (default); 2: the best fixed kernel and the notes")
      ->check(CLI::Range(1, 2));
  sub.add_option("--held-out", o->held_out,
                 "run directories whose repair pairs retrieval must not serve (the leakage "
                 "guard; plan key repair_notes.held_out)");
  sub.add_option("--guidance", o->guidance,
                 "expert guidance file placed in the system prompt (knowledge/guidance/; plan "
                 "key guidance.file)");
  sub.add_option("--set", o->parameters,
                 "NAME=VALUE: a plan parameter (\"${NAME}\" in the plan's models), e.g. "
                 "--set student=Qwen3.6-27B");
  sub.add_flag("--static-only", o->static_only,
               "never run the GPU step, even on a GPU machine (turns end as static_only)");
  sub.add_flag("--no-memcheck", o->no_memcheck,
               "skip the compute-sanitizer memcheck pass that every evaluated turn gets by "
               "default (plan key eval.memcheck)");
  sub.add_flag("--quiet", o->quiet, "no progress line");
  sub.add_flag("--override", o->override_settings,
               "with --resume: continue although the model's registry entry changed since the "
               "run recorded it; the new settings are recorded for the turns from now on");
  return [o, &sub] {
    if (auto status = check_resume_flags(sub, *o); !status)
      return report_error("run", status.error());
    auto job = make_job(*o);
    if (!job)
      return report_error("run", job.error());
    return run_job(std::move(*job), "run");
  };
}

} // namespace ptxbench::cli
