#include "service/task_store.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <unistd.h>

namespace ptxbench::service {
namespace {

constexpr std::string_view kSchema = R"sql(
CREATE TABLE IF NOT EXISTS tasks (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  id TEXT NOT NULL UNIQUE,
  kind INTEGER NOT NULL,
  state INTEGER NOT NULL,
  problem TEXT NOT NULL,
  solution TEXT NOT NULL,
  arch TEXT NOT NULL,
  request TEXT NOT NULL,
  result TEXT,
  needs_gpu TEXT,
  error TEXT,
  device TEXT,
  attempts INTEGER NOT NULL DEFAULT 0,
  submitted_at TEXT NOT NULL,
  started_at TEXT,
  finished_at TEXT);
CREATE INDEX IF NOT EXISTS tasks_by_state ON tasks(state, seq);
)sql";

constexpr std::string_view kSelect =
    "SELECT id, kind, state, problem, solution, arch, result, needs_gpu, error, device, "
    "attempts, submitted_at, started_at, finished_at FROM tasks WHERE id = ?1";

std::int64_t value_of(TaskState state) {
  return static_cast<std::int64_t>(state);
}

util::Error corrupt(const std::string& id, std::string_view what) {
  return util::make_error(util::ErrorKind::io,
                          fmt::format("task {}: stored {} is unreadable", id, what));
}

template <typename Enum, typename Table>
std::optional<Enum> enum_of(std::int64_t value, const Table& table) {
  if (value < 1 || value > static_cast<std::int64_t>(table.size()))
    return std::nullopt;
  return static_cast<Enum>(value);
}

util::Expected<Task> read_task(const store::detail::Statement& row) {
  Task task;
  task.id = row.text(0);
  auto kind = enum_of<TaskKind>(row.int64(1), kTaskKinds);
  auto state = enum_of<TaskState>(row.int64(2), kTaskStates);
  auto arch = compile::parse_arch(row.text(5));
  if (!kind || !state || !arch)
    return corrupt(task.id, "kind, state or arch");
  task.kind = *kind;
  task.state = *state;
  task.problem = row.text(3);
  task.solution_name = row.text(4);
  task.arch = *arch;
  if (auto result = row.optional_text(6)) {
    Json json = Json::parse(*result, nullptr, /*allow_exceptions=*/false);
    if (json.is_discarded())
      return corrupt(task.id, "result");
    task.result = std::move(json);
  }
  task.needs_gpu = row.optional_text(7).value_or("");
  task.error = row.optional_text(8).value_or("");
  task.device = row.optional_text(9).value_or("");
  task.attempts = static_cast<int>(row.int64(10));
  task.submitted_at = row.text(11);
  task.started_at = row.optional_text(12).value_or("");
  task.finished_at = row.optional_text(13).value_or("");
  return task;
}

std::optional<std::string> non_empty(const std::string& text) {
  return text.empty() ? std::nullopt : std::optional<std::string>(text);
}

// The folder's lock file, held for the life of the store (released when the process dies).
util::Expected<int> lock_folder(const std::filesystem::path& dir) {
  const auto path = dir / "lock";
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0)
    return util::make_error(util::ErrorKind::io,
                            fmt::format("cannot open {}: {}", path.string(), std::strerror(errno)));
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    ::close(fd);
    return util::make_error(util::ErrorKind::io,
                            fmt::format("{} is in use by another ptxbench serve (lock {})",
                                        dir.string(), path.string()));
  }
  return fd;
}

} // namespace

util::Expected<std::unique_ptr<TaskStore>> TaskStore::open(const std::filesystem::path& dir) {
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error)
    return util::make_error(util::ErrorKind::io,
                            fmt::format("cannot create {}: {}", dir.string(), error.message()));
  PTXBENCH_TRY_ASSIGN(auto lock, lock_folder(dir));
  auto db = store::detail::Connection::open(dir / kDatabaseName);
  if (!db) {
    ::close(lock);
    return db.take_error();
  }
  std::unique_ptr<TaskStore> out(new TaskStore(dir, std::move(*db), lock));
  PTXBENCH_TRY(out->migrate());
  return out;
}

TaskStore::TaskStore(std::filesystem::path dir, store::detail::Connection db, int lock_fd)
    : m_dir(std::move(dir)), m_db(std::move(db)), m_lock_fd(lock_fd) {}

TaskStore::~TaskStore() {
  if (m_lock_fd >= 0)
    ::close(m_lock_fd);
}

util::Status TaskStore::migrate() {
  std::lock_guard lock(m_mutex);
  return m_db.exec(kSchema);
}

