// Opening a run database, the run row and trajectories.
#include "store/run_store.hpp"

#include "store/codec.hpp"
#include "store/schema.hpp"
#include "store/sqlite.hpp"
#include "trace/json_io.hpp"

#include <ctime>
#include <fmt/core.h>
#include <system_error>

namespace ptxbench::store {
namespace {

class SystemClock final : public Clock {
public:
  TimePoint now() const override { return std::chrono::system_clock::now(); }
};

} // namespace

const Clock& system_clock() {
  static const SystemClock clock;
  return clock;
}

std::string format_utc(TimePoint time) {
  auto since_epoch = time.time_since_epoch();
  auto seconds = std::chrono::floor<std::chrono::seconds>(since_epoch);
  auto millis = std::chrono::duration_cast<std::chrono::milliseconds>(since_epoch - seconds);
  std::time_t t = static_cast<std::time_t>(seconds.count());
  std::tm utc{};
  gmtime_r(&t, &utc);
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", utc.tm_year + 1900,
                     utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec,
                     millis.count());
}

RunStore::RunStore(std::unique_ptr<detail::Connection> db, std::filesystem::path path,
                   const Clock& clock)
    : m_db(std::move(db)), m_path(std::move(path)), m_clock(clock) {}

RunStore::~RunStore() = default;

std::string RunStore::now() const {
  return format_utc(m_clock.now());
}

util::Expected<std::unique_ptr<RunStore>> RunStore::open(const std::filesystem::path& run_dir,
                                                         const RunInfo& info, const Clock& clock) {
  std::error_code ec;
  std::filesystem::create_directories(run_dir, ec);
  if (ec)
    return util::make_error(util::ErrorKind::io,
                            run_dir.string() + ": cannot create run folder: " + ec.message());
  auto path = run_dir / kDatabaseName;
  PTXBENCH_TRY_ASSIGN(auto db, detail::Connection::open(path));
  auto connection = std::make_unique<detail::Connection>(std::move(db));
  if (auto status = detail::migrate(*connection, kSchemaVersion); !status)
    return util::make_error(status.error().kind, path.string() + ": " + status.error().message);
  std::unique_ptr<RunStore> store(new RunStore(std::move(connection), path, clock));
  PTXBENCH_TRY(store->load_or_create_run(info));
  return store;
}

util::Expected<std::unique_ptr<RunStore>>
RunStore::open_existing(const std::filesystem::path& run_dir, const Clock& clock) {
  if (!std::filesystem::exists(run_dir / kDatabaseName))
    return util::make_error(util::ErrorKind::not_found, "no run store at " + run_dir.string() +
                                                            " (it holds no " +
                                                            std::string(kDatabaseName) + ")");
  return open(run_dir, RunInfo{}, clock);
}

util::Status RunStore::load_or_create_run(const RunInfo& info) {
  PTXBENCH_TRY_ASSIGN(auto transaction, detail::WriteTransaction::begin(*m_db));
  auto& select =
      m_db->prepared("SELECT config_json, ptxbench_version, created_at FROM run WHERE id = 1");
  PTXBENCH_TRY_ASSIGN(auto row, select.step());
  if (row) {
    m_info = RunInfo{select.text(0), select.text(1), select.text(2)};
    select.reset();
    return transaction->commit();
  }
  select.reset();
  m_info = RunInfo{info.config_json, info.ptxbench_version, now()};
  auto& insert = m_db->prepared(
      "INSERT INTO run(id, config_json, ptxbench_version, created_at) VALUES (1, ?1, ?2, ?3)");
  PTXBENCH_TRY(insert.bind(1, m_info.config_json)
                   .bind(2, m_info.ptxbench_version)
                   .bind(3, m_info.created_at)
                   .run());
  return transaction->commit();
}

util::Expected<TrajectoryId> RunStore::open_trajectory(const TrajectoryKey& key) {
  std::lock_guard lock(m_mutex);
  auto& insert = m_db->prepared(
      "INSERT INTO trajectory(model, problem, prompt_variant, sample, status, created_at, "
      "language, condition) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8) ON CONFLICT DO NOTHING");
  PTXBENCH_TRY(insert.bind(1, key.model)
                   .bind(2, key.problem)
                   .bind(3, key.prompt_variant)
                   .bind(4, key.sample)
                   .bind(5, detail::raw(TrajectoryStatus::running))
                   .bind(6, now())
                   .bind(7, trace::to_string(key.language))
                   .bind(8, key.condition)
                   .run());
  auto& select =
      m_db->prepared("SELECT id, language, condition FROM trajectory WHERE model = ?1 AND "
                     "problem = ?2 AND prompt_variant = ?3 AND sample = ?4");
  select.bind(1, key.model).bind(2, key.problem).bind(3, key.prompt_variant).bind(4, key.sample);
  PTXBENCH_TRY_ASSIGN(auto row, select.step());
  if (!row)
    throw util::Fatal("trajectory row vanished after insert");
  TrajectoryId id{select.int64(0)};
  std::string stored = select.text(1);
  std::string stored_condition = select.text(2);
  select.reset();
  if (stored_condition != key.condition)
    return util::make_error(util::ErrorKind::invalid_input,
                            "trajectory " + to_string(key) + " is stored under condition '" +
                                stored_condition + "', not '" + key.condition + "'");
  if (stored != trace::to_string(key.language))
    return util::make_error(util::ErrorKind::invalid_input,
                            "trajectory " + key.model + " / " + key.problem + " / " +
                                key.prompt_variant + " / #" + std::to_string(key.sample) +
                                " is stored as language " + stored + ", not " +
                                std::string(trace::to_string(key.language)));
  return id;
}

