// One trajectory of the kernel agent (the paper's MiniPTXAgent, §2.2): the model gets the task
// and the architecture knowledge, answers with a kernel, the kernel is evaluated, the results
// go back to the model, and so on for a fixed budget of counted turns.
//
// Problem. A trajectory spends real money and GPU time over minutes or hours; any part of it can
// fail — the model API (outage, rate limit, context window), the evaluator, the process itself
// (SIGKILL, preemption). The numbers a trajectory produces must count only what the model did:
// a turn lost to our infrastructure must be retried, never charged to the model, and a resumed
// trajectory must continue exactly where the store says it stopped.
//
// Approach. Every turn is a store transaction sequence: begin_turn (which abandons a turn left
// open by a crash), one model call whose every HTTP attempt is recorded as it starts and
// completed as it ends (a call cut off by a crash stays on record), extraction,
// the executor (gate, compile, static SASS, GPU evaluation), record_evaluation, finish_turn with
// the reply, kernel and feedback committed together. The conversation is rebuilt from the
// store's finished turns before every model call, so a fresh trajectory and a resumed one take
// the same path; the opening prompts are stored with the trajectory and reused on resume.
//
// Turn outcomes:
//   no code in the reply          extraction    counted; feedback says what was missing
//   gate / nvcc / GPU verdict     its category  counted; feedback from feedback.hpp, plus
//                                               the feedback hook's text on a failure
//   model API failed after its    infra         not counted; no reply reaches the conversation;
//   retries                                     after max_infra_retries consecutive ones the
//                                               trajectory stops and stays resumable
//   evaluator failed (no verdict) —             the same reply is evaluated again, with
//                                               backoff, up to eval_attempts times; then an
//                                               infra turn that keeps the reply, and the
//                                               trajectory stops resumable: resume evaluates
//                                               that reply again before it calls the model
// Every infra turn stores its reason; the loop's notices (each failed evaluation, its retry)
// go to the caller as they happen.
//   context window exceeded       —             the trajectory ends: context_overflow
//   request refused (4xx, other)  —             the trajectory ends: model_error
// The trajectory ends with target_met when a correct kernel reaches the target speedup, and
// with turn_budget when the counted turns are used up.
//
// Invariants: finished counted turns never exceed max_turns; infra turns never enter the
// conversation or the budget; a stop request (cancel flag) is honoured between turns and leaves
// the trajectory resumable.
#pragma once

#include "agent/condition.hpp"
#include "agent/executor.hpp"
#include "agent/prompt.hpp"
#include "compile/language.hpp"
#include "compile/nvcc.hpp"
#include "frontend/frontend.hpp"
#include "model/chat.hpp"
#include "model/registry.hpp"
#include "model/retry.hpp"
#include "store/run_store.hpp"
#include "suite/problem.hpp"
#include "util/error.hpp"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string_view>

