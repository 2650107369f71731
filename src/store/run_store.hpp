// The run store: one SQLite database per run directory holding everything a run produced —
// the run's configuration, trajectories, turns, every model-call attempt, evaluations, and
// kernel sources, replies and feedback (deduplicated by SHA-256).
//
// Problem: a benchmark run makes thousands of paid model calls and GPU evaluations over hours
// or days, and the process can die at any moment (OOM, node preemption, Ctrl-C, SIGKILL).
// Nothing already paid for may be lost, and a resumed run must neither repeat a finished turn
// nor build on a half-written one.
//
// Approach: every write is its own committed transaction, made as the event happens (WAL,
// synchronous=FULL, BEGIN IMMEDIATE so concurrent writers queue on the busy timeout instead
// of failing). A turn is a row that is `open` from begin_turn() until finish_turn() commits its
// outcome; model calls and evaluations attach to the open turn as they happen. Resume reads
// the finished turns of a trajectory, in index order, and rebuilds the conversation from
// them; begin_turn() then marks any turn still `open` (cut off by a crash) as `abandoned` and
// starts the next index. Abandoned turns keep their model-call rows, so the money spent on
// them is still accounted for, but they never reach the conversation or the statistics.
//
// Invariants: finished turns of a trajectory have indexes 0..n-1 without gaps; at most one
// live (open or finished) turn per (trajectory, index); a finished turn's outcome, reply,
// kernel and feedback were committed together; a source row is immutable; stored enums use the
// explicit values of enums.hpp, mirrored in table enum_value. The store is safe to share
// between threads (one connection, serialised), and several processes or connections may
// write the same database (each trajectory should have one writer).
#pragma once

#include "store/records.hpp"
#include "util/error.hpp"

#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ptxbench::store {

namespace detail {
class Connection;
}

// The wall clock, behind an interface so that timestamps come from one place.
class Clock {
public:
  virtual ~Clock() = default;
  virtual TimePoint now() const = 0;
};
const Clock& system_clock();

// "2026-05-01T12:34:56.789Z"
std::string format_utc(TimePoint);

// Where resume stands for one trajectory.
struct ResumePoint {
  std::vector<FinishedTurn> finished; // in index order
  std::int64_t next_index = 0;        // the index begin_turn() will give
  std::int64_t counted_turns = 0;     // finished turns that used up budget
};

class RunStore {
public:
  static constexpr std::string_view kDatabaseName = "run.sqlite";
  static constexpr int kSchemaVersion = 8;

  // Opens `run_dir`/run.sqlite, creating the folder and database when absent; a new database
  // records `info` (config and version); an existing one keeps what it has, and info() says so.
  static util::Expected<std::unique_ptr<RunStore>> open(const std::filesystem::path& run_dir,
                                                        const RunInfo& info,
                                                        const Clock& clock = system_clock());
  // Opens an existing run (resume); not_found when the folder holds no run database.
  static util::Expected<std::unique_ptr<RunStore>>
  open_existing(const std::filesystem::path& run_dir, const Clock& clock = system_clock());

  ~RunStore();
  RunStore(const RunStore&) = delete;
  RunStore& operator=(const RunStore&) = delete;

  const RunInfo& info() const { return m_info; }
  const std::filesystem::path& path() const { return m_path; }

  // The trajectory with this key, created (running) when new.
  util::Expected<TrajectoryId> open_trajectory(const TrajectoryKey& key);
  util::Expected<std::optional<TrajectoryRecord>> find_trajectory(const TrajectoryKey& key);
  util::Expected<std::vector<TrajectoryRecord>> trajectories();
  util::Status finish_trajectory(TrajectoryId id, ExitReason reason);
  // The system and task prompts the trajectory opened with. Set once: a second call keeps the
  // first prompts (resume continues the conversation it started) and returns them.
  util::Expected<TrajectoryPrompts> set_prompts(TrajectoryId id, const TrajectoryPrompts& prompts);
  // nullopt when the trajectory has no prompts recorded.
  util::Expected<std::optional<TrajectoryPrompts>> prompts(TrajectoryId id);

  // The resolved settings of a model (registry entry without secrets) from now on, and why
  // ("run started", "override on resume"); turns begun later refer to them.
  util::Status record_model_settings(std::string_view model, std::string_view settings_json,
                                     std::string_view reason);
  // The latest settings recorded for `model`; nullopt for none (a run made before they were kept).
  util::Expected<std::optional<ModelSettingsRecord>> model_settings(std::string_view model);
  util::Expected<std::optional<ModelSettingsRecord>> model_settings_by_id(std::int64_t id);

  // Starts the next turn of a running trajectory, abandoning a turn left open by a crash; the
  // turn refers to the latest settings recorded for the trajectory's model.
  util::Expected<TurnHandle> begin_turn(TrajectoryId id);
  util::Status record_model_call(TurnId turn, const ModelCallRecord& call);
  // An attempt as it starts: an in_flight row (attempt, provider, model, request hash, start;
  // no usage) that end_model_call() completes. One never ended — the process died during the
  // call — stays in flight: usage() counts it as an attempt whose tokens are unknown.
  util::Expected<ModelCallId> begin_model_call(TurnId turn, const ModelCallRecord& call);
  util::Status end_model_call(ModelCallId id, const ModelCallRecord& call);
  util::Status record_evaluation(TurnId turn, const EvaluationRecord& evaluation);
  // Commits the outcome and its texts in one transaction; the turn must be open.
  util::Status finish_turn(TurnId turn, const TurnOutcome& outcome);

  // Stores `text` once under its SHA-256 (returned); a second call with the same text is free.
  util::Expected<std::string> record_source(std::string_view text);
  util::Expected<std::optional<std::string>> source(std::string_view sha256);

  // The finished turns of a trajectory in index order, with their evaluations; open and
  // abandoned turns are not returned. Resume builds on exactly these.
  util::Expected<std::vector<FinishedTurn>> finished_turns(TrajectoryId id);
  util::Expected<ResumePoint> resume_point(TrajectoryId id);
  util::Expected<std::vector<ModelCallRecord>> model_calls(TurnId turn);
  util::Expected<std::int64_t> count_turns(TrajectoryId id, TurnState state);
  // Totals over every attempt of the trajectory, abandoned turns included (money spent).
  util::Expected<UsageTotals> usage(TrajectoryId id);

private:
  RunStore(std::unique_ptr<detail::Connection> db, std::filesystem::path path, const Clock& clock);
  util::Status load_or_create_run(const RunInfo& info);
  util::Expected<std::string> put_source(std::string_view text); // inside a transaction
  util::Status write_call(std::optional<ModelCallId> id, TurnId turn, const ModelCallRecord& call,
                          CallState state);
  util::Expected<std::optional<std::string>> put_optional(const std::optional<std::string>&);
  util::Expected<std::vector<StoredEvaluation>> evaluations_of(TurnId turn);
  std::string now() const;

  std::unique_ptr<detail::Connection> m_db;
  std::filesystem::path m_path;
  const Clock& m_clock;
  RunInfo m_info;
  std::mutex m_mutex;
};

} // namespace ptxbench::store
