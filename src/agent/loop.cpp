#include "agent/loop.hpp"

#include "agent/feedback.hpp"
#include "compile/extract.hpp"
#include "model/factory.hpp"
#include "util/strings.hpp"

#include <algorithm>
#include <array>
#include <fmt/core.h>
#include <map>
#include <thread>

namespace ptxbench::agent {
namespace {

using store::TurnCategory;

constexpr std::chrono::milliseconds kMaxEvalRetryDelay{std::chrono::minutes(2)};

// Model-API failures that another attempt later may cure (the client already retried them).
bool is_transient(util::ErrorKind kind) {
  switch (kind) {
  case util::ErrorKind::timeout:
  case util::ErrorKind::transport:
  case util::ErrorKind::http_status:
  case util::ErrorKind::rate_limited:
  case util::ErrorKind::bad_response:
  case util::ErrorKind::subprocess:
  case util::ErrorKind::io:
    return true;
  default:
    return false;
  }
}

store::ModelCallRecord to_record(const model::AttemptRecord& attempt) {
  store::ModelCallRecord call;
  call.attempt = attempt.attempt;
  call.provider = attempt.provider;
  call.model = attempt.model;
  call.request_sha256 = attempt.request_sha256;
  call.started_at = attempt.started_at;
  call.latency_ms = attempt.latency.count();
  if (attempt.http_status)
    call.http_status = *attempt.http_status;
  if (attempt.error) {
    call.error_kind = attempt.error->kind;
    call.error_message = attempt.error->message;
  }
  if (const model::ChatResponse* reply = attempt.response) {
    call.input_tokens = reply->usage.input_tokens;
    call.output_tokens = reply->usage.output_tokens;
    call.reasoning_tokens = reply->usage.reasoning_tokens;
    call.cost_usd = reply->cost_usd;
    call.finish_reason = reply->finish_reason;
    call.reply = reply->text;
    call.reasoning = reply->reasoning;
    call.server_prompt_ms = reply->timings.prompt_ms;
    call.server_generation_ms = reply->timings.generation_ms;
  }
  return call;
}

store::ModelCallRecord to_record(const model::AttemptStart& start) {
  store::ModelCallRecord call;
  call.attempt = start.attempt;
  call.provider = start.provider;
  call.model = start.model;
  call.request_sha256 = start.request_sha256;
  call.started_at = start.started_at;
  call.state = store::CallState::in_flight;
  return call;
}

// An empty answer is empty whatever the finish reason; one with text that the provider says hit
// the output limit is truncated.
store::ReplyEnd reply_end_of(const model::ChatResponse& reply) {
  if (util::trim(reply.text).empty())
    return store::ReplyEnd::empty;
  if (model::stopped_at_token_limit(reply.finish_reason))
    return store::ReplyEnd::truncated;
  return store::ReplyEnd::complete;
}

// Whether an evaluated turn's verdict says the kernel is wrong (not correct, not unjudged).
bool is_failure(TurnCategory category) {
  switch (category) {
  case TurnCategory::compile:
  case TurnCategory::runtime:
  case TurnCategory::numerical:
  case TurnCategory::timeout:
  case TurnCategory::banned_library:
    return true;
  case TurnCategory::extraction:
  case TurnCategory::correct:
  case TurnCategory::infra:
  case TurnCategory::static_only:
    return false;
  }
  return false;
}

// What one turn came to before it is committed.
struct TurnWork {
  store::TurnOutcome outcome;
  std::optional<store::EvaluationRecord> evaluation;
  std::optional<double> speedup;
  std::optional<store::ExitReason> ends; // the trajectory ends after this turn
  std::string error;                     // infra or ending error text
  bool evaluator_failed = false;         // an infra turn that kept its unevaluated reply
};

// Reports an activity's beginning now and its end when the scope closes.
class ActivityScope {
public:
  ActivityScope(const ActivityListener& listener, const store::TrajectoryKey& key,
                Activity activity)
      : m_listener(listener), m_key(key), m_activity(activity) {
    if (m_listener)
      m_listener(m_key, m_activity, Edge::begins);
  }
  ~ActivityScope() {
    if (m_listener)
      m_listener(m_key, m_activity, Edge::ends);
  }
  ActivityScope(const ActivityScope&) = delete;
  ActivityScope& operator=(const ActivityScope&) = delete;

private:
  const ActivityListener& m_listener;
  const store::TrajectoryKey& m_key;
  Activity m_activity;
};

class Trajectory {
public:
  Trajectory(const TrajectoryTask& task, const LoopOptions& options, const LoopDeps& deps)
      : m_task(task), m_options(options), m_deps(deps), m_store(*deps.store) {}

