#include "store/schema.hpp"

#include "store/enums.hpp"
#include "util/error.hpp"

#include <array>
#include <string>
#include <string_view>

namespace ptxbench::store::detail {
namespace {

// Migration i (1-based) takes the schema from version i-1 to i. Append; never edit a shipped one.
constexpr std::array<std::string_view, 8> kMigrations{
    R"sql(
CREATE TABLE run (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  created_at TEXT NOT NULL,
  ptxbench_version TEXT NOT NULL,
  config_json TEXT NOT NULL
);
CREATE TABLE source (
  sha256 TEXT PRIMARY KEY,
  text TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE trajectory (
  id INTEGER PRIMARY KEY,
  model TEXT NOT NULL,
  problem TEXT NOT NULL,
  prompt_variant TEXT NOT NULL,
  sample INTEGER NOT NULL,
  status INTEGER NOT NULL,
  exit_reason INTEGER,
  created_at TEXT NOT NULL,
  finished_at TEXT,
  UNIQUE (model, problem, prompt_variant, sample)
);
CREATE TABLE turn (
  id INTEGER PRIMARY KEY,
  trajectory_id INTEGER NOT NULL REFERENCES trajectory(id),
  idx INTEGER NOT NULL,
  state INTEGER NOT NULL,
  category INTEGER,
  counting INTEGER,
  reply_sha256 TEXT REFERENCES source(sha256),
  kernel_sha256 TEXT REFERENCES source(sha256),
  feedback_sha256 TEXT REFERENCES source(sha256),
  started_at TEXT NOT NULL,
  finished_at TEXT,
  CHECK ((state = 2) = (category IS NOT NULL AND counting IS NOT NULL AND finished_at IS NOT NULL))
);
CREATE UNIQUE INDEX turn_live ON turn(trajectory_id, idx) WHERE state <> 3;
CREATE TABLE model_call (
  id INTEGER PRIMARY KEY,
  turn_id INTEGER NOT NULL REFERENCES turn(id),
  attempt INTEGER NOT NULL,
  provider TEXT NOT NULL,
  model TEXT NOT NULL,
  request_sha256 TEXT NOT NULL,
  started_at TEXT NOT NULL,
  latency_ms REAL NOT NULL,
  input_tokens INTEGER NOT NULL,
  output_tokens INTEGER NOT NULL,
  reasoning_tokens INTEGER NOT NULL,
  cost_usd REAL NOT NULL,
  http_status INTEGER,
  error_kind INTEGER,
  error_message TEXT NOT NULL,
  finish_reason TEXT NOT NULL,
  reply_sha256 TEXT REFERENCES source(sha256),
  reasoning_sha256 TEXT REFERENCES source(sha256)
);
CREATE INDEX model_call_turn ON model_call(turn_id);
CREATE TABLE evaluation (
  id INTEGER PRIMARY KEY,
  turn_id INTEGER NOT NULL REFERENCES turn(id),
  kernel_sha256 TEXT REFERENCES source(sha256),
  traces_json TEXT NOT NULL,
  speedup REAL,
  static_verdict TEXT,
  dynamic_verdict TEXT,
  created_at TEXT NOT NULL
);
CREATE INDEX evaluation_turn ON evaluation(turn_id);
CREATE TABLE enum_value (
  enum TEXT NOT NULL,
  value INTEGER NOT NULL,
  name TEXT NOT NULL,
  PRIMARY KEY (enum, value)
) WITHOUT ROWID;
)sql",
    // 2: the prompts a trajectory opened with, so that resume and exports use the exact text.
    R"sql(
ALTER TABLE trajectory ADD COLUMN system_prompt_sha256 TEXT REFERENCES source(sha256);
ALTER TABLE trajectory ADD COLUMN task_prompt_sha256 TEXT REFERENCES source(sha256);
)sql",
    // 3: why an infra turn was not counted (the model API's or the evaluator's error).
    R"sql(
ALTER TABLE turn ADD COLUMN infra_reason TEXT;
)sql",
    // 4: the resolved model settings each turn was asked with (a resume may override them).
    R"sql(
CREATE TABLE model_settings (
  id INTEGER PRIMARY KEY,
  model TEXT NOT NULL,
  settings_json TEXT NOT NULL,
  reason TEXT NOT NULL,
  recorded_at TEXT NOT NULL
);
CREATE INDEX model_settings_model ON model_settings(model);
ALTER TABLE turn ADD COLUMN model_settings_id INTEGER REFERENCES model_settings(id);
)sql",
    // 5: how the reply of a turn ended (complete, truncated, empty); NULL before it was kept.
    R"sql(