namespace ptxbench::agent {

// Which earlier turns the model sees: all of them, or only the latest reply and its feedback
// (after the system and task prompts).
enum class ContextPolicy : std::uint8_t { full = 1, latest_pair = 2 };
std::string_view to_string(ContextPolicy policy);
std::optional<ContextPolicy> parse_context_policy(std::string_view name);

struct LoopOptions {
  compile::Arch arch = compile::Arch::sm_90a;
  compile::Language language = compile::Language::cuda;
  int max_turns = 8;
  std::optional<double> target_speedup = 1.2; // nullopt: never stop early
  ContextPolicy context = ContextPolicy::full;
  int max_infra_retries = 3; // consecutive infra turns before the trajectory stops
  int eval_attempts = 4;     // evaluations of one reply before its turn is infra
  std::chrono::milliseconds eval_retry_delay{5000}; // before the second; doubled, ≤ 2 min
};

// What the loop reports after each finished turn (progress display, logs).
struct TurnEvent {
  const store::TrajectoryKey* key = nullptr;
  std::int64_t index = 0;
  store::TurnCategory category = store::TurnCategory::infra;
  std::optional<double> speedup;
};
using TurnListener = std::function<void(const TurnEvent&)>;
// What a trajectory waits on, reported as it begins and ends (the progress line's calls in
// flight, the stop message).
enum class Activity : std::uint8_t { model_call = 1, evaluation = 2 };
enum class Edge : std::uint8_t { begins = 1, ends = 2 };
using ActivityListener = std::function<void(const store::TrajectoryKey&, Activity, Edge)>;

// A line for the user about one trajectory (an evaluator failure and its retry).
using NoticeListener = std::function<void(const store::TrajectoryKey&, const std::string&)>;

// How a trajectory run ended. `exit` is empty when the trajectory stopped without finishing
// (cancelled, or infrastructure kept failing): it stays resumable.
struct TrajectoryResult {
  store::TrajectoryId id;
  std::optional<store::ExitReason> exit;
  std::string stop_reason;         // why it stopped unfinished, or the ending error
  std::int64_t counted_turns = 0;  // after this run, resumed turns included
  std::int64_t turns_this_run = 0; // turns finished by this call (any category)
  std::int64_t correct_turns = 0;
  std::optional<double> best_speedup;
};

// Makes the model client for one trajectory; `calls_made` is the number of model-call attempts
// already recorded for it (a replay client skips that many recorded replies on resume).
using ClientMaker =
    std::function<util::Expected<std::unique_ptr<model::ModelClient>>(std::int64_t calls_made)>;

struct TrajectoryTask {
  store::TrajectoryKey key;
  const suite::Problem* problem = nullptr;
  const model::ModelSpec* model = nullptr;
  Prompts prompts; // used when the store has none for this trajectory yet
  // What the feedback hook retrieves for this trajectory's failed turns (its plan condition);
  // nullopt: whatever the hook was made for.
  std::optional<Retrieval> retrieval;
};

// An evaluated turn that failed (compile, runtime, numerical, timeout, banned library), as a
// feedback hook sees it.
struct FailedTurn {
  const suite::Problem* problem = nullptr;
  std::string_view kernel_source;
  store::TurnCategory category = store::TurnCategory::compile;
  const store::TrajectoryKey* key = nullptr;
  std::optional<Retrieval> retrieval; // TrajectoryTask::retrieval
};
// What a feedback hook adds: text appended (after a blank line) to the failed turn's feedback
// before it is stored and shown to the model — e.g. repair notes retrieved for the kernel — and
// a JSON record of where it came from (which notes, their scores), stored with the turn
// (TurnOutcome::retrieval_json). Empty text adds nothing; an empty record stores none.
struct ExtraFeedback {
  std::string text;
  std::string record_json;
};
// Called from the worker threads of a run at once: it must be thread-safe.
using FeedbackHook = std::function<ExtraFeedback(const FailedTurn&)>;

struct LoopDeps {
  store::RunStore* store = nullptr;
  Executor* executor = nullptr;
  ClientMaker make_client;
  TurnListener on_turn;                      // optional
  NoticeListener on_notice;                  // optional
  ActivityListener on_activity;              // optional
  const std::atomic<bool>* cancel = nullptr; // optional: stop between turns when set
  model::Sleeper* sleeper = nullptr; // the evaluator's backoff; null: real, cut short by cancel
  FeedbackHook extra_feedback;       // optional
  // The candidate language's reply reading (frontend.hpp); null: LoopOptions::language's.
  const frontend::Frontend* frontend = nullptr;
};

// Runs (or resumes) one trajectory to its end or until it must stop. Errors: the store failed
// or the client could not be made — nothing about the model.
util::Expected<TrajectoryResult> run_trajectory(const TrajectoryTask& task,
                                                const LoopOptions& options, const LoopDeps& deps);

// Whether a model-API error says the conversation no longer fits the model's context window.
bool is_context_overflow(const util::Error& error);

// The messages of the next model call: system, task, then earlier (reply, feedback) pairs of the
// finished non-infra turns as the policy allows.
std::vector<model::Message> conversation(const store::TrajectoryPrompts& prompts,
                                         const std::vector<store::FinishedTurn>& turns,
                                         ContextPolicy policy);

} // namespace ptxbench::agent