  util::Expected<TrajectoryResult> run();

private:
  util::Expected<bool> already_finished();
  util::Status refresh();
  util::Expected<TurnWork> next_turn(store::TurnHandle turn);
  util::Expected<TurnWork> model_turn(store::TurnHandle turn);
  const store::FinishedTurn* unevaluated_reply() const;
  TurnWork evaluate_reply(const std::string& reply, store::ReplyEnd end);
  util::Expected<TurnResult> evaluate_with_retries(const std::string& code);
  util::Expected<TurnResult> evaluate_candidate(const std::string& code);
  void pause(std::chrono::milliseconds delay) const;
  bool cancelled() const { return m_deps.cancel != nullptr && m_deps.cancel->load(); }
  void notice(const std::string& text) const {
    if (m_deps.on_notice)
      m_deps.on_notice(m_task.key, text);
  }
  // The hook's text (after a blank line) for the feedback; its record goes to `outcome`.
  std::string hook_feedback(const std::string& code, store::TurnCategory category,
                            store::TurnOutcome& outcome) const;
  util::Status commit(store::TurnHandle turn, const TurnWork& work);
  util::Expected<TrajectoryResult> finish(store::ExitReason reason, std::string why = {});
  TrajectoryResult stopped(std::string why) const;
  bool target_met(const std::optional<double>& speedup) const {
    return speedup && m_options.target_speedup && *speedup >= *m_options.target_speedup;
  }