util::Status TaskStore::insert(const Task& task, const Json& request) {
  std::lock_guard lock(m_mutex);
  return m_db
      .prepared("INSERT INTO tasks (id, kind, state, problem, solution, arch, request, "
                "submitted_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)")
      .bind(1, task.id)
      .bind(2, static_cast<std::int64_t>(task.kind))
      .bind(3, value_of(task.state))
      .bind(4, task.problem)
      .bind(5, task.solution_name)
      .bind(6, compile::to_string(task.arch))
      .bind(7, dump_json(request))
      .bind(8, task.submitted_at)
      .run();
}

util::Status TaskStore::mark_running(const std::string& id, const std::string& device) {
  std::lock_guard lock(m_mutex);
  return m_db
      .prepared("UPDATE tasks SET state = ?2, device = ?3, started_at = ?4, "
                "attempts = attempts + 1 WHERE id = ?1")
      .bind(1, id)
      .bind(2, value_of(TaskState::running))
      .bind(3, device)
      .bind(4, utc_now())
      .run();
}

util::Status TaskStore::finish(const Task& task) {
  std::lock_guard lock(m_mutex);
  return m_db
      .prepared("UPDATE tasks SET state = ?2, result = ?3, needs_gpu = ?4, error = ?5, "
                "finished_at = ?6 WHERE id = ?1")
      .bind(1, task.id)
      .bind(2, value_of(task.state))
      .bind(3, task.result ? std::optional<std::string>(dump_json(*task.result)) : std::nullopt)
      .bind(4, non_empty(task.needs_gpu))
      .bind(5, non_empty(task.error))
      .bind(6, task.finished_at)
      .run();
}

util::Expected<std::optional<Task>> TaskStore::find(const std::string& id) {
  std::lock_guard lock(m_mutex);
  auto& statement = m_db.prepared(kSelect).bind(1, id);
  PTXBENCH_TRY_ASSIGN(auto row, statement.step());
  if (!row) {
    statement.reset();
    return std::optional<Task>();
  }
  auto task = read_task(statement);
  statement.reset();
  PTXBENCH_TRY(task);
  return std::optional<Task>(std::move(*task));
}

util::Expected<Json> TaskStore::request(const std::string& id) {
  std::lock_guard lock(m_mutex);
  auto& statement = m_db.prepared("SELECT request FROM tasks WHERE id = ?1").bind(1, id);
  PTXBENCH_TRY_ASSIGN(auto row, statement.step());
  std::string text = row ? statement.text(0) : std::string();
  statement.reset();
  if (text.empty())
    return util::make_error(util::ErrorKind::not_found, "unknown task " + id);
  Json json = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded())
    return corrupt(id, "request");
  return json;
}

util::Expected<std::vector<std::string>> TaskStore::recover() {
  std::lock_guard lock(m_mutex);
  PTXBENCH_TRY(m_db.prepared("UPDATE tasks SET state = ?1, finished_at = ?2, error = ?3 "
                             "WHERE state = ?4 AND attempts >= ?5")
                   .bind(1, value_of(TaskState::failed))
                   .bind(2, utc_now())
                   .bind(3, fmt::format("the server stopped while evaluating this task {} "
                                        "times; it is not tried again",
                                        kMaxAttempts))
                   .bind(4, value_of(TaskState::running))
                   .bind(5, std::int64_t{kMaxAttempts})
                   .run());
  PTXBENCH_TRY(m_db.prepared("UPDATE tasks SET state = ?1 WHERE state = ?2")
                   .bind(1, value_of(TaskState::queued))
                   .bind(2, value_of(TaskState::running))
                   .run());
  return m_db.prepared("SELECT id FROM tasks WHERE state = ?1 ORDER BY seq")
      .bind(1, value_of(TaskState::queued))
      .collect<std::string>([](const store::detail::Statement& row) { return row.text(0); });
}

util::Expected<std::int64_t>
TaskStore::prune_finished(std::chrono::system_clock::time_point cutoff) {
  std::lock_guard lock(m_mutex);
  // finished_at is utc_text(): fixed width, so comparing the texts compares the times.
  PTXBENCH_TRY(m_db.prepared("DELETE FROM tasks WHERE state IN (?1, ?2) AND finished_at < ?3")
                   .bind(1, value_of(TaskState::completed))
                   .bind(2, value_of(TaskState::failed))
                   .bind(3, utc_text(cutoff))
                   .run());
  return m_db.changes();
}

} // namespace ptxbench::service