ALTER TABLE turn ADD COLUMN reply_end INTEGER;
)sql",
    // 6: attempts recorded as they start (state 1 until they end), and the server's own prompt
    // and generation times where it reports them.
    R"sql(
ALTER TABLE model_call ADD COLUMN state INTEGER NOT NULL DEFAULT 2;
ALTER TABLE model_call ADD COLUMN server_prompt_ms REAL;
ALTER TABLE model_call ADD COLUMN server_generation_ms REAL;
)sql",
    // 7: the candidate language (FlashInfer-Trace spelling); stores from before it held CUDA.
    R"sql(
ALTER TABLE trajectory ADD COLUMN language TEXT NOT NULL DEFAULT 'cuda';
)sql",
    // 8: the plan condition a trajectory ran under ('' for a run without conditions), and what
    // the feedback hook added to a turn's feedback (the retrieved notes: ids, scores, mode).
    R"sql(
ALTER TABLE trajectory ADD COLUMN condition TEXT NOT NULL DEFAULT '';
ALTER TABLE turn ADD COLUMN retrieval_json TEXT;
)sql",
};

util::Status put_enum_row(Connection& db, std::string_view name, std::int64_t value,
                          std::string_view value_name) {
  auto& stmt =
      db.prepared("INSERT OR REPLACE INTO enum_value(enum, value, name) VALUES (?1,?2,?3)");
  return stmt.bind(1, name).bind(2, value).bind(3, value_name).run();
}

template <typename Enum, std::size_t N>
util::Status mirror(Connection& db, std::string_view name,
                    const std::array<EnumInfo<Enum>, N>& table) {
  for (const auto& row : table)
    PTXBENCH_TRY(put_enum_row(db, name, static_cast<std::int64_t>(row.value), row.name));
  return util::Ok{};
}

util::Status mirror_enums(Connection& db) {
  // Rewritten whole, so that a retired kind (util::kRetiredErrorKinds) leaves the mirror.
  PTXBENCH_TRY(db.exec("DELETE FROM enum_value WHERE enum = 'error_kind'"));
  for (const auto& row : util::kErrorKinds)
    PTXBENCH_TRY(put_enum_row(db, "error_kind", static_cast<std::int64_t>(row.kind), row.name));
  PTXBENCH_TRY(mirror(db, "turn_category", kTurnCategories));
  PTXBENCH_TRY(mirror(db, "turn_state", kTurnStates));
  PTXBENCH_TRY(mirror(db, "counting", kCountings));
  PTXBENCH_TRY(mirror(db, "trajectory_status", kTrajectoryStatuses));
  PTXBENCH_TRY(mirror(db, "reply_end", kReplyEnds));
  PTXBENCH_TRY(mirror(db, "call_state", kCallStates));
  return mirror(db, "exit_reason", kExitReasons);
}

util::Status apply(Connection& db, int version) {
  PTXBENCH_TRY_ASSIGN(auto transaction, WriteTransaction::begin(db));
  PTXBENCH_TRY(db.exec(kMigrations[static_cast<std::size_t>(version) - 1]));
  PTXBENCH_TRY(db.exec("DELETE FROM schema_version"));
  auto& stmt = db.prepared("INSERT INTO schema_version(version) VALUES (?1)");
  PTXBENCH_TRY(stmt.bind(1, std::int64_t{version}).run());
  return transaction->commit();
}

} // namespace

util::Expected<int> schema_version(Connection& db) {
  PTXBENCH_TRY(db.exec("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)"));
  auto& stmt = db.prepared("SELECT max(version) FROM schema_version");
  PTXBENCH_TRY(stmt.step());
  int version = static_cast<int>(stmt.is_null(0) ? 0 : stmt.int64(0));
  stmt.reset();
  return version;
}

util::Status migrate(Connection& db, int target) {
  static_assert(kMigrations.size() >= 1);
  if (target < 1 || target > static_cast<int>(kMigrations.size()))
    throw util::Fatal("no migration to schema version " + std::to_string(target));
  PTXBENCH_TRY_ASSIGN(auto current, schema_version(db));
  if (current > target)
    return util::make_error(util::ErrorKind::unsupported,
                            "database schema version " + std::to_string(current) +
                                " is newer than this build's (" + std::to_string(target) + ")");
  for (int version = current + 1; version <= target; ++version)
    PTXBENCH_TRY(apply(db, version));
  PTXBENCH_TRY_ASSIGN(auto transaction, WriteTransaction::begin(db));
  PTXBENCH_TRY(mirror_enums(db));
  return transaction->commit();
}

} // namespace ptxbench::store::detail
