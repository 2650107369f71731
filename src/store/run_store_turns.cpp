// Writes of a turn's life: begin, model-call attempts, evaluations, sources, finish. Each public
// call is one committed transaction (see the essay in run_store.hpp).
#include "store/codec.hpp"
#include "store/run_store.hpp"
#include "store/sqlite.hpp"
#include "trace/json_io.hpp"
#include "util/hash.hpp"

namespace ptxbench::store {
namespace {

using detail::raw;

util::Expected<TrajectoryStatus> trajectory_status(detail::Connection& db, TrajectoryId id) {
  auto& stmt = db.prepared("SELECT status FROM trajectory WHERE id = ?1");
  PTXBENCH_TRY_ASSIGN(auto row, stmt.bind(1, id.value).step());
  if (!row)
    throw util::Fatal("begin_turn: no trajectory " + std::to_string(id.value));
  auto status = detail::decode(kTrajectoryStatuses, stmt.int64(0), "trajectory.status");
  stmt.reset();
  return status;
}

util::Status abandon_open_turns(detail::Connection& db, TrajectoryId id) {
  auto& stmt = db.prepared("UPDATE turn SET state = ?1 WHERE trajectory_id = ?2 AND state = ?3");
  return stmt.bind(1, raw(TurnState::abandoned))
      .bind(2, id.value)
      .bind(3, raw(TurnState::open))
      .run();
}

util::Expected<std::int64_t> next_turn_index(detail::Connection& db, TrajectoryId id) {
  auto& stmt =
      db.prepared("SELECT count(*), coalesce(max(idx) + 1, 0) FROM turn WHERE trajectory_id = ?1 "
                  "AND state = ?2");
  PTXBENCH_TRY(stmt.bind(1, id.value).bind(2, raw(TurnState::finished)).step());
  std::int64_t count = stmt.int64(0);
  std::int64_t next = stmt.int64(1);
  stmt.reset();
  if (count != next)
    throw util::Fatal("trajectory " + std::to_string(id.value) + ": finished turns have gaps");
  return next;
}

void require_open_turn(detail::Connection& db, TurnId turn, std::string_view what) {
  auto& stmt = db.prepared("SELECT state FROM turn WHERE id = ?1");
  auto row = stmt.bind(1, turn.value).step();
  bool open = row && *row && stmt.int64(0) == raw(TurnState::open);
  stmt.reset();
  if (row && !open)
    throw util::Fatal(std::string(what) + ": turn " + std::to_string(turn.value) +
                      " is not open (finished, abandoned or unknown)");
}

std::string traces_json(const std::vector<trace::Trace>& traces) {
  trace::Json array = trace::Json::array();
  for (const auto& t : traces)
    array.push_back(trace::to_json(t));
  return trace::dump_compact(array);
}

util::Status check_traces(const std::vector<trace::Trace>& traces) {
  for (const auto& t : traces)
    if (t.evaluation)
      PTXBENCH_TRY(trace::check_writable(*t.evaluation));
  return util::Ok{};
}

} // namespace

util::Expected<TurnHandle> RunStore::begin_turn(TrajectoryId id) {
  std::lock_guard lock(m_mutex);
  PTXBENCH_TRY_ASSIGN(auto transaction, detail::WriteTransaction::begin(*m_db));
  PTXBENCH_TRY_ASSIGN(auto status, trajectory_status(*m_db, id));
  if (status != TrajectoryStatus::running)
    throw util::Fatal("begin_turn: trajectory " + std::to_string(id.value) + " is finished");
  PTXBENCH_TRY(abandon_open_turns(*m_db, id));
  PTXBENCH_TRY_ASSIGN(auto index, next_turn_index(*m_db, id));
  auto& insert = m_db->prepared(
      "INSERT INTO turn(trajectory_id, idx, state, started_at, model_settings_id) VALUES (?1, ?2, "
      "?3, ?4, (SELECT max(s.id) FROM model_settings s JOIN trajectory j ON j.model = s.model "
      "WHERE j.id = ?1))");
  PTXBENCH_TRY(
      insert.bind(1, id.value).bind(2, index).bind(3, raw(TurnState::open)).bind(4, now()).run());
  TurnHandle handle{TurnId{m_db->last_insert_rowid()}, index};
  PTXBENCH_TRY(transaction->commit());
  return handle;
}

util::Status RunStore::record_model_call(TurnId turn, const ModelCallRecord& call) {
  std::lock_guard lock(m_mutex);
  PTXBENCH_TRY_ASSIGN(auto transaction, detail::WriteTransaction::begin(*m_db));
  PTXBENCH_TRY(write_call(std::nullopt, turn, call, CallState::ended));
  return transaction->commit();
}

util::Expected<ModelCallId> RunStore::begin_model_call(TurnId turn, const ModelCallRecord& call) {
  ModelCallRecord start;
  start.attempt = call.attempt;
  start.provider = call.provider;
  start.model = call.model;
  start.request_sha256 = call.request_sha256;
  start.started_at = call.started_at;
  std::lock_guard lock(m_mutex);
  PTXBENCH_TRY_ASSIGN(auto transaction, detail::WriteTransaction::begin(*m_db));
  PTXBENCH_TRY(write_call(std::nullopt, turn, start, CallState::in_flight));
  ModelCallId id{m_db->last_insert_rowid()};
  PTXBENCH_TRY(transaction->commit());
  return id;
}

util::Status RunStore::end_model_call(ModelCallId id, const ModelCallRecord& call) {
  std::lock_guard lock(m_mutex);
  PTXBENCH_TRY_ASSIGN(auto transaction, detail::WriteTransaction::begin(*m_db));
  PTXBENCH_TRY(write_call(id, TurnId{}, call, CallState::ended));
  if (m_db->changes() != 1)
    throw util::Fatal("end_model_call: no model call " + std::to_string(id.value));
  return transaction->commit();
}

// Inserts the attempt for `turn` (no id) or rewrites the row `id` with it; inside the caller's
// lock and transaction.
util::Status RunStore::write_call(std::optional<ModelCallId> id, TurnId turn,
                                  const ModelCallRecord& call, CallState state) {
  PTXBENCH_TRY_ASSIGN(auto reply, put_optional(call.reply));
  PTXBENCH_TRY_ASSIGN(auto reasoning, put_optional(call.reasoning));
  auto& stmt = m_db->prepared(
      id ? "UPDATE model_call SET attempt = ?2, provider = ?3, model = ?4, request_sha256 = ?5, "
           "started_at = ?6, latency_ms = ?7, input_tokens = ?8, output_tokens = ?9, "
           "reasoning_tokens = ?10, cost_usd = ?11, http_status = ?12, error_kind = ?13, "
           "error_message = ?14, finish_reason = ?15, reply_sha256 = ?16, reasoning_sha256 = ?17, "
           "state = ?18, server_prompt_ms = ?19, server_generation_ms = ?20 WHERE id = ?1"
         : "INSERT INTO model_call(turn_id, attempt, provider, model, request_sha256, started_at, "
           "latency_ms, input_tokens, output_tokens, reasoning_tokens, cost_usd, http_status, "
           "error_kind, error_message, finish_reason, reply_sha256, reasoning_sha256, state, "
           "server_prompt_ms, server_generation_ms) "
           "VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,?16,?17,?18,?19,?20)");
  std::optional<std::int64_t> error_kind;
  if (call.error_kind)
    error_kind = raw(*call.error_kind);
  return stmt.bind(1, id ? id->value : turn.value)
      .bind(2, call.attempt)
      .bind(3, call.provider)
      .bind(4, call.model)
      .bind(5, call.request_sha256)
      .bind(6, format_utc(call.started_at))
      .bind(7, call.latency_ms)
      .bind(8, call.input_tokens)
      .bind(9, call.output_tokens)
      .bind(10, call.reasoning_tokens)
      .bind(11, call.cost_usd)
      .bind(12, call.http_status)
      .bind(13, error_kind)
      .bind(14, call.error_message)
      .bind(15, call.finish_reason)
      .bind(16, reply)
      .bind(17, reasoning)
      .bind(18, raw(state))
      .bind(19, call.server_prompt_ms)
      .bind(20, call.server_generation_ms)
      .run();
}

util::Status RunStore::record_evaluation(TurnId turn, const EvaluationRecord& evaluation) {
  PTXBENCH_TRY(check_traces(evaluation.traces));
  std::string json = traces_json(evaluation.traces);
  std::lock_guard lock(m_mutex);
  PTXBENCH_TRY_ASSIGN(auto transaction, detail::WriteTransaction::begin(*m_db));
  require_open_turn(*m_db, turn, "record_evaluation");
  PTXBENCH_TRY_ASSIGN(auto kernel, put_source(evaluation.kernel_source));
  auto& insert = m_db->prepared(
      "INSERT INTO evaluation(turn_id, kernel_sha256, traces_json, speedup, static_verdict, "
      "dynamic_verdict, created_at) VALUES (?1,?2,?3,?4,?5,?6,?7)");
  PTXBENCH_TRY(insert.bind(1, turn.value)
                   .bind(2, std::string_view(kernel))
                   .bind(3, std::string_view(json))
                   .bind(4, evaluation.speedup)
                   .bind(5, evaluation.static_verdict)
                   .bind(6, evaluation.dynamic_verdict)
                   .bind(7, now())
                   .run());
  return transaction->commit();
}

util::Status RunStore::finish_turn(TurnId turn, const TurnOutcome& outcome) {
  std::lock_guard lock(m_mutex);
  PTXBENCH_TRY_ASSIGN(auto transaction, detail::WriteTransaction::begin(*m_db));
  require_open_turn(*m_db, turn, "finish_turn");
  PTXBENCH_TRY_ASSIGN(auto reply, put_optional(outcome.reply));
  PTXBENCH_TRY_ASSIGN(auto kernel, put_optional(outcome.kernel_source));
  PTXBENCH_TRY_ASSIGN(auto feedback, put_optional(outcome.feedback));
  std::optional<std::int64_t> reply_end;
  if (outcome.reply_end)
    reply_end = raw(*outcome.reply_end);
  auto& update = m_db->prepared(
      "UPDATE turn SET state = ?1, category = ?2, counting = ?3, reply_sha256 = ?4, "
      "kernel_sha256 = ?5, feedback_sha256 = ?6, finished_at = ?7, infra_reason = ?9, "
      "reply_end = ?10, retrieval_json = ?11 WHERE id = ?8");
  PTXBENCH_TRY(update.bind(1, raw(TurnState::finished))
                   .bind(2, raw(outcome.category))
                   .bind(3, raw(outcome.counting))
                   .bind(4, reply)
                   .bind(5, kernel)
                   .bind(6, feedback)
                   .bind(7, now())
                   .bind(8, turn.value)
                   .bind(9, outcome.infra_reason)
                   .bind(10, reply_end)
                   .bind(11, outcome.retrieval_json)
                   .run());
  return transaction->commit();
}

util::Expected<std::string> RunStore::record_source(std::string_view text) {
  std::lock_guard lock(m_mutex);
  PTXBENCH_TRY_ASSIGN(auto transaction, detail::WriteTransaction::begin(*m_db));
  PTXBENCH_TRY_ASSIGN(auto hash, put_source(text));
  PTXBENCH_TRY(transaction->commit());
  return hash;
}

util::Expected<std::string> RunStore::put_source(std::string_view text) {
  std::string hash = util::sha256_hex(text);
  auto& insert =
      m_db->prepared("INSERT INTO source(sha256, text) VALUES (?1, ?2) ON CONFLICT DO NOTHING");
  PTXBENCH_TRY(insert.bind(1, std::string_view(hash)).bind(2, text).run());
  return hash;
}

util::Expected<std::optional<std::string>>
RunStore::put_optional(const std::optional<std::string>& text) {
  if (!text)
    return std::optional<std::string>{};
  PTXBENCH_TRY_ASSIGN(auto hash, put_source(*text));
  return std::optional<std::string>{std::move(hash)};
}

util::Expected<std::optional<std::string>> RunStore::source(std::string_view sha256) {
  std::lock_guard lock(m_mutex);
  auto& stmt = m_db->prepared("SELECT text FROM source WHERE sha256 = ?1");
  PTXBENCH_TRY_ASSIGN(auto row, stmt.bind(1, sha256).step());
  std::optional<std::string> text;
  if (row)
    text = stmt.text(0);
  stmt.reset();
  return text;
}

} // namespace ptxbench::store
