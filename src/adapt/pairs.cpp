#include "adapt/pairs.hpp"

#include "adapt/collect.hpp"
#include "adapt/dataset.hpp"
#include "store/run_store.hpp"
#include "util/hash.hpp"

#include <algorithm>
#include <fmt/core.h>
#include <map>
#include <set>

namespace ptxbench::adapt {
namespace {

namespace fs = std::filesystem;

struct Candidate {
  std::string kernel;
  std::int64_t turn = 0;
  std::optional<double> speedup;
  std::optional<bool> target_executed;
};

fs::path failures_file(const fs::path& dir) {
  fs::path balanced = stage_dir(dir, DatasetKind::fixit, "balance") / "selected.jsonl";
  std::error_code ec;
  if (fs::exists(balanced, ec))
    return balanced;
  return stage_dir(dir, DatasetKind::fixit, "collect") / "failures.jsonl";
}

bool passes(const Candidate& c, const PairsOptions& options) {
  if (options.require_target && c.target_executed != true)
    return false;
  if (options.min_speedup && !(c.speedup && *c.speedup >= *options.min_speedup))
    return false;
  return true;
}

std::vector<Candidate> candidates(const std::vector<store::FinishedTurn>& turns,
                                  const PairsOptions& options) {
  std::vector<Candidate> found;
  for (const store::FinishedTurn& turn : turns) {
    if (turn.counting != store::Counting::counted ||
        turn.category != store::TurnCategory::correct || !turn.kernel_source)
      continue;
    Candidate c{*turn.kernel_source, turn.index, std::nullopt, std::nullopt};
    if (!turn.evaluations.empty()) {
      const store::StoredEvaluation& evaluation = turn.evaluations.back();
      c.speedup = evaluation.speedup;
      c.target_executed = target_executed(evaluation.static_verdict, evaluation.dynamic_verdict);
    }
    if (passes(c, options))
      found.push_back(std::move(c));
  }
  return found;
}

std::vector<Candidate> choose(std::vector<Candidate> found, PairMode mode) {
  if (found.empty() || mode == PairMode::all)
    return found;
  if (mode == PairMode::latest)
    return {found.back()};
  auto best = std::min_element(found.begin(), found.end(), [](const auto& a, const auto& b) {
    return a.speedup.value_or(-1.0) > b.speedup.value_or(-1.0);
  });
  return {*best};
}

PairRecord make_pair(const FailureRecord& failure, const Candidate& c, const fs::path& run_dir,
                     const store::TrajectoryKey& key) {
  PairRecord r;
  r.id = util::sha256_hex(failure.id + util::sha256_hex(c.kernel));
  r.failure = failure;
  r.repaired_kernel = c.kernel;
  r.repair_run_dir = run_dir.string();
  r.repair_trajectory_key = key;
  r.repair_turn = c.turn;
  r.speedup = c.speedup;
  r.target_executed = c.target_executed;
  r.teacher_model = key.model;
  return r;
}

// The repaired kernels of one task's trajectory; empty with a warning when it is unfinished.
util::Expected<std::vector<Candidate>> task_candidates(store::RunStore& run, const RepairTask& task,
                                                       const PairsOptions& options,
                                                       std::vector<std::string>& warnings) {
  PTXBENCH_TRY_ASSIGN(auto trajectory, run.find_trajectory(task.trajectory_key));
  if (!trajectory)
    return util::make_error(util::ErrorKind::not_found,
                            fmt::format("repair trajectory {} (failure {}) is not in {}",
                                        store::to_string(task.trajectory_key), task.failure_id,
                                        run.path().string()));
  PTXBENCH_TRY_ASSIGN(auto open, run.count_turns(trajectory->id, store::TurnState::open));
  if (trajectory->status == store::TrajectoryStatus::running || open > 0) {
    warnings.push_back(fmt::format("repair trajectory {} is still being written; skipped",
                                   store::to_string(task.trajectory_key)));
    return std::vector<Candidate>{};
  }
  PTXBENCH_TRY_ASSIGN(auto turns, run.finished_turns(trajectory->id));
  return choose(candidates(turns, options), options.mode);
}

Json options_json(const PairsOptions& options) {
  return Json{{"mode", to_string(options.mode)},
              {"require_target", options.require_target},
              {"min_speedup", options.min_speedup ? Json(*options.min_speedup) : Json(nullptr)}};
}

// The stage's inputs: the failures (balanced when balance ran) and the repair tasks.
struct PairsInput {
  fs::path repair;
  fs::path failures_path;
  std::vector<FailureRecord> failures;
  std::vector<RepairTask> tasks;
};

util::Expected<PairsInput> read_input(const fs::path& dir) {
  PairsInput input{stage_dir(dir, DatasetKind::fixit, "repair"), failures_file(dir), {}, {}};
  PTXBENCH_TRY_ASSIGN(auto failures,
                      read_jsonl<FailureRecord>(input.failures_path, failure_from_json));
  PTXBENCH_TRY_ASSIGN(auto tasks,
                      read_jsonl<RepairTask>(input.repair / "tasks.jsonl", repair_task_from_json));
  input.failures = std::move(failures);
  input.tasks = std::move(tasks);
  return input;
}

// Every task's pairs in task order, one per pair id; counts tasks and repaired failures.
util::Expected<std::vector<PairRecord>> pair_tasks(store::RunStore& run, const PairsInput& input,
                                                   const PairsOptions& options,
                                                   PairsResult& result) {
  std::map<std::string, const FailureRecord*> by_id;
  for (const FailureRecord& f : input.failures)
    by_id[f.id] = &f;
  std::vector<PairRecord> pairs;
  std::set<std::string> seen;
  for (const RepairTask& task : input.tasks) {
    auto failure = by_id.find(task.failure_id);
    if (failure == by_id.end())
      return util::make_error(util::ErrorKind::invalid_input,
                              fmt::format("{}: failure {} is not in {}",
                                          (input.repair / "tasks.jsonl").string(), task.failure_id,
                                          input.failures_path.string()));
    PTXBENCH_TRY_ASSIGN(auto found, task_candidates(run, task, options, result.warnings));
    ++result.tasks;
    if (!found.empty())
      ++result.repaired;
    for (const Candidate& c : found) {
      PairRecord pair = make_pair(*failure->second, c, input.repair / "run", task.trajectory_key);
      if (seen.insert(pair.id).second)
        pairs.push_back(std::move(pair));
    }
  }
  return pairs;
}

util::Status write_pairs(const fs::path& dir, const PairsInput& input, const PairsOptions& options,
                         const std::vector<PairRecord>& pairs, PairsResult& result) {
  PTXBENCH_TRY_ASSIGN(auto tasks_sha, file_sha256(input.repair / "tasks.jsonl"));
  PTXBENCH_TRY_ASSIGN(auto failures_sha, file_sha256(input.failures_path));
  Composition counts;
  for (const PairRecord& pair : pairs)
    ++counts[composition_key(pair.failure)];
  const std::string text = to_jsonl(pairs);
  const Json manifest{{"stage", "pairs"},
                      {"options", options_json(options)},
                      {"inputs", Json{{"tasks.jsonl", tasks_sha},
                                      {input.failures_path.filename().string(), failures_sha}}},
                      {"tasks", result.tasks},
                      {"repaired_failures", result.repaired},
                      {"pairs", pairs.size()},
                      {"counts", composition_json(counts)},
                      {"files", Json{{"pairs.jsonl", util::sha256_hex(text)}}}};
  const fs::path out = stage_dir(dir, DatasetKind::fixit, "pairs");
  PTXBENCH_TRY(write_if_changed(out / "pairs.jsonl", text));
  PTXBENCH_TRY(write_if_changed(out / "manifest.json", manifest_text(manifest)));
  result.pairs = static_cast<std::int64_t>(pairs.size());
  result.pairs_file = out / "pairs.jsonl";
  return util::Ok{};
}

} // namespace

std::string_view to_string(PairMode mode) {
  switch (mode) {
  case PairMode::best:
    return "best";
  case PairMode::latest:
    return "latest";
  case PairMode::all:
    return "all";
  }
  return "best";
}

std::optional<PairMode> pair_mode_from_string(std::string_view name) {
  for (PairMode mode : {PairMode::best, PairMode::latest, PairMode::all})
    if (to_string(mode) == name)
      return mode;
  return std::nullopt;
}

util::Expected<PairsResult> build_pairs(const fs::path& dir, const PairsOptions& options) {
  PTXBENCH_TRY_ASSIGN(auto input, read_input(dir));
  PTXBENCH_TRY_ASSIGN(auto run, store::RunStore::open_existing(input.repair / "run"));
  PairsResult result;
  PTXBENCH_TRY_ASSIGN(auto pairs, pair_tasks(*run, input, options, result));
  if (pairs.empty())
    return util::make_error(util::ErrorKind::invalid_input,
                            fmt::format("none of {} repair tasks has a repaired kernel that "
                                        "passes the options; nothing written",
                                        result.tasks));
  PTXBENCH_TRY(write_pairs(dir, input, options, pairs, result));
  return result;
}

} // namespace ptxbench::adapt
