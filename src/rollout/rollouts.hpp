// Rollouts: the agent loop driven one turn at a time by a caller that is the model — an RL
// trainer's policy, through the service's /v1/rollouts endpoints and the Python `Env`
// (docs/client.md).
//
// Problem. A trainer samples replies itself and needs, per rollout, the conversation the policy
// must answer next, the verdict and feedback of each reply, and an end: exactly what `ptxbench
// run` would have shown a model, or the rollouts and the benchmark's trajectories would train
// and measure different things. And a trainer's rollouts are data: `report`, `export`, `fixit`
// and `kernelgen` must read them like any run.
//
// Approach. A rollout is an ordinary trajectory of a run store, run by the loop itself
// (agent/loop.hpp): create() opens the trajectory with the prompts build_prompts() makes and
// answers with the conversation of the first model call; step(reply) resumes the trajectory with
// a model client whose one answer is `reply`, and stops it after that turn, so the extraction,
// evaluation, feedback, closing line, budget and target are the loop's own. The conversation
// returned is agent::conversation() of the turns the store holds. Rollouts with the same loop
// settings (arch, language, turns, target, context) share one run folder under the root, named
// by those settings' hash, whose stored plan carries them, so a restarted server continues
// any rollout from its store alone.
//
// A reply the evaluator could not judge (its retries spent) leaves the rollout waiting for
// retry(), which evaluates that same reply again; a new reply is refused until then (the loop's
// resume does the same). close() ends a rollout the caller abandons (exit `cancelled`).
//
// Thread-safe: rollouts step concurrently; one rollout takes one step at a time (a second
// concurrent step of it is refused). One server process owns a root (a lock file).
#pragma once

#include "agent/executor.hpp"
#include "agent/loop.hpp"
#include "compile/language.hpp"
#include "compile/nvcc.hpp"
#include "model/chat.hpp"
#include "pack/manifest.hpp"
#include "store/records.hpp"
#include "suite/suite.hpp"
#include "util/error.hpp"

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace ptxbench::rollout {

// The first-turn prompt of (problem, variant) as the loop opens a trajectory.
struct PromptSpec {
  std::string problem;
  std::string variant = "default"; // the problem kind's first variant; "none": no pack
  compile::Arch arch = compile::Arch::sm_90a;
  compile::Language language = compile::Language::cuda;
};

struct RolloutSpec {
  PromptSpec prompt;
  std::string model = "policy"; // the trajectory key's model: the trainer's name for its policy
  int max_turns = 8;
  std::optional<double> target_speedup = 1.2; // nullopt: never ends early
  agent::ContextPolicy context = agent::ContextPolicy::full;
};

inline constexpr int kMaxTurns = 64;

// What the caller says the model answered.
struct Reply {
  std::string text;
  std::optional<std::string> reasoning; // reasoning text, when the policy produced one
  std::string finish_reason = "stop";   // "length": cut at the output limit
  std::int64_t input_tokens = 0;
  std::int64_t output_tokens = 0;
  // The finished turns the caller has seen (RolloutView::turns.size()), when it says: a step
  // that already landed (the same reply is the last turn, one past that) is answered again
  // instead of taken twice, so a client may resend a step whose answer it lost.
  std::optional<std::int64_t> seen_turns;
};

// One finished turn as the caller sees it.
struct TurnView {
  std::int64_t index = 0;
  store::TurnCategory category = store::TurnCategory::infra;
  bool counted = true;
  std::string feedback;
  std::optional<double> speedup;
  std::optional<std::string> status; // the trace's evaluation status ("PASSED", …)
  std::optional<std::string> static_verdict;
  std::optional<std::string> dynamic_verdict;
  std::string infra_reason; // an infra turn: why
};

struct RolloutView {
  std::string id; // "<run folder>-<trajectory id>"
  RolloutSpec spec;
  std::filesystem::path run_dir;
  std::int64_t trajectory = 0;
  std::int64_t sample = 0;
  std::vector<model::Message> messages; // the conversation the next reply answers
  std::int64_t counted_turns = 0;
  bool done = false;
  std::optional<store::ExitReason> exit;
  bool awaiting_retry = false;   // the last reply was not evaluated: retry() it
  std::vector<TurnView> turns;   // every finished turn, in order
  std::vector<TurnView> stepped; // the turns this call finished (step, retry)
};

struct RolloutDeps {
  std::filesystem::path root; // one run folder per loop-settings hash below it
  const suite::Suite* suite = nullptr;
  const pack::Manifest* manifest = nullptr;
  // The executor of a language's turns (thread-safe).
  std::function<agent::Executor&(compile::Language)> executor;
  // The evaluating GPU's live parameters for the prompts of an arch ("" for none); optional.
  std::function<std::string(compile::Arch)> live_device;
  // Evaluations of one reply before its turn is infra, and the pause before the second (doubled
  // after each): the loop's defaults. A new folder's plan records them.
  int eval_attempts = agent::LoopOptions{}.eval_attempts;
  std::chrono::milliseconds eval_retry_delay = agent::LoopOptions{}.eval_retry_delay;
};

class Rollouts {
public:
  // io when the root cannot be made; conflict when another process owns it.
  static util::Expected<std::unique_ptr<Rollouts>> open(RolloutDeps deps);
  ~Rollouts();
  Rollouts(const Rollouts&) = delete;
  Rollouts& operator=(const Rollouts&) = delete;

  // not_found: unknown problem or variant; invalid_input: a variant of another language.
  util::Expected<std::vector<model::Message>> prompt(const PromptSpec& spec) const;
  util::Expected<RolloutView> create(const RolloutSpec& spec);
  // not_found for an unknown id.
  util::Expected<RolloutView> get(const std::string& id);
  // conflict when the rollout has ended, awaits retry(), or is stepping already.
  util::Expected<RolloutView> step(const std::string& id, const Reply& reply);
  // conflict unless the rollout awaits a retry.
  util::Expected<RolloutView> retry(const std::string& id);
  // Ends the rollout as `cancelled` (idempotent for an ended one).
  util::Expected<RolloutView> close(const std::string& id);

  // Steps in flight stop after their evaluation (an evaluator failure is not retried then: the
  // rollout awaits retry() on the next start), and new ones are refused (unsupported).
  void stop();

  const std::filesystem::path& root() const;

private:
  struct State;
  explicit Rollouts(std::unique_ptr<State> state);
  std::unique_ptr<State> m_state;
};

} // namespace ptxbench::rollout
