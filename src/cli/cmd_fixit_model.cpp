// The model-calling stages of the adaptation data as commands of their own, until the merge
// folds them into `ptxbench fixit repair|synthesize` and `ptxbench kernelgen synthesize`:
// fixit-repair (a teacher repairs the selected failures through the agent loop).
#include "adapt/repair.hpp"
#include "agent/remote_executor.hpp"
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
  if (!o.registry.empty()) options.registry = std::filesystem::absolute(o.registry);
  if (o.static_only && !o.service.empty())
    return util::make_error(util::ErrorKind::invalid_input,
                            "--static-only and --service exclude each other");
  if (auto urls = agent::check_service_urls(o.service); !urls) return urls.take_error();
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
  constexpr std::string_view kCommand = "fixit-repair";
  auto options = repair_options(o);
  if (!options) return report_error(kCommand, options.error());
  auto plan = adapt::repair_plan(*options);
  if (!plan) return report_error(kCommand, plan.error());
  auto environment =
      RunEnvironment::make(*plan, o.static_only ? GpuUse::never : GpuUse::when_present, kCommand);
  if (!environment) return report_error(kCommand, environment.error());
  StopSignals signals;
  const adapt::RepairPaths paths = adapt::repair_paths(options->data_dir);
  fmt::print("Repair run: {} ({} on {}), tasks {}\n", paths.run_dir.string(),
             (*environment)->executor().name(), compile::to_string(plan->loop.arch),
             paths.tasks.string());
  std::fflush(stdout);
  auto result = adapt::run_repair(*options, (*environment)->deps(!o.quiet, signals.flag()));
  if (!result) return report_error(kCommand, result.error());
  fmt::print("{}{} repairs ({})\n", agent::render_summary(result->summary), result->repairs,
             result->start == adapt::RepairStart::resumed ? "resumed" : "new run");
  auto store = store::RunStore::open_existing(paths.run_dir);
  if (!store) return report_error(kCommand, store.error());
  auto files = report::export_run(**store, paths.run_dir / "exports");
  if (!files) return report_error(kCommand, files.error());
  return result->summary.unfinished() == 0 ? ExitCode::ok : ExitCode::failure;
}

} // namespace

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

} // namespace ptxbench::cli