namespace {

constexpr std::string_view kTrajectoryColumns =
    "SELECT id, model, problem, prompt_variant, sample, status, exit_reason, created_at, "
    "finished_at, language, condition FROM trajectory ";

util::Expected<TrajectoryRecord> read_trajectory(const detail::Statement& row) {
  TrajectoryRecord record;
  record.id = TrajectoryId{row.int64(0)};
  record.key = TrajectoryKey{row.text(1), row.text(2), row.text(3), row.int64(4)};
  PTXBENCH_TRY_ASSIGN(auto status,
                      detail::decode(kTrajectoryStatuses, row.int64(5), "trajectory.status"));
  record.status = status;
  if (auto raw = row.optional_int64(6)) {
    PTXBENCH_TRY_ASSIGN(auto reason, detail::decode(kExitReasons, *raw, "trajectory.exit_reason"));
    record.exit_reason = reason;
  }
  record.created_at = row.text(7);
  record.finished_at = row.optional_text(8);
  auto language = trace::parse_language(row.text(9));
  if (!language)
    return util::make_error(util::ErrorKind::invalid_input,
                            "trajectory.language: unknown language '" + row.text(9) + "'");
  record.key.language = *language;
  record.key.condition = row.text(10);
  return record;
}

util::Expected<std::vector<TrajectoryRecord>> read_trajectories(detail::Statement& stmt) {
  return stmt.collect<TrajectoryRecord>(read_trajectory);
}

} // namespace

util::Expected<std::optional<TrajectoryRecord>>
RunStore::find_trajectory(const TrajectoryKey& key) {
  std::lock_guard lock(m_mutex);
  auto& stmt = m_db->prepared(std::string(kTrajectoryColumns) +
                              "WHERE model = ?1 AND problem = ?2 AND prompt_variant = ?3 "
                              "AND sample = ?4 AND language = ?5 AND condition = ?6");
  stmt.bind(1, key.model)
      .bind(2, key.problem)
      .bind(3, key.prompt_variant)
      .bind(4, key.sample)
      .bind(5, trace::to_string(key.language))
      .bind(6, key.condition);
  PTXBENCH_TRY_ASSIGN(auto records, read_trajectories(stmt));
  if (records.empty())
    return std::optional<TrajectoryRecord>{};
  return std::optional<TrajectoryRecord>{std::move(records.front())};
}

util::Expected<std::vector<TrajectoryRecord>> RunStore::trajectories() {
  std::lock_guard lock(m_mutex);
  auto& stmt = m_db->prepared(std::string(kTrajectoryColumns) + "ORDER BY id");
  return read_trajectories(stmt);
}

util::Status RunStore::finish_trajectory(TrajectoryId id, ExitReason reason) {
  std::lock_guard lock(m_mutex);
  auto& stmt = m_db->prepared(
      "UPDATE trajectory SET status = ?1, exit_reason = ?2, finished_at = ?3 WHERE id = ?4");
  PTXBENCH_TRY(stmt.bind(1, detail::raw(TrajectoryStatus::finished))
                   .bind(2, detail::raw(reason))
                   .bind(3, now())
                   .bind(4, id.value)
                   .run());
  if (m_db->changes() != 1)
    throw util::Fatal("finish_trajectory: no trajectory " + std::to_string(id.value));
  return util::Ok{};
}

} // namespace ptxbench::store

namespace ptxbench::store {

util::Expected<TrajectoryPrompts> RunStore::set_prompts(TrajectoryId id,
                                                        const TrajectoryPrompts& prompts) {
  {
    std::lock_guard lock(m_mutex);
    PTXBENCH_TRY_ASSIGN(auto transaction, detail::WriteTransaction::begin(*m_db));
    PTXBENCH_TRY_ASSIGN(auto system, put_source(prompts.system));
    PTXBENCH_TRY_ASSIGN(auto task, put_source(prompts.task));
    auto& update =
        m_db->prepared("UPDATE trajectory SET system_prompt_sha256 = ?1, task_prompt_sha256 = ?2 "
                       "WHERE id = ?3 AND system_prompt_sha256 IS NULL");
    PTXBENCH_TRY(update.bind(1, std::string_view(system))
                     .bind(2, std::string_view(task))
                     .bind(3, id.value)
                     .run());
    PTXBENCH_TRY(transaction->commit());
  }
  PTXBENCH_TRY_ASSIGN(auto stored, this->prompts(id));
  if (!stored)
    throw util::Fatal("set_prompts: no trajectory " + std::to_string(id.value));
  return std::move(*stored);
}

util::Expected<std::optional<TrajectoryPrompts>> RunStore::prompts(TrajectoryId id) {
  std::lock_guard lock(m_mutex);
  auto& stmt = m_db->prepared(
      "SELECT s.text, t.text FROM trajectory j JOIN source s ON s.sha256 = j.system_prompt_sha256 "
      "JOIN source t ON t.sha256 = j.task_prompt_sha256 WHERE j.id = ?1");
  PTXBENCH_TRY_ASSIGN(auto row, stmt.bind(1, id.value).step());
  std::optional<TrajectoryPrompts> prompts;
  if (row)
    prompts = TrajectoryPrompts{stmt.text(0), stmt.text(1)};
  stmt.reset();
  return prompts;
}

} // namespace ptxbench::store
