// The model-calling stages of the adaptation data, set up as the `repair`, `synthesize` and
// `notes` subcommands of `ptxbench fixit` and `synthesize` of `ptxbench kernelgen`
// (cmd_fixit.cpp, cmd_kernelgen.cpp): a teacher repairs the selected failures through the agent
// loop; a reasoning teacher writes the rationales; a reviewer writes the repair notes.
#include "adapt/notes_stage.hpp"
#include "adapt/repair.hpp"
#include "adapt/synthesize.hpp"
#include "agent/remote_executor.hpp"
#include "cli/adapt_common.hpp"
#include "cli/commands.hpp"
#include "cli/run_job.hpp"
#include "cli/tools.hpp"
#include "report/export.hpp"

#include <fmt/core.h>
#include <memory>

namespace ptxbench::cli {
namespace {

struct RepairCliOptions {
  std::string dir;
  std::string teacher;
  std::string registry;
  std::string arch;
  std::vector<std::string> service;
  int turns = 5;
  double target_speedup = 0.15;
  int jobs = 4;
  bool static_only = false;
  bool no_memcheck = false;
  bool quiet = false;
};

util::Expected<adapt::RepairOptions> repair_options(const RepairCliOptions& o) {
  adapt::RepairOptions options;
  options.data_dir = o.dir;
  options.teacher = o.teacher;
  options.turns = o.turns;
  options.target_speedup = o.target_speedup;
  options.jobs = o.jobs;
  if (!o.registry.empty())
    options.registry = std::filesystem::absolute(o.registry);
  if (o.static_only && !o.service.empty())
    return util::make_error(util::ErrorKind::invalid_input,
                            "--static-only and --service exclude each other");
  PTXBENCH_TRY(agent::check_service_urls(o.service));
  options.eval.service = o.service;
  options.eval.memcheck = !o.no_memcheck;
  if (!o.arch.empty()) {
    options.arch = compile::parse_arch(o.arch);
    if (!options.arch)
      return util::make_error(util::ErrorKind::invalid_input, "--arch must be sm_90a or sm_100a");
  }
  return options;
}

ExitCode run_fixit_repair(const RepairCliOptions& o) {
  constexpr std::string_view kCommand = "fixit repair";
  auto options = repair_options(o);
  if (!options)
    return report_error(kCommand, options.error());
  StopSignals signals;
  auto result = run_repair_stage(*options, o.static_only ? GpuUse::never : GpuUse::when_present,
                                 !o.quiet, kCommand, signals);
  if (!result)
    return report_error(kCommand, result.error());
  if (auto stopped = signals.stopped_code())
    return *stopped;
  return result->summary.unfinished() == 0 ? ExitCode::ok : ExitCode::failure;
}

struct SynthesizeCliOptions {
  std::string dir;
  std::string reasoner;
  std::string registry;
  int concurrency = 8;
  int max_passes = 3;
  std::size_t min_chars = 200;
  std::size_t max_chars = 190000;
  bool quiet = false;
};

ExitCode run_synthesize(const SynthesizeCliOptions& o, adapt::RationaleKind kind,
                        std::string_view command) {
  adapt::SynthesizeOptions options;
  options.data_dir = o.dir;
  options.kind = kind;
  options.reasoner = o.reasoner;
  options.concurrency = o.concurrency;
  options.max_passes = o.max_passes;
  options.limits = {o.min_chars, o.max_chars};
  StopSignals signals;
  auto result = run_synthesize_stage(options, o.registry, !o.quiet, signals);
  if (!result)
    return report_error(command, result.error());
  if (auto stopped = signals.stopped_code())
    return *stopped;
  return result->failed + result->left == 0 ? ExitCode::ok : ExitCode::failure;
}

void add_synthesize_options(CLI::App& sub, SynthesizeCliOptions& o, std::string_view input) {
  sub.add_option("dir", o.dir, "the data directory (reads " + std::string(input) + ")")->required();
  sub.add_option("--reasoner", o.reasoner, "the reasoning teacher, a registry name")->required();
  sub.add_option("--registry", o.registry, "model registry JSON (default config/models.json)");
  sub.add_option("--concurrency", o.concurrency, "calls in flight at once (default 8)")
      ->check(at_least(1));
  sub.add_option("--max-passes", o.max_passes,
                 "model calls per record before it is written as failed (default 3)")
      ->check(at_least(1));
  sub.add_option("--min-chars", o.min_chars, "shortest monologue kept (default 200)");
  sub.add_option("--max-chars", o.max_chars, "longest monologue kept (default 190000)");
  sub.add_flag("--quiet", o.quiet, "no line per record");
}

struct NotesCliOptions {
  std::string dir;
  std::string model;
  std::string registry;
  int concurrency = 8;
  int max_passes = 3;
  bool quiet = false;
};

ExitCode run_fixit_notes(const NotesCliOptions& o) {
  constexpr std::string_view kCommand = "fixit notes";
  auto registry = model::load_registry(o.registry.empty() ? model::default_registry_path()
                                                          : std::filesystem::path(o.registry));
  if (!registry)
    return report_error(kCommand, registry.error());
  const adapt::NotesOptions options{o.dir, o.model, o.concurrency, o.max_passes};
  auto transport = model::make_curl_transport();
  StopSignals signals;
  adapt::NotesDeps deps;
  deps.registry = &*registry;
  deps.client.transport = transport.get();
  deps.progress_out = o.quiet ? nullptr : stderr;
  deps.cancel = signals.flag();
  auto result = adapt::run_notes(options, deps);
  if (!result)
    return report_error(kCommand, result.error());
  fmt::print("{}: {} pairs, {} done before, {} done now, {} failed, {} left; ${:.4f}\n",
             adapt::notes_paths(options.data_dir).output.string(), result->inputs,
             result->already_done, result->done, result->failed, result->left, result->cost_usd);
  if (result->failed + result->left > 0)
    fmt::print("Failed and unattempted ones run again with the same command.\n");
  if (auto stopped = signals.stopped_code())
    return *stopped;
  return result->failed + result->left == 0 ? ExitCode::ok : ExitCode::failure;
}

} // namespace

util::Expected<adapt::RepairResult> run_repair_stage(const adapt::RepairOptions& options,
                                                     GpuUse gpu, bool progress,
                                                     std::string_view command,
                                                     const StopSignals& signals) {
  PTXBENCH_TRY_ASSIGN(auto plan, adapt::repair_plan(options));
  PTXBENCH_TRY_ASSIGN(auto environment, RunEnvironment::make(plan, gpu, command));
  const adapt::RepairPaths paths = adapt::repair_paths(options.data_dir);
  fmt::print("Repair run: {} ({} on {}), tasks {}\n", paths.run_dir.string(),
             environment->executor().name(), compile::to_string(plan.loop.arch),
             paths.tasks.string());
  std::fflush(stdout);
  PTXBENCH_TRY_ASSIGN(auto result,
                      adapt::run_repair(options, environment->deps(progress, signals.flag())));
  fmt::print("{}{} repairs ({})\n", agent::render_summary(result.summary), result.repairs,
             result.start == adapt::RepairStart::resumed ? "resumed" : "new run");
  PTXBENCH_TRY_ASSIGN(auto store, store::RunStore::open_existing(paths.run_dir));
  PTXBENCH_TRY(report::export_run(*store, paths.run_dir / "exports"));
  return result;
}

util::Expected<adapt::SynthesizeResult>
run_synthesize_stage(const adapt::SynthesizeOptions& options, const std::string& registry_file,
                     bool progress, const StopSignals& signals) {
  PTXBENCH_TRY_ASSIGN(auto registry,
                      model::load_registry(registry_file.empty()
                                               ? model::default_registry_path()
                                               : std::filesystem::path(registry_file)));
  auto transport = model::make_curl_transport();
  adapt::SynthesizeDeps deps;
  deps.registry = &registry;
  deps.client.transport = transport.get();
  deps.progress_out = progress ? stderr : nullptr;
  deps.cancel = signals.flag();
  PTXBENCH_TRY_ASSIGN(auto result, adapt::run_synthesize(options, deps));
  const adapt::SynthesizePaths paths = adapt::synthesize_paths(options.data_dir, options.kind);
  fmt::print("{}: {} inputs, {} done before, {} done now, {} failed, {} left; ${:.4f}\n",
             paths.output.string(), result.inputs, result.already_done, result.done, result.failed,
             result.left, result.cost_usd);
  if (result.failed + result.left > 0)
    fmt::print("Failed and unattempted ones run again with the same command.\n");
  return result;
}

Action setup_fixit_synthesize(CLI::App& sub) {
  auto o = std::make_shared<SynthesizeCliOptions>();
  add_synthesize_options(sub, *o, "fixit/pairs/pairs.jsonl");
  return [o] { return run_synthesize(*o, adapt::RationaleKind::fixit, "fixit synthesize"); };
}

Action setup_kernelgen_synthesize(CLI::App& sub) {
  auto o = std::make_shared<SynthesizeCliOptions>();
  add_synthesize_options(sub, *o, "kernelgen/collect/correct.jsonl");
  return
      [o] { return run_synthesize(*o, adapt::RationaleKind::kernelgen, "kernelgen synthesize"); };
}

Action setup_fixit_repair(CLI::App& sub) {
  auto o = std::make_shared<RepairCliOptions>();
  sub.add_option("dir", o->dir, "the data directory (reads fixit/balance/selected.jsonl)")
      ->required();
  sub.add_option("--teacher", o->teacher, "the teacher model, a registry name")->required();
  sub.add_option("--turns", o->turns, "counted turns per repair (default 5)")->check(at_least(1));
  sub.add_option("--target-speedup", o->target_speedup,
                 "stop a repair at this speedup (default 0.15; 0: never stop early)")
      ->check(at_least(0));
  sub.add_option("--jobs", o->jobs, "repairs in flight at once (default 4)")->check(at_least(1));
  sub.add_option("--registry", o->registry, "model registry JSON (default config/models.json)");
  sub.add_option("--arch", o->arch, "sm_90a or sm_100a (default: the failures')");
  sub.add_option("--service", o->service,
                 "run the GPU step on evaluation service(s) (`ptxbench serve`): URL[,URL]")
      ->delimiter(',');
  sub.add_flag("--static-only", o->static_only,
               "never run the GPU step (turns end as static_only, so no repair is correct)");
  sub.add_flag("--no-memcheck", o->no_memcheck, "skip the compute-sanitizer memcheck pass");
  sub.add_flag("--quiet", o->quiet, "no progress line");
  return [o] { return run_fixit_repair(*o); };
}

Action setup_fixit_notes(CLI::App& sub) {
  auto o = std::make_shared<NotesCliOptions>();
  sub.add_option("dir", o->dir, "the data directory (reads fixit/pairs/pairs.jsonl)")->required();
  sub.add_option("--model", o->model, "the notes model (reviewer), a registry name")->required();
  sub.add_option("--registry", o->registry, "model registry JSON (default config/models.json)");
  sub.add_option("--concurrency", o->concurrency, "calls in flight at once (default 8)")
      ->check(at_least(1));
  sub.add_option("--max-passes", o->max_passes,
                 "model calls per pair before it is written as failed (default 3)")
      ->check(at_least(1));
  sub.add_flag("--quiet", o->quiet, "no line per pair");
  return [o] { return run_fixit_notes(*o); };
}

} // namespace ptxbench::cli
