// Queries: finished turns for resume, model calls, counts and usage totals.
#include "store/codec.hpp"
#include "store/run_store.hpp"
#include "store/sqlite.hpp"
#include "trace/json_io.hpp"

#include <cstdio>
#include <ctime>

namespace ptxbench::store {
namespace {

using detail::raw;

TimePoint parse_utc(const std::string& text) {
  std::tm utc{};
  int millis = 0;
  if (std::sscanf(text.c_str(), "%d-%d-%dT%d:%d:%d.%dZ", &utc.tm_year, &utc.tm_mon, &utc.tm_mday,
                  &utc.tm_hour, &utc.tm_min, &utc.tm_sec, &millis) != 7)
    return TimePoint{};
  utc.tm_year -= 1900;
  utc.tm_mon -= 1;
  auto seconds = std::chrono::system_clock::from_time_t(timegm(&utc));
  return seconds + std::chrono::milliseconds(millis);
}

util::Expected<std::vector<trace::Trace>> parse_traces(const std::string& json,
                                                       const std::string& origin) {
  PTXBENCH_TRY_ASSIGN(auto parsed, trace::parse_json_text(json, origin));
  std::vector<trace::Trace> traces;
  for (const auto& item : parsed) {
    PTXBENCH_TRY_ASSIGN(auto t, trace::trace_from_json(item, origin));
    traces.push_back(std::move(t));
  }
  return traces;
}

util::Expected<FinishedTurn> read_finished_turn(const detail::Statement& row) {
  FinishedTurn turn;
  turn.id = TurnId{row.int64(0)};
  turn.index = row.int64(1);
  PTXBENCH_TRY_ASSIGN(auto category,
                      detail::decode(kTurnCategories, row.int64(2), "turn.category"));
  PTXBENCH_TRY_ASSIGN(auto counting, detail::decode(kCountings, row.int64(3), "turn.counting"));
  turn.category = category;
  turn.counting = counting;
  turn.reply = row.optional_text(4);
  turn.kernel_source = row.optional_text(5);
  turn.feedback = row.optional_text(6);
  turn.started_at = row.text(7);
  turn.finished_at = row.text(8);
  turn.infra_reason = row.optional_text(9);
  turn.model_settings_id = row.optional_int64(10);
  if (auto raw_end = row.optional_int64(11)) {
    PTXBENCH_TRY_ASSIGN(auto end, detail::decode(kReplyEnds, *raw_end, "turn.reply_end"));
    turn.reply_end = end;
  }
  turn.retrieval_json = row.optional_text(12);
  return turn;
}

util::Expected<ModelCallRecord> read_model_call(const detail::Statement& row) {
  ModelCallRecord call;
  call.attempt = row.int64(0);
  call.provider = row.text(1);
  call.model = row.text(2);
  call.request_sha256 = row.text(3);
  call.started_at = parse_utc(row.text(4));
  call.latency_ms = row.real(5);
  call.input_tokens = row.int64(6);
  call.output_tokens = row.int64(7);
  call.reasoning_tokens = row.int64(8);
  call.cost_usd = row.real(9);
  call.http_status = row.optional_int64(10);
  if (auto raw_kind = row.optional_int64(11)) {
    call.error_kind = util::error_kind_from_value(*raw_kind);
    if (!call.error_kind) // a retired kind (util::kRetiredErrorKinds) or one from a newer build
      return util::make_error(util::ErrorKind::invalid_input,
                              "model_call.error_kind: unknown value " + std::to_string(*raw_kind));
  }
  call.error_message = row.text(12);
  call.finish_reason = row.text(13);
  call.reply = row.optional_text(14);
  call.reasoning = row.optional_text(15);
  if (row.int64(16) == detail::raw(CallState::in_flight))
    call.state = CallState::in_flight;
  call.server_prompt_ms = row.optional_real(17);
  call.server_generation_ms = row.optional_real(18);
  return call;
}

} // namespace

util::Expected<std::vector<StoredEvaluation>> RunStore::evaluations_of(TurnId turn) {
  auto& stmt = m_db->prepared("SELECT kernel_sha256, traces_json, speedup, static_verdict, "
                              "dynamic_verdict FROM evaluation WHERE turn_id = ?1 ORDER BY id");
  stmt.bind(1, turn.value);
  const std::string origin = m_path.string() + ": evaluation of turn " + std::to_string(turn.value);
  auto evaluations = stmt.collect<StoredEvaluation>(
      [&](detail::Statement& row) -> util::Expected<StoredEvaluation> {
        PTXBENCH_TRY_ASSIGN(auto traces, parse_traces(row.text(1), origin));
        return StoredEvaluation{row.optional_text(0), std::move(traces), row.optional_real(2),
                                row.optional_text(3), row.optional_text(4)};
      });
  return evaluations;
}

util::Expected<std::vector<FinishedTurn>> RunStore::finished_turns(TrajectoryId id) {
  std::lock_guard lock(m_mutex);
  auto& stmt = m_db->prepared(
      "SELECT t.id, t.idx, t.category, t.counting, r.text, k.text, f.text, t.started_at, "
      "t.finished_at, t.infra_reason, t.model_settings_id, t.reply_end, t.retrieval_json "
      "FROM turn t LEFT JOIN "
      "source r ON r.sha256 = t.reply_sha256 "
      "LEFT JOIN source k ON k.sha256 = t.kernel_sha256 "
      "LEFT JOIN source f ON f.sha256 = t.feedback_sha256 "
      "WHERE t.trajectory_id = ?1 AND t.state = ?2 ORDER BY t.idx");
  stmt.bind(1, id.value).bind(2, raw(TurnState::finished));
  PTXBENCH_TRY_ASSIGN(auto collected, stmt.collect<FinishedTurn>(read_finished_turn));
  std::vector<FinishedTurn> turns = std::move(collected);
  for (auto& turn : turns) {
    PTXBENCH_TRY_ASSIGN(auto evaluations, evaluations_of(turn.id));
    turn.evaluations = std::move(evaluations);
  }
  return turns;
}

util::Expected<ResumePoint> RunStore::resume_point(TrajectoryId id) {
  PTXBENCH_TRY_ASSIGN(auto turns, finished_turns(id));
  ResumePoint point;
  point.next_index = static_cast<std::int64_t>(turns.size());
  for (const auto& turn : turns)
    if (turn.counting == Counting::counted)
      ++point.counted_turns;
  point.finished = std::move(turns);
  return point;
}

util::Expected<std::vector<ModelCallRecord>> RunStore::model_calls(TurnId turn) {
  std::lock_guard lock(m_mutex);
  auto& stmt = m_db->prepared(
      "SELECT c.attempt, c.provider, c.model, c.request_sha256, c.started_at, c.latency_ms, "
      "c.input_tokens, c.output_tokens, c.reasoning_tokens, c.cost_usd, c.http_status, "
      "c.error_kind, c.error_message, c.finish_reason, r.text, s.text, c.state, "
      "c.server_prompt_ms, c.server_generation_ms FROM model_call c "
      "LEFT JOIN source r ON r.sha256 = c.reply_sha256 "
      "LEFT JOIN source s ON s.sha256 = c.reasoning_sha256 WHERE c.turn_id = ?1 ORDER BY c.id");
  stmt.bind(1, turn.value);
  return stmt.collect<ModelCallRecord>(read_model_call);
}

util::Expected<std::int64_t> RunStore::count_turns(TrajectoryId id, TurnState state) {
  std::lock_guard lock(m_mutex);
  auto& stmt = m_db->prepared("SELECT count(*) FROM turn WHERE trajectory_id = ?1 AND state = ?2");
  PTXBENCH_TRY(stmt.bind(1, id.value).bind(2, raw(state)).step());
  std::int64_t count = stmt.int64(0);
  stmt.reset();
  return count;
}

util::Expected<UsageTotals> RunStore::usage(TrajectoryId id) {
  std::lock_guard lock(m_mutex);
  auto& stmt = m_db->prepared(
      "SELECT count(*), coalesce(sum(c.input_tokens), 0), coalesce(sum(c.output_tokens), 0), "
      "coalesce(sum(c.reasoning_tokens), 0), coalesce(sum(c.cost_usd), 0.0), "
      "coalesce(sum(c.state = 1), 0) FROM model_call c "
      "JOIN turn t ON t.id = c.turn_id WHERE t.trajectory_id = ?1");
  PTXBENCH_TRY(stmt.bind(1, id.value).step());
  UsageTotals totals{stmt.int64(0), stmt.int64(1), stmt.int64(2),
                     stmt.int64(3), stmt.real(4),  stmt.int64(5)};
  stmt.reset();
  return totals;
}

} // namespace ptxbench::store
