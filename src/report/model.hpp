// The in-memory model of one or more runs that every report metric is computed from: one
// record per finished turn, with only the fields the paper's metrics read. Loading from run
// stores is the only side effect of the report module; everything after it is pure.
#pragma once

#include "store/enums.hpp"
#include "store/records.hpp"
#include "util/enum_table.hpp"
#include "util/error.hpp"

#include <array>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ptxbench::report {

// Whether a turn's kernel executed a target instruction at runtime. `unknown` means the
// evidence is missing (no evaluation, profiler failure, no rule): never a positive.
enum class TargetState : std::uint8_t { present = 1, not_executed = 2, absent = 3, unknown = 4 };

struct TargetStateInfo {
  TargetState state;
  std::string_view name;
};
inline constexpr std::array kTargetStates{
    TargetStateInfo{TargetState::present, "present"},
    TargetStateInfo{TargetState::not_executed, "not_executed"},
    TargetStateInfo{TargetState::absent, "absent"},
    TargetStateInfo{TargetState::unknown, "unknown"},
};
consteval bool target_states_complete() {
  for (std::size_t i = 0; i < kTargetStates.size(); ++i)
    if (static_cast<std::size_t>(kTargetStates[i].state) != i + 1)
      return false;
  return true;
}
static_assert(target_states_complete(), "kTargetStates must list every state in value order");
static_assert(util::no_enumerator_after<TargetState, kTargetStates.size()>(),
              "kTargetStates lacks a row for an enumerator after its last");

constexpr std::string_view to_string(TargetState state) {
  return kTargetStates[static_cast<std::size_t>(state) - 1].name;
}

// The target state of an evaluation from its stored verdict names: a static "absent" (the
// binary holds no target instruction) is a known negative; otherwise the dynamic verdict
// decides, and anything else (missing, "unknown", "no_rule", a name this build does not
// know) is unknown.
TargetState target_state_from_verdicts(const std::optional<std::string>& static_verdict,
                                       const std::optional<std::string>& dynamic_verdict);

// One finished turn. `trajectory` is unique across all loaded runs; `turn_index` is the
// store's 0-based index (infra turns included), so metrics derive the counted-turn ordinal.
// `gpu` is the GPU of the turn's trajectory (trajectory_gpu in load.cpp); empty when unknown.
//
// `model` is the report's series: the registry name, or "<model> · <condition>" for a trajectory
// run under a named plan condition (agent/plan.hpp), so that every table and figure has one row
// or curve per model and condition (paper Table 4, Figure 10). `reasoning_tokens` sums the
// reasoning tokens of the turn's replied model calls (paper Figure 7).
struct TurnRecord {
  std::string model;
  std::string problem;
  std::string variant;
  std::string language; // the candidate language, "cuda" or "triton"
  std::int64_t trajectory = 0;
  std::int64_t sample = 0;
  std::int64_t turn_index = 0;
  store::TurnCategory category = store::TurnCategory::infra;
  store::Counting counting = store::Counting::counted;
  std::optional<double> speedup;
  TargetState target = TargetState::unknown;
  std::string gpu;
  std::int64_t reasoning_tokens = 0;
  std::string condition = {}; // the plan condition; empty in a run without conditions
};

// The series a trajectory belongs to: its model, then " · condition" when it has one.
std::string series_name(const store::TrajectoryKey& key);

// Whether a model-call attempt got a reply (error fields empty) or failed (HTTP, transport...).
enum class CallOutcome : std::uint8_t { replied = 1, failed = 2 };

// One model-call attempt made for a finished turn.
struct CallRecord {
  std::string model; // the trajectory's model (registry name)
  std::string gpu;
  std::int64_t trajectory = 0;
  CallOutcome outcome = CallOutcome::replied;
  std::int64_t reasoning_tokens = 0;
};

// What one trajectory spent: every attempt, failed ones and those of abandoned turns included.
struct SpendRecord {
  std::string model;
  std::string gpu;
  std::int64_t trajectory = 0;
  store::UsageTotals totals;
};

// How one trajectory ended: its exit reason, or none while it is unfinished (resumable).
// Every trajectory has one, also those without finished turns (a first call that overflowed).
struct EndRecord {
  std::string model;
  std::string problem;
  std::string variant;
  std::optional<store::ExitReason> exit;
};

// The GPU column of a trajectory that never reached a GPU (every evaluated turn static_only).
inline constexpr std::string_view kNoGpu = "none (static-only)";

struct RunModel {
  std::vector<std::string> sources;  // the run directories, as given
  std::vector<std::string> repeated; // directories given again (same folder): counted once
  std::int64_t n_trajectories = 0;   // all trajectories, also those without finished turns
  std::vector<TurnRecord> turns;
  std::vector<CallRecord> calls;  // by trajectory, turn, attempt
  std::vector<SpendRecord> spend; // one per trajectory
  std::vector<EndRecord> ends;    // one per trajectory
};

// The GPU a trajectory ran on: the hardware its evaluations recorded (FlashInfer-Trace
// environment.hardware; "unknown…" means no GPU was used); kNoGpu when none did and a turn
// stopped after the static check (static_only: no GPU took part, whatever the configuration
// names); otherwise `configured` (the run configuration's "gpu", else its "arch"); empty when
// neither says.
std::string trajectory_gpu(std::span<const store::FinishedTurn> turns, std::string_view configured);
// The run configuration's "gpu" string field, else its "arch"; empty when it has neither or is
// not a JSON object.
std::string configured_gpu(std::string_view config_json);

// Reads every finished turn of the run store in `run_dir`; trajectory numbers start at
// `first_trajectory`. not_found with a clear message for a missing folder or database.
util::Expected<RunModel> load_run(const std::filesystem::path& run_dir,
                                  std::int64_t first_trajectory = 0);
// Several runs (e.g. one per model) merged into one model.
util::Expected<RunModel> load_runs(std::span<const std::filesystem::path> run_dirs);
// invalid_input naming the sources when the model holds no finished turn.
util::Status require_turns(const RunModel& model);

} // namespace ptxbench::report
