// The run store's persisted enums. Values are explicit and never reused; each enum has one
// descriptor table (value, name) that is checked complete and in value order at compile time,
// and the tables are also written into the database (table enum_value) so that SQL readers can
// join names.
#pragma once

#include "util/enum_table.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace ptxbench::store {

template <typename Enum> struct EnumInfo {
  Enum value;
  std::string_view name;
};

// True when row i of `table` holds the value i + 1 and the enum names no value N + 1: a new
// enumerator without a row, or rows out of order, fail the static_assert next to the table.
template <typename Enum, std::size_t N>
consteval bool enum_table_complete(const std::array<EnumInfo<Enum>, N>& table) {
  for (std::size_t i = 0; i < N; ++i) {
    if (static_cast<std::size_t>(table[i].value) != i + 1)
      return false;
  }
  return util::no_enumerator_after<Enum, N>();
}

// What a finished turn came to; the paper's error-transition categories plus infra.
enum class TurnCategory : std::uint8_t {
  compile = 1,        // did not compile or link
  runtime = 2,        // crashed, illegal access, sanitizer finding
  numerical = 3,      // ran, wrong numbers
  timeout = 4,        // ran past the turn's deadline
  extraction = 5,     // no candidate code in the reply
  banned_library = 6, // cuBLAS/cuDNN or another forbidden library
  correct = 7,        // passed every workload
  infra = 8,          // our side failed (model API, evaluator); not the model's fault
  static_only = 9,    // built and statically checked, GPU step not run here: neither correct
                      // nor wrong (CPU-only machines; agent/executor.hpp)
};
inline constexpr std::array<EnumInfo<TurnCategory>, 9> kTurnCategories{{
    {TurnCategory::compile, "compile"},
    {TurnCategory::runtime, "runtime"},
    {TurnCategory::numerical, "numerical"},
    {TurnCategory::timeout, "timeout"},
    {TurnCategory::extraction, "extraction"},
    {TurnCategory::banned_library, "banned_library"},
    {TurnCategory::correct, "correct"},
    {TurnCategory::infra, "infra"},
    {TurnCategory::static_only, "static_only"},
}};
static_assert(enum_table_complete(kTurnCategories));

// How the model's reply of a turn ended: as the model meant it, cut off at the output-token
// limit (the provider's finish/stop reason says so), or with nothing in it.
enum class ReplyEnd : std::uint8_t { complete = 1, truncated = 2, empty = 3 };
inline constexpr std::array<EnumInfo<ReplyEnd>, 3> kReplyEnds{{
    {ReplyEnd::complete, "complete"},
    {ReplyEnd::truncated, "truncated"},
    {ReplyEnd::empty, "empty"},
}};
static_assert(enum_table_complete(kReplyEnds));

// A model-call attempt is `in_flight` from its start until its end is recorded; one that stays
// in flight was cut off by a crash: it was paid for (or queued) but its tokens are unknown.
enum class CallState : std::uint8_t { in_flight = 1, ended = 2 };
inline constexpr std::array<EnumInfo<CallState>, 2> kCallStates{{
    {CallState::in_flight, "in_flight"},
    {CallState::ended, "ended"},
}};
static_assert(enum_table_complete(kCallStates));

// A turn row is `open` from begin_turn until finish_turn; an open turn found on resume was cut
// off by a crash and becomes `abandoned` (kept for its model-call costs, never replayed).
enum class TurnState : std::uint8_t { open = 1, finished = 2, abandoned = 3 };
inline constexpr std::array<EnumInfo<TurnState>, 3> kTurnStates{{
    {TurnState::open, "open"},
    {TurnState::finished, "finished"},
    {TurnState::abandoned, "abandoned"},
}};
static_assert(enum_table_complete(kTurnStates));

// Whether a finished turn uses up the trajectory's turn budget (infra failures do not).
enum class Counting : std::uint8_t { counted = 1, not_counted = 2 };
inline constexpr std::array<EnumInfo<Counting>, 2> kCountings{{
    {Counting::counted, "counted"},
    {Counting::not_counted, "not_counted"},
}};
static_assert(enum_table_complete(kCountings));

enum class TrajectoryStatus : std::uint8_t { running = 1, finished = 2 };
inline constexpr std::array<EnumInfo<TrajectoryStatus>, 2> kTrajectoryStatuses{{
    {TrajectoryStatus::running, "running"},
    {TrajectoryStatus::finished, "finished"},
}};
static_assert(enum_table_complete(kTrajectoryStatuses));

// Why a trajectory ended.
enum class ExitReason : std::uint8_t {
  target_met = 1,       // a correct kernel reached the target speedup
  turn_budget = 2,      // every counted turn was used
  context_overflow = 3, // the conversation no longer fits the model's context
  model_error = 4,      // the model API kept failing (retries exhausted) or refused the request
  infra_error = 5,      // the evaluator or the store kept failing
  cancelled = 6,        // stopped by the user
};
inline constexpr std::array<EnumInfo<ExitReason>, 6> kExitReasons{{
    {ExitReason::target_met, "target_met"},
    {ExitReason::turn_budget, "turn_budget"},
    {ExitReason::context_overflow, "context_overflow"},
    {ExitReason::model_error, "model_error"},
    {ExitReason::infra_error, "infra_error"},
    {ExitReason::cancelled, "cancelled"},
}};
static_assert(enum_table_complete(kExitReasons));

template <typename Enum, std::size_t N>
constexpr std::string_view enum_name(const std::array<EnumInfo<Enum>, N>& table, Enum value) {
  return table[static_cast<std::size_t>(value) - 1].name;
}

// The enumerator with persisted value `raw`, or nullopt for a value this build does not know.
template <typename Enum, std::size_t N>
constexpr std::optional<Enum> enum_from_value(const std::array<EnumInfo<Enum>, N>& table,
                                              std::int64_t raw) {
  if (raw < 1 || raw > static_cast<std::int64_t>(N))
    return std::nullopt;
  return table[static_cast<std::size_t>(raw) - 1].value;
}

constexpr std::string_view to_string(TurnCategory v) {
  return enum_name(kTurnCategories, v);
}
constexpr std::string_view to_string(TurnState v) {
  return enum_name(kTurnStates, v);
}
constexpr std::string_view to_string(Counting v) {
  return enum_name(kCountings, v);
}
constexpr std::string_view to_string(TrajectoryStatus v) {
  return enum_name(kTrajectoryStatuses, v);
}
constexpr std::string_view to_string(ExitReason v) {
  return enum_name(kExitReasons, v);
}

} // namespace ptxbench::store
