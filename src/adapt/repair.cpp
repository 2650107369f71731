#include "adapt/repair.hpp"

#include "adapt/jsonl.hpp"
#include "compile/language.hpp"
#include "trace/json_io.hpp"
#include "util/fs.hpp"

#include <fmt/core.h>

namespace ptxbench::adapt {
namespace {

util::Error invalid(std::string message) {
  return util::make_error(util::ErrorKind::invalid_input, std::move(message));
}

util::Expected<std::vector<FailureRecord>> read_failures(const std::filesystem::path& path) {
  auto out = read_jsonl<FailureRecord>(path, failure_from_json);
  if (!out)
    return out.error().kind == util::ErrorKind::not_found
               ? invalid(path.string() + ": missing; run the balance stage first")
               : out.take_error();
  if (out->empty())
    return invalid(path.string() + ": no failures selected");
  return out;
}

util::Expected<compile::Arch> failures_arch(const std::vector<FailureRecord>& failures,
                                            const RepairOptions& options) {
  if (options.arch)
    return *options.arch;
  for (const FailureRecord& failure : failures)
    if (failure.arch != failures.front().arch)
      return invalid(fmt::format("the selected failures are for {} and {}: pick one with --arch",
                                 failures.front().arch, failure.arch));
  auto arch = compile::parse_arch(failures.front().arch);
  if (!arch)
    return invalid("failure " + failures.front().id + ": unknown arch \"" + failures.front().arch +
                   "\"");
  return *arch;
}

// The candidate language of the failures: a repair trajectory is of the failure's language
// (its system prompt, executor and repair prompt), and one run has one language.
util::Expected<compile::Language> failures_language(const std::vector<FailureRecord>& failures) {
  const trace::Language first = failures.front().trajectory_key.language;
  for (const FailureRecord& failure : failures)
    if (failure.trajectory_key.language != first)
      return invalid(fmt::format("the selected failures are of two candidate languages ({} and "
                                 "{}): balance one language per data dir",
                                 trace::to_string(first),
                                 trace::to_string(failure.trajectory_key.language)));
  auto language = compile::from_trace(first);
  if (!language)
    return invalid("failure " + failures.front().id + ": candidate language " +
                   std::string(trace::to_string(first)) + " cannot be repaired");
  return *language;
}

util::Expected<agent::RunPlan> new_plan(const RepairOptions& options,
                                        const std::vector<FailureRecord>& failures) {
  PTXBENCH_TRY_ASSIGN(auto arch, failures_arch(failures, options));
  PTXBENCH_TRY_ASSIGN(auto language, failures_language(failures));
  agent::RunPlan plan;
  plan.models = {options.teacher};
  plan.jobs = options.jobs;
  plan.registry = options.registry;
  plan.eval = options.eval;
  plan.loop.arch = arch;
  plan.loop.language = language;
  plan.loop.max_turns = options.turns;
  plan.loop.target_speedup =
      options.target_speedup > 0 ? std::optional<double>(options.target_speedup) : std::nullopt;
  for (const FailureRecord& failure : failures)
    plan.repairs.push_back({failure.id, failure.trajectory_key.problem,
                            failure.trajectory_key.prompt_variant, failure.kernel_source,
                            failure.feedback});
  return plan;
}

// An existing run continues only with the failures and the teacher it was started with.
util::Status check_same_run(const agent::RunPlan& stored, const agent::RunPlan& wanted,
                            const std::filesystem::path& run_dir) {
  if (stored.models != wanted.models)
    return invalid(fmt::format("{} is a repair run of teacher {}, not {}", run_dir.string(),
                               stored.models.empty() ? "?" : stored.models.front(),
                               wanted.models.front()));
  if (stored.repairs != wanted.repairs)
    return invalid(run_dir.string() + " was started from other selected failures; the balance "
                                      "stage changed them since: repair into a new data dir");
  return util::Ok{};
}

bool run_exists(const RepairPaths& paths) {
  return std::filesystem::exists(paths.run_dir / store::RunStore::kDatabaseName);
}

util::Expected<agent::RunPlan> stored_plan(const store::RunStore& store) {
  return agent::parse_plan(store.info().config_json, store.path());
}

util::Status write_tasks(const std::filesystem::path& path,
                         const std::vector<agent::PlannedTrajectory>& planned) {
  std::vector<Json> lines;
  for (const auto& item : planned)
    lines.push_back({{"failure_id", item.repair->id}, {"trajectory_key", to_json(item.key)}});
  return util::write_file_atomic(path, to_jsonl(lines));
}

util::Expected<std::unique_ptr<store::RunStore>> open_run(const RepairPaths& paths,
                                                          const agent::RunPlan& plan) {
  if (run_exists(paths))
    return store::RunStore::open_existing(paths.run_dir);
  return store::RunStore::open(
      paths.run_dir, store::RunInfo{agent::plan_to_json(plan).dump(), PTXBENCH_VERSION, ""});
}

} // namespace

RepairPaths repair_paths(const std::filesystem::path& data_dir) {
  return {data_dir / "fixit" / "balance" / "selected.jsonl",
          data_dir / "fixit" / "repair" / "tasks.jsonl", data_dir / "fixit" / "repair" / "run"};
}

util::Expected<agent::RunPlan> repair_plan(const RepairOptions& options) {
  if (options.teacher.empty())
    return invalid("name the teacher model (--teacher NAME, see config/models.json)");
  const RepairPaths paths = repair_paths(options.data_dir);
  PTXBENCH_TRY_ASSIGN(auto failures, read_failures(paths.selected));
  auto wanted = new_plan(options, failures);
  if (!wanted || !run_exists(paths))
    return wanted;
  PTXBENCH_TRY_ASSIGN(auto store, store::RunStore::open_existing(paths.run_dir));
  PTXBENCH_TRY_ASSIGN(auto stored, stored_plan(*store));
  PTXBENCH_TRY(check_same_run(stored, *wanted, paths.run_dir));
  stored.jobs = options.jobs;
  if (!options.eval.service.empty())
    stored.eval.service = options.eval.service;
  return stored;
}

util::Expected<RepairResult> run_repair(const RepairOptions& options, agent::RunDeps deps) {
  const RepairPaths paths = repair_paths(options.data_dir);
  RepairResult result;
  result.start = run_exists(paths) ? RepairStart::resumed : RepairStart::fresh;
  PTXBENCH_TRY_ASSIGN(auto plan, repair_plan(options));
  PTXBENCH_TRY_ASSIGN(auto planned, agent::expand(plan, *deps.suite, *deps.manifest));
  PTXBENCH_TRY(agent::check_plan(plan, *deps.suite, *deps.manifest, *deps.registry));
  PTXBENCH_TRY_ASSIGN(auto store, open_run(paths, plan));
  PTXBENCH_TRY(write_tasks(paths.tasks, planned));
  deps.store = store.get();
  PTXBENCH_TRY_ASSIGN(auto summary, agent::run_plan(plan, deps));
  result.repairs = plan.repairs.size();
  result.summary = std::move(summary);
  return result;
}

} // namespace ptxbench::adapt
