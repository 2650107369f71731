#include "adapt/collect.hpp"

#include "adapt/dataset.hpp"
#include "report/model.hpp"
#include "store/run_store.hpp"
#include "store/stored_version.hpp"
#include "trace/json_io.hpp"
#include "util/hash.hpp"
#include "util/json_reader.hpp"

#include <algorithm>
#include <fmt/core.h>
#include <functional>
#include <map>

namespace ptxbench::adapt {
namespace {

namespace fs = std::filesystem;

// One trajectory that passed the filters, with its finished turns below max_turn.
struct TrajectoryView {
  const fs::path& run_dir;
  const std::string& arch;
  const store::TrajectoryRecord& trajectory;
  const store::TrajectoryPrompts& prompts;
  std::vector<store::FinishedTurn> turns;
};
using TrajectoryVisitor = std::function<void(const TrajectoryView&)>;

struct Walk {
  Json sources = Json::array();
  std::vector<std::string> warnings;
};

bool selected(const std::vector<std::string>& allowed, const std::string& value) {
  return allowed.empty() || std::find(allowed.begin(), allowed.end(), value) != allowed.end();
}

// The "arch" of the run's stored plan ("" when the plan names none), read from the run store
// another process wrote: a wrong type is an error naming the JSON path, not a missing arch.
util::Expected<std::string> configured_arch(const fs::path& run_dir,
                                            const std::string& config_json) {
  const std::string origin = run_dir.string() + ": stored run config";
  PTXBENCH_TRY_ASSIGN(auto config, trace::parse_json_text(config_json, origin));
  util::JsonReader in(origin);
  std::string arch;
  if (in.expect_object(config, "$"))
    arch = in.optional_string(config, "$", "arch", util::Emptiness::allowed).value_or("");
  return in.finish(std::move(arch));
}

util::Status check_schema(const fs::path& run_dir) {
  PTXBENCH_TRY_ASSIGN(auto version, store::stored_schema_version(run_dir));
  if (version == store::RunStore::kSchemaVersion)
    return util::Ok{};
  return util::make_error(
      util::ErrorKind::invalid_input,
      fmt::format("{}: run store schema version {}, this build reads version {} (collect never "
                  "migrates a run; open it with the matching ptxbench build)",
                  run_dir.string(), version, store::RunStore::kSchemaVersion));
}

// nullopt when the trajectory is finished; otherwise why it is not.
util::Expected<std::optional<std::string>> unfinished_reason(store::RunStore& run,
                                                             const store::TrajectoryRecord& t) {
  if (t.status == store::TrajectoryStatus::running)
    return std::optional<std::string>("running");
  PTXBENCH_TRY_ASSIGN(auto open, run.count_turns(t.id, store::TurnState::open));
  if (open > 0)
    return std::optional<std::string>("has an open turn");
  return std::optional<std::string>();
}

util::Status visit_trajectory(store::RunStore& run, const fs::path& run_dir,
                              const std::string& arch, const store::TrajectoryRecord& t,
                              const SourceFilter& filter, const TrajectoryVisitor& visit) {
  PTXBENCH_TRY_ASSIGN(auto prompts, run.prompts(t.id));
  PTXBENCH_TRY_ASSIGN(auto turns, run.finished_turns(t.id));
  std::erase_if(turns, [&](const store::FinishedTurn& turn) {
    return filter.max_turn && turn.index >= *filter.max_turn;
  });
  const store::TrajectoryPrompts none;
  visit(TrajectoryView{run_dir, arch, t, prompts ? *prompts : none, std::move(turns)});
  return util::Ok{};
}

util::Status walk_run(const fs::path& run_dir, const SourceFilter& filter,
                      const TrajectoryVisitor& visit, Walk& walk) {
  PTXBENCH_TRY(check_schema(run_dir));
  PTXBENCH_TRY_ASSIGN(auto run, store::RunStore::open_existing(run_dir));
  PTXBENCH_TRY_ASSIGN(auto trajectories, run->trajectories());
  PTXBENCH_TRY_ASSIGN(auto configured, configured_arch(run_dir, run->info().config_json));
  const std::string& arch = configured;
  std::int64_t used = 0;
  Json skipped = Json::array();
  for (const store::TrajectoryRecord& t : trajectories) {
    if (!selected(filter.problems, t.key.problem) ||
        !selected(filter.variants, t.key.prompt_variant))
      continue;
    PTXBENCH_TRY_ASSIGN(auto reason, unfinished_reason(*run, t));
    if (reason) {
      std::string what = fmt::format("{}: trajectory {} {} (the run is still being written)",
                                     run_dir.string(), store::to_string(t.key), *reason);
      if (filter.unfinished == Unfinished::refuse)
        return util::make_error(util::ErrorKind::invalid_input, what + "; --strict refuses it");
      walk.warnings.push_back(what + "; skipped");
      skipped.push_back(to_json(t.key));
      continue;
    }
    PTXBENCH_TRY(visit_trajectory(*run, run_dir, arch, t, filter, visit));
    ++used;
  }
  walk.sources.push_back(Json{{"run_dir", run_dir.string()},
                              {"config_sha256", util::sha256_hex(run->info().config_json)},
                              {"schema_version", store::RunStore::kSchemaVersion},
                              {"arch", arch},
                              {"trajectories", used},
                              {"skipped_unfinished", std::move(skipped)}});
  return util::Ok{};
}

util::Expected<Walk> walk_runs(const SourceFilter& filter, const TrajectoryVisitor& visit) {
  if (filter.run_dirs.empty())
    return util::make_error(util::ErrorKind::invalid_input, "no run directory given");
  Walk walk;
  for (const fs::path& run_dir : filter.run_dirs)
    PTXBENCH_TRY(walk_run(run_dir, filter, visit, walk));
  return walk;
}

Json filter_json(const SourceFilter& filter) {
  return Json{{"variants", filter.variants},
              {"problems", filter.problems},
              {"max_turn", filter.max_turn ? Json(*filter.max_turn) : Json(nullptr)},
              {"unfinished", filter.unfinished == Unfinished::skip ? "skip" : "refuse"}};
}

const store::StoredEvaluation* last_evaluation(const store::FinishedTurn& turn) {
  return turn.evaluations.empty() ? nullptr : &turn.evaluations.back();
}

FailureRecord make_failure(const TrajectoryView& view, const store::FinishedTurn& turn,
                           std::string source) {
  FailureRecord r;
  r.id = util::sha256_hex(source);
  r.run_dir = view.run_dir.string();
  r.trajectory_key = view.trajectory.key;
  r.turn = turn.index;
  r.arch = view.arch;
  r.category = std::string(store::to_string(turn.category));
  r.kernel_source = std::move(source);
  r.feedback = turn.feedback.value_or("");
  r.system_prompt = view.prompts.system;
  r.task_prompt = view.prompts.task;
  return r;
}

CorrectRecord make_correct(const TrajectoryView& view, const store::FinishedTurn& turn) {
  CorrectRecord r;
  r.kernel_source = turn.kernel_source.value_or("");
  r.id = util::sha256_hex(r.kernel_source);
  r.run_dir = view.run_dir.string();
  r.trajectory_key = view.trajectory.key;
  r.turn = turn.index;
  r.arch = view.arch;
  r.reply = turn.reply.value_or("");
  if (const auto* evaluation = last_evaluation(turn)) {
    r.speedup = evaluation->speedup;
    r.target_executed = target_executed(evaluation->static_verdict, evaluation->dynamic_verdict);
  }
  r.system_prompt = view.prompts.system;
  r.task_prompt = view.prompts.task;
  return r;
}

// Records in first-seen order, one per id; `seen` counts every occurrence.
template <typename Record> class Distinct {
public:
  void add(Record record) {
    ++m_occurrences;
    auto [it, fresh] = m_index.try_emplace(record.id, m_records.size());
    if (fresh) {
      m_records.push_back(std::move(record));
      return;
    }
    if constexpr (requires { record.occurrences; })
      ++m_records[it->second].occurrences;
  }
  const std::vector<Record>& records() const { return m_records; }
  std::int64_t occurrences() const { return m_occurrences; }

private:
  std::vector<Record> m_records;
  std::map<std::string, std::size_t> m_index;
  std::int64_t m_occurrences = 0;
};

// The failing kernel of a turn: the extracted candidate, or for an extraction failure (no
// candidate) the reply the model wrote.
std::optional<std::string> failing_source(const store::FinishedTurn& turn) {
  if (turn.kernel_source && !turn.kernel_source->empty())
    return turn.kernel_source;
  if (turn.category == store::TurnCategory::extraction && turn.reply && !turn.reply->empty())
    return turn.reply;
  return std::nullopt;
}

Composition record_counts(const std::vector<FailureRecord>& records) {
  Composition counts;
  for (const FailureRecord& record : records)
    ++counts[composition_key(record)];
  return counts;
}

bool better(const CorrectRecord& a, const CorrectRecord& b) {
  return a.speedup.value_or(-1.0) > b.speedup.value_or(-1.0);
}

template <typename Record>
util::Expected<CollectResult> write_collection(const Distinct<Record>& records, Walk walk,
                                               Json manifest, const fs::path& out,
                                               std::string_view file, std::string_view what) {
  if (records.records().empty())
    return util::make_error(
        util::ErrorKind::invalid_input,
        fmt::format("no {} match the filters in {} run director{}; nothing written", what,
                    walk.sources.size(), walk.sources.size() == 1 ? "y" : "ies"));
  const std::string text = to_jsonl(records.records());
  manifest["sources"] = std::move(walk.sources);
  manifest["files"] = Json{{std::string(file), util::sha256_hex(text)}};
  PTXBENCH_TRY(write_if_changed(out / file, text));
  PTXBENCH_TRY(write_if_changed(out / "manifest.json", manifest_text(manifest)));
  return CollectResult{static_cast<std::int64_t>(records.records().size()), records.occurrences(),
                       std::move(walk.warnings), out / file};
}

} // namespace

std::optional<bool> target_executed(const std::optional<std::string>& static_verdict,
                                    const std::optional<std::string>& dynamic_verdict) {
  switch (report::target_state_from_verdicts(static_verdict, dynamic_verdict)) {
  case report::TargetState::present:
    return true;
  case report::TargetState::not_executed:
  case report::TargetState::absent:
    return false;
  case report::TargetState::unknown:
    return std::nullopt;
  }
  return std::nullopt;
}

util::Expected<CollectResult> collect_failures(const FixitCollectOptions& options,
                                               const fs::path& dir) {
  Distinct<FailureRecord> failures;
  Composition counts;
  PTXBENCH_TRY_ASSIGN(
      auto walk, walk_runs(options.source, [&](const TrajectoryView& view) {
        for (const store::FinishedTurn& turn : view.turns) {
          if (turn.counting != store::Counting::counted ||
              !selected(options.categories, std::string(store::to_string(turn.category))))
            continue;
          auto source = failing_source(turn);
          if (!source)
            continue;
          FailureRecord record = make_failure(view, turn, std::move(*source));
          ++counts[composition_key(record)];
          failures.add(std::move(record));
        }
      }));
  Json manifest{{"stage", "collect"},
                {"kind", "fixit"},
                {"filters", filter_json(options.source)},
                {"categories", options.categories},
                {"records", failures.records().size()},
                {"occurrences", failures.occurrences()},
                {"counts", composition_json(record_counts(failures.records()))},
                {"occurrences_by_problem_category_turn", composition_json(counts)}};
  return write_collection(failures, std::move(walk), std::move(manifest),
                          stage_dir(dir, DatasetKind::fixit, "collect"), "failures.jsonl",
                          "failed counted turns");
}

util::Expected<CollectResult> collect_correct(const KernelGenCollectOptions& options,
                                              const fs::path& dir) {
  Distinct<CorrectRecord> correct;
  PTXBENCH_TRY_ASSIGN(auto walk, walk_runs(options.source, [&](const TrajectoryView& view) {
                        std::vector<CorrectRecord> kept;
                        for (const store::FinishedTurn& turn : view.turns) {
                          if (turn.counting != store::Counting::counted ||
                              turn.category != store::TurnCategory::correct || !turn.kernel_source)
                            continue;
                          CorrectRecord record = make_correct(view, turn);
                          if (options.target == TargetFilter::executed_only &&
                              record.target_executed != true)
                            continue;
                          kept.push_back(std::move(record));
                        }
                        if (options.per_trajectory == PerTrajectory::best && !kept.empty())
                          kept = {*std::min_element(kept.begin(), kept.end(), better)};
                        for (CorrectRecord& record : kept)
                          correct.add(std::move(record));
                      }));
  Json manifest{{"stage", "collect"},
                {"kind", "kernelgen"},
                {"filters", filter_json(options.source)},
                {"target_only", options.target == TargetFilter::executed_only},
                {"best_per_trajectory", options.per_trajectory == PerTrajectory::best},
                {"records", correct.records().size()},
                {"occurrences", correct.occurrences()}};
  return write_collection(correct, std::move(walk), std::move(manifest),
                          stage_dir(dir, DatasetKind::kernelgen, "collect"), "correct.jsonl",
                          "correct counted turns");
}

} // namespace ptxbench::adapt
