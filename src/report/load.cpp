#include "report/model.hpp"
#include "store/run_store.hpp"
#include "trace/json_io.hpp"

#include <algorithm>
#include <fmt/core.h>
#include <nlohmann/json.hpp>
#include <system_error>

namespace ptxbench::report {
namespace {

namespace fs = std::filesystem;

TurnRecord make_record(const store::TrajectoryRecord& trajectory, std::int64_t number,
                       const store::FinishedTurn& turn, const std::string& gpu) {
  TurnRecord record;
  record.gpu = gpu;
  record.model = series_name(trajectory.key);
  record.condition = trajectory.key.condition;
  record.problem = trajectory.key.problem;
  record.variant = trajectory.key.prompt_variant;
  record.language = trace::to_string(trajectory.key.language);
  record.trajectory = number;
  record.sample = trajectory.key.sample;
  record.turn_index = turn.index;
  record.category = turn.category;
  record.counting = turn.counting;
  if (!turn.evaluations.empty()) {
    // The last evaluation is the one the turn's outcome was decided on.
    const store::StoredEvaluation& evaluation = turn.evaluations.back();
    record.speedup = evaluation.speedup;
    record.target =
        target_state_from_verdicts(evaluation.static_verdict, evaluation.dynamic_verdict);
  }
  return record;
}

// The model-call attempts of one finished turn.
util::Status load_calls(store::RunStore& run, const TurnRecord& record, store::TurnId turn,
                        RunModel& model) {
  PTXBENCH_TRY_ASSIGN(auto calls, run.model_calls(turn));
  for (const store::ModelCallRecord& call : calls) {
    model.calls.push_back(CallRecord{record.model, record.gpu, record.trajectory,
                                     call.error_kind ? CallOutcome::failed : CallOutcome::replied,
                                     call.reasoning_tokens});
    if (!call.error_kind)
      model.turns.back().reasoning_tokens += call.reasoning_tokens;
  }
  return util::Ok{};
}

// One trajectory's finished turns, their model calls and its spending, numbered `number`.
util::Status load_trajectory(store::RunStore& run, const store::TrajectoryRecord& trajectory,
                             std::int64_t number, std::string_view configured, RunModel& model) {
  PTXBENCH_TRY_ASSIGN(auto turns, run.finished_turns(trajectory.id));
  const std::string gpu = trajectory_gpu(turns, configured);
  for (const store::FinishedTurn& turn : turns) {
    model.turns.push_back(make_record(trajectory, number, turn, gpu));
    PTXBENCH_TRY(load_calls(run, model.turns.back(), turn.id, model));
  }
  PTXBENCH_TRY_ASSIGN(auto usage, run.usage(trajectory.id));
  model.spend.push_back(SpendRecord{series_name(trajectory.key), gpu, number, usage});
  return util::Ok{};
}

util::Expected<std::unique_ptr<store::RunStore>> open_run(const fs::path& run_dir) {
  std::error_code ec;
  if (!fs::is_directory(run_dir, ec))
    return util::make_error(util::ErrorKind::not_found,
                            fmt::format("run directory {} does not exist", run_dir.string()));
  if (!fs::exists(run_dir / store::RunStore::kDatabaseName, ec))
    return util::make_error(util::ErrorKind::not_found,
                            fmt::format("{} is not a run directory (no {})", run_dir.string(),
                                        store::RunStore::kDatabaseName));
  return store::RunStore::open_existing(run_dir);
}

} // namespace

std::string series_name(const store::TrajectoryKey& key) {
  return key.condition.empty() ? key.model : key.model + " · " + key.condition;
}

TargetState target_state_from_verdicts(const std::optional<std::string>& static_verdict,
                                       const std::optional<std::string>& dynamic_verdict) {
  if (static_verdict == "absent")
    return TargetState::absent;
  if (!dynamic_verdict)
    return TargetState::unknown;
  for (const auto& info : kTargetStates)
    if (info.name == *dynamic_verdict)
      return info.state;
  return TargetState::unknown;
}

std::string configured_gpu(std::string_view config_json) {
  const auto config = nlohmann::json::parse(config_json, nullptr, /*allow_exceptions=*/false);
  if (!config.is_object())
    return {};
  for (const char* key : {"gpu", "arch"}) {
    const auto it = config.find(key);
    if (it != config.end() && it->is_string() && !it->get<std::string>().empty())
      return it->get<std::string>();
  }
  return {};
}

std::string trajectory_gpu(std::span<const store::FinishedTurn> turns,
                           std::string_view configured) {
  for (const store::FinishedTurn& turn : turns)
    for (const store::StoredEvaluation& evaluation : turn.evaluations)
      for (const trace::Trace& trace : evaluation.traces) {
        if (!trace.evaluation)
          continue;
        const std::string& hardware = trace.evaluation->environment.hardware;
        if (!hardware.empty() && !hardware.starts_with("unknown"))
          return hardware;
      }
  const bool static_only = std::any_of(turns.begin(), turns.end(), [](const auto& turn) {
    return turn.category == store::TurnCategory::static_only;
  });
  return std::string(static_only ? kNoGpu : configured);
}

util::Expected<RunModel> load_run(const fs::path& run_dir, std::int64_t first_trajectory) {
  PTXBENCH_TRY_ASSIGN(auto run, open_run(run_dir));
  PTXBENCH_TRY_ASSIGN(auto trajectories, run->trajectories());
  RunModel model;
  model.sources.push_back(run_dir.string());
  model.n_trajectories = static_cast<std::int64_t>(trajectories.size());
  const std::string configured = configured_gpu(run->info().config_json);
  std::int64_t number = first_trajectory;
  for (const store::TrajectoryRecord& trajectory : trajectories) {
    PTXBENCH_TRY(load_trajectory(*run, trajectory, number++, configured, model));
    model.ends.push_back(EndRecord{series_name(trajectory.key), trajectory.key.problem,
                                   trajectory.key.prompt_variant, trajectory.exit_reason});
  }
  return model;
}

util::Expected<RunModel> load_runs(std::span<const fs::path> run_dirs) {
  RunModel merged;
  std::vector<fs::path> seen;
  for (const fs::path& dir : run_dirs) {
    std::error_code error;
    fs::path folder = fs::weakly_canonical(dir, error);
    if (error)
      folder = dir.lexically_normal();
    if (std::find(seen.begin(), seen.end(), folder) != seen.end()) {
      merged.repeated.push_back(dir.string());
      continue;
    }
    seen.push_back(std::move(folder));
    PTXBENCH_TRY_ASSIGN(auto one, load_run(dir, merged.n_trajectories));
    merged.sources.push_back(one.sources.front());
    merged.n_trajectories += one.n_trajectories;
    merged.turns.insert(merged.turns.end(), one.turns.begin(), one.turns.end());
    merged.calls.insert(merged.calls.end(), one.calls.begin(), one.calls.end());
    merged.spend.insert(merged.spend.end(), one.spend.begin(), one.spend.end());
    merged.ends.insert(merged.ends.end(), one.ends.begin(), one.ends.end());
  }
  return merged;
}

util::Status require_turns(const RunModel& model) {
  if (!model.turns.empty())
    return util::Ok{};
  std::string where;
  for (const std::string& source : model.sources)
    where += (where.empty() ? "" : ", ") + source;
  return util::make_error(
      util::ErrorKind::invalid_input,
      fmt::format("nothing to report: {} hold{} no finished turn ({} trajectories)", where,
                  model.sources.size() == 1 ? "s" : "", model.n_trajectories));
}

} // namespace ptxbench::report
