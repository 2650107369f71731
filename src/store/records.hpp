// The typed records the run store accepts and returns. Callers never see SQL: they hand
// these to RunStore and read them back.
#pragma once

#include "store/enums.hpp"
#include "trace/schema.hpp"
#include "util/error.hpp"

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace ptxbench::store {

using TimePoint = std::chrono::system_clock::time_point;

struct TrajectoryId {
  std::int64_t value = 0;
  friend bool operator==(TrajectoryId, TrajectoryId) = default;
};
struct TurnId {
  std::int64_t value = 0;
  friend bool operator==(TurnId, TurnId) = default;
};
struct ModelCallId {
  std::int64_t value = 0;
};

struct RunInfo {
  std::string config_json;      // the run's configuration, as given
  std::string ptxbench_version; // the build that created the run
  std::string created_at;       // ISO-8601 UTC, set by the store
};

// What identifies a trajectory across restarts: resume finds it again by this key.
struct TrajectoryKey {
  std::string model;          // registry name
  std::string problem;        // definition name
  std::string prompt_variant; // prompt tag
  std::int64_t sample = 0;    // 0-based index among trajectories with the same triple
  trace::Language language = trace::Language::cuda; // the candidate language
  // The plan condition (agent/plan.hpp) it ran under; empty in a run without conditions. The
  // samples of one (model, problem, variant) run on across conditions, so the four fields above
  // stay unique in a run.
  std::string condition = {};
  friend bool operator==(const TrajectoryKey&, const TrajectoryKey&) = default;
};

// "model/problem/variant/sample" (then "/condition" when there is one), the key as messages
// name it.
inline std::string to_string(const TrajectoryKey& key) {
  return key.model + "/" + key.problem + "/" + key.prompt_variant + "/" +
         std::to_string(key.sample) + (key.condition.empty() ? "" : "/" + key.condition);
}

struct TrajectoryRecord {
  TrajectoryId id;
  TrajectoryKey key;
  TrajectoryStatus status = TrajectoryStatus::running;
  std::optional<ExitReason> exit_reason;
  std::string created_at;
  std::optional<std::string> finished_at;
};

// The two opening messages of a trajectory's conversation.
struct TrajectoryPrompts {
  std::string system;
  std::string task;
  friend bool operator==(const TrajectoryPrompts&, const TrajectoryPrompts&) = default;
};

// One recorded state of a model's settings (model::settings_json) in a run.
struct ModelSettingsRecord {
  std::int64_t id = 0;
  std::string model;
  std::string settings_json;
  std::string reason;
  std::string recorded_at;
};

struct TurnHandle {
  TurnId id;
  std::int64_t index = 0; // 0-based position in the trajectory
};

// One HTTP attempt of a model call (a retried call is several rows). Error fields are empty on
// success; the error message must already be free of secrets.
struct ModelCallRecord {
  std::int64_t attempt = 1;
  std::string provider;
  std::string model;
  std::string request_sha256;
  TimePoint started_at{};
  double latency_ms = 0;
  std::int64_t input_tokens = 0;
  std::int64_t output_tokens = 0; // includes reasoning tokens
  std::int64_t reasoning_tokens = 0;
  double cost_usd = 0;
  std::optional<std::int64_t> http_status;
  std::optional<util::ErrorKind> error_kind;
  std::string error_message;
  std::string finish_reason;
  std::optional<std::string> reply;     // stored by hash in `source`
  std::optional<std::string> reasoning; // stored by hash in `source`
  CallState state = CallState::ended;
  // The server's own times (model::ServerTimings), when it reports them: latency_ms less both
  // is the time the request waited in the server's queue and in transfer.
  std::optional<double> server_prompt_ms;
  std::optional<double> server_generation_ms;
};

// One evaluation of a turn's kernel: the FlashInfer-Trace traces (one per workload) and the
// summary fields reports filter on. Verdicts are the producing module's names ("present"...).
struct EvaluationRecord {
  std::string kernel_source; // stored by hash in `source`
  std::vector<trace::Trace> traces;
  std::optional<double> speedup; // min over workloads, when every workload passed
  std::optional<std::string> static_verdict;
  std::optional<std::string> dynamic_verdict;
};

struct TurnOutcome {
  TurnCategory category = TurnCategory::infra;
  Counting counting = Counting::counted;
  std::optional<std::string> reply;         // the assistant text the turn acted on
  std::optional<std::string> kernel_source; // the extracted candidate, when there was one
  std::optional<std::string> feedback;      // the observation sent back to the model
  std::optional<std::string> infra_reason;  // an infra turn: the error that made it one
  std::optional<ReplyEnd> reply_end;        // when there was a reply
  // What the feedback hook added to `feedback` and from where, as JSON (the retrieved repair
  // notes: mode, pair ids, scores); empty when the hook added nothing.
  std::optional<std::string> retrieval_json;
};

struct StoredEvaluation {
  std::optional<std::string> kernel_sha256;
  std::vector<trace::Trace> traces;
  std::optional<double> speedup;
  std::optional<std::string> static_verdict;
  std::optional<std::string> dynamic_verdict;
};

// A finished turn as resume needs it: enough to rebuild the conversation and the budget.
struct FinishedTurn {
  TurnId id;
  std::int64_t index = 0;
  TurnCategory category = TurnCategory::infra;
  Counting counting = Counting::counted;
  std::optional<std::string> reply;
  std::optional<std::string> kernel_source;
  std::optional<std::string> feedback;
  std::optional<std::string> infra_reason;
  std::optional<std::int64_t> model_settings_id; // the settings it was asked with, when recorded
  std::optional<ReplyEnd> reply_end;
  std::optional<std::string> retrieval_json; // TurnOutcome::retrieval_json
  std::string started_at;
  std::string finished_at;
  std::vector<StoredEvaluation> evaluations;
};

struct UsageTotals {
  std::int64_t calls = 0; // attempts, failed ones and those still in flight included
  std::int64_t input_tokens = 0;
  std::int64_t output_tokens = 0;
  std::int64_t reasoning_tokens = 0;
  double cost_usd = 0;
  std::int64_t calls_in_flight = 0; // attempts that never ended (a crash): usage unknown
};

} // namespace ptxbench::store