  const TrajectoryTask& m_task;
  const LoopOptions& m_options;
  const LoopDeps& m_deps;
  store::RunStore& m_store;
  store::TrajectoryId m_id;
  store::TrajectoryPrompts m_prompts;
  std::vector<store::FinishedTurn> m_finished;
  std::unique_ptr<model::ModelClient> m_client;
  TrajectoryResult m_result;
};

util::Status Trajectory::refresh() {
  PTXBENCH_TRY_ASSIGN(auto finished, m_store.finished_turns(m_id));
  m_finished = std::move(finished);
  m_result.counted_turns = 0;
  m_result.correct_turns = 0;
  m_result.best_speedup.reset();
  for (const auto& turn : m_finished) {
    if (turn.counting == store::Counting::counted)
      ++m_result.counted_turns;
    if (turn.category != TurnCategory::correct)
      continue;
    ++m_result.correct_turns;
    for (const auto& evaluation : turn.evaluations)
      if (evaluation.speedup)
        m_result.best_speedup = std::max(m_result.best_speedup.value_or(0.0), *evaluation.speedup);
  }
  return util::Ok{};
}

util::Expected<bool> Trajectory::already_finished() {
  PTXBENCH_TRY_ASSIGN(auto record, m_store.find_trajectory(m_task.key));
  if (!record || record->status != store::TrajectoryStatus::finished)
    return false;
  m_result.exit = record->exit_reason;
  return true;
}

util::Expected<TrajectoryResult> Trajectory::run() {
  PTXBENCH_TRY_ASSIGN(auto id, m_store.open_trajectory(m_task.key));
  m_id = m_result.id = id;
  PTXBENCH_TRY(refresh());
  PTXBENCH_TRY_ASSIGN(auto finished, already_finished());
  if (finished)
    return m_result;
  PTXBENCH_TRY_ASSIGN(auto prompts,
                      m_store.set_prompts(m_id, {m_task.prompts.system, m_task.prompts.task}));
  m_prompts = std::move(prompts);
  // A crash between a turn's commit and the trajectory's end: finish what the store shows.
  if (target_met(m_result.best_speedup))
    return finish(store::ExitReason::target_met);
  PTXBENCH_TRY_ASSIGN(auto usage, m_store.usage(m_id));
  PTXBENCH_TRY_ASSIGN(auto client, m_deps.make_client(usage.calls));
  m_client = std::move(client);

  int infra_in_a_row = 0;
  while (m_result.counted_turns < m_options.max_turns) {
    if (cancelled())
      return stopped("cancelled");
    PTXBENCH_TRY_ASSIGN(auto turn, m_store.begin_turn(m_id));
    PTXBENCH_TRY_ASSIGN(auto work, next_turn(turn));
    PTXBENCH_TRY(commit(turn, work));
    ++m_result.turns_this_run;
    PTXBENCH_TRY(refresh());
    if (m_deps.on_turn)
      m_deps.on_turn(TurnEvent{&m_task.key, turn.index, work.outcome.category, work.speedup});
    if (work.ends)
      return finish(*work.ends, work.error);
    if (work.evaluator_failed)
      return stopped(work.error);
    if (work.outcome.category != TurnCategory::infra) {
      infra_in_a_row = 0;
    } else if (++infra_in_a_row > m_options.max_infra_retries) {
      return stopped(
          fmt::format("{} infrastructure failures in a row; last: {}", infra_in_a_row, work.error));
    }
    if (work.outcome.category == TurnCategory::correct && target_met(work.speedup))
      return finish(store::ExitReason::target_met);
  }
  return finish(store::ExitReason::turn_budget);
}

// A reply the evaluator could not judge is judged before the model is asked for another.
util::Expected<TurnWork> Trajectory::next_turn(store::TurnHandle turn) {
  if (const store::FinishedTurn* kept = unevaluated_reply()) {
    notice("evaluating again the reply the evaluator failed on (no new model call)");
    return evaluate_reply(*kept->reply, kept->reply_end.value_or(store::ReplyEnd::complete));
  }
  return model_turn(turn);
}

// The reply of the last finished turn when that turn is an evaluator failure: an infra turn
// keeps its reply only then (a failed model call has none).
const store::FinishedTurn* Trajectory::unevaluated_reply() const {
  if (m_finished.empty())
    return nullptr;
  const store::FinishedTurn& last = m_finished.back();
  return last.category == TurnCategory::infra && last.reply ? &last : nullptr;
}

util::Expected<TurnWork> Trajectory::model_turn(store::TurnHandle turn) {
  model::ChatRequest request =
      model::make_request(*m_task.model, conversation(m_prompts, m_finished, m_options.context));
  std::optional<util::Error> store_error;
  std::map<int, store::ModelCallId> in_flight; // by attempt number
  request.on_attempt_start = [&](const model::AttemptStart& start) {
    auto id = m_store.begin_model_call(turn.id, to_record(start));
    if (id)
      in_flight[start.attempt] = *id;
    else if (!store_error)
      store_error = id.error();
  };
  request.on_attempt = [&](const model::AttemptRecord& attempt) {
    auto started = in_flight.find(attempt.attempt);
    auto status = started != in_flight.end()
                      ? m_store.end_model_call(started->second, to_record(attempt))
                      : m_store.record_model_call(turn.id, to_record(attempt));
    if (!status && !store_error)
      store_error = status.error();
  };
  auto reply = [&] {
    ActivityScope scope(m_deps.on_activity, m_task.key, Activity::model_call);
    return m_client->complete(request);
  }();
  if (store_error)
    return *store_error;
  if (reply)
    return evaluate_reply(reply->text, reply_end_of(*reply));
  TurnWork work;
  work.outcome.category = TurnCategory::infra;
  work.outcome.counting = store::Counting::not_counted;
  work.error = reply.error().message;
  work.outcome.infra_reason = "model call failed: " + work.error;
  if (is_context_overflow(reply.error()))
    work.ends = store::ExitReason::context_overflow;
  else if (!is_transient(reply.error().kind))
    work.ends = store::ExitReason::model_error;
  return work;
}

TurnWork Trajectory::evaluate_reply(const std::string& reply, store::ReplyEnd end) {
  TurnWork work;
  work.outcome.reply = reply;
  work.outcome.reply_end = end;
  const std::string note = reply_end_note(end, m_task.model->sampling.max_output_tokens);
  const frontend::Frontend& language =
      m_deps.frontend != nullptr ? *m_deps.frontend : frontend::of(m_options.language);
  auto candidate = language.extract(reply);
  if (!candidate) {
    work.outcome.category = TurnCategory::extraction;
    work.outcome.feedback = note + extraction_feedback(candidate.error(), language);
    return work;
  }
  work.outcome.kernel_source = candidate->code;
  auto result = evaluate_with_retries(candidate->code);
  if (!result) {
    work.outcome.category = TurnCategory::infra;
    work.outcome.counting = store::Counting::not_counted;
    work.error = "evaluation failed: " + result.error().message;
    work.outcome.infra_reason = work.error;
    work.evaluator_failed = true;
    return work;
  }
  work.outcome.category = result->category;
  const std::string extra = hook_feedback(candidate->code, result->category, work.outcome);
  work.outcome.feedback =
      note + result->feedback +
      closing_line(result->category, result->speedup, m_options.target_speedup) + extra;
  work.speedup = result->speedup;
  work.evaluation = std::move(result->evaluation);
  return work;
}

// An evaluator that has no verdict (a service down, a broken tool) is asked again about the
// same code after a growing pause; the model is not asked again for it.
util::Expected<TurnResult> Trajectory::evaluate_with_retries(const std::string& code) {
  const int attempts = std::max(1, m_options.eval_attempts);
  auto delay = m_options.eval_retry_delay;
  for (int attempt = 1;; ++attempt) {
    auto result = evaluate_candidate(code);
    if (result)
      return result;
    util::Error error = result.take_error();
    if (attempt >= attempts || cancelled()) {
      error.message += fmt::format(" ({} of {} attempts made)", attempt, attempts);
      return error;
    }
    notice(fmt::format("turn not evaluated (attempt {} of {}): {}; trying the same reply again "
                       "in {:.1f} s",
                       attempt, attempts, error.message, static_cast<double>(delay.count()) / 1e3));
    pause(delay);
    delay = std::min(delay * 2, kMaxEvalRetryDelay);
  }
}

void Trajectory::pause(std::chrono::milliseconds delay) const {
  if (m_deps.sleeper != nullptr)
    return m_deps.sleeper->sleep_for(delay);
  const auto until = std::chrono::steady_clock::now() + delay;
  while (!cancelled() && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(
        std::chrono::milliseconds(100), until - std::chrono::steady_clock::now()));
}

// The executor at the turn boundary: whatever the evaluation of one candidate throws is this
// turn's infra failure, never the end of the run.
util::Expected<TurnResult> Trajectory::evaluate_candidate(const std::string& code) {
  ActivityScope scope(m_deps.on_activity, m_task.key, Activity::evaluation);
  try {
    return m_deps.executor->evaluate(code, *m_task.problem, m_options.arch);
  } catch (const std::exception& error) {
    return util::make_error(util::ErrorKind::subprocess,
                            std::string("the evaluator raised an exception: ") + error.what());
  }
}

std::string Trajectory::hook_feedback(const std::string& code, store::TurnCategory category,
                                      store::TurnOutcome& outcome) const {
  if (!m_deps.extra_feedback || !is_failure(category))
    return {};
  ExtraFeedback extra = m_deps.extra_feedback(
      FailedTurn{m_task.problem, code, category, &m_task.key, m_task.retrieval});
  if (!extra.record_json.empty())
    outcome.retrieval_json = std::move(extra.record_json);
  return extra.text.empty() ? extra.text : "\n" + extra.text;
}

util::Status Trajectory::commit(store::TurnHandle turn, const TurnWork& work) {
  if (work.evaluation)
    PTXBENCH_TRY(m_store.record_evaluation(turn.id, *work.evaluation));
  return m_store.finish_turn(turn.id, work.outcome);
}

util::Expected<TrajectoryResult> Trajectory::finish(store::ExitReason reason, std::string why) {
  PTXBENCH_TRY(m_store.finish_trajectory(m_id, reason));
  m_result.exit = reason;
  m_result.stop_reason = std::move(why);
  return m_result;
}

TrajectoryResult Trajectory::stopped(std::string why) const {
  TrajectoryResult result = m_result;
  result.stop_reason = std::move(why);
  return result;
}

} // namespace

std::string_view to_string(ContextPolicy policy) {
  return policy == ContextPolicy::full ? "full" : "latest-pair";
}

std::optional<ContextPolicy> parse_context_policy(std::string_view name) {
  if (name == "full")
    return ContextPolicy::full;
  if (name == "latest-pair")
    return ContextPolicy::latest_pair;
  return std::nullopt;
}

bool is_context_overflow(const util::Error& error) {
  if (error.kind != util::ErrorKind::http_status && error.kind != util::ErrorKind::invalid_input)
    return false;
  // The wordings of OpenAI-compatible servers (OpenAI, vLLM, SGLang), Anthropic and Gemini.
  static constexpr std::array<std::string_view, 7> kMarkers{
      "context_length_exceeded", "maximum context length", "context length", "context window",
      "prompt is too long",      "input token count",      "too many tokens"};
  std::string message = util::to_lower(error.message);
  return std::ranges::any_of(
      kMarkers, [&](std::string_view marker) { return message.find(marker) != std::string::npos; });
}

std::vector<model::Message> conversation(const store::TrajectoryPrompts& prompts,
                                         const std::vector<store::FinishedTurn>& turns,
                                         ContextPolicy policy) {
  std::vector<model::Message> messages{{model::Role::system, prompts.system},
                                       {model::Role::user, prompts.task}};
  std::vector<const store::FinishedTurn*> pairs;
  for (const auto& turn : turns)
    if (turn.category != TurnCategory::infra && turn.reply && turn.feedback)
      pairs.push_back(&turn);
  if (policy == ContextPolicy::latest_pair && pairs.size() > 1)
    pairs.erase(pairs.begin(), pairs.end() - 1);
  for (const auto* turn : pairs) {
    messages.push_back({model::Role::assistant, *turn->reply});
    messages.push_back({model::Role::user, *turn->feedback});
  }
  return messages;
}

util::Expected<TrajectoryResult> run_trajectory(const TrajectoryTask& task,
                                                const LoopOptions& options, const LoopDeps& deps) {
  if (deps.store == nullptr || deps.executor == nullptr || !deps.make_client ||
      task.problem == nullptr || task.model == nullptr)
    throw util::Fatal("run_trajectory: missing store, executor, client maker, problem or model");
  return Trajectory(task, options, deps).run();
}

} // namespace ptxbench::agent
