#include "store/sqlite.hpp"

#include <chrono>
#include <sqlite3.h>

namespace ptxbench::store::detail {
namespace {

constexpr std::chrono::milliseconds kBusyTimeout{30000};

} // namespace

util::Error sqlite_error(sqlite3* db, std::string_view what) {
  std::string message = "sqlite: " + std::string(what);
  if (db != nullptr)
    message += ": " + std::string(sqlite3_errmsg(db));
  return util::make_error(util::ErrorKind::io, std::move(message));
}

Statement::Statement(Statement&& other) noexcept : m_db(other.m_db), m_stmt(other.m_stmt) {
  other.m_stmt = nullptr;
}

Statement::~Statement() {
  if (m_stmt != nullptr)
    sqlite3_finalize(m_stmt);
}

void Statement::check_bind(int rc, int index) {
  if (rc != SQLITE_OK)
    throw util::Fatal("sqlite bind of parameter " + std::to_string(index) +
                      " failed: " + sqlite3_errmsg(m_db) + " in: " + sqlite3_sql(m_stmt));
}

Statement& Statement::bind(int index, std::int64_t value) {
  check_bind(sqlite3_bind_int64(m_stmt, index, value), index);
  return *this;
}

Statement& Statement::bind(int index, double value) {
  check_bind(sqlite3_bind_double(m_stmt, index, value), index);
  return *this;
}

Statement& Statement::bind(int index, std::string_view value) {
  check_bind(
      sqlite3_bind_text64(m_stmt, index, value.data(), value.size(), SQLITE_TRANSIENT, SQLITE_UTF8),
      index);
  return *this;
}

Statement& Statement::bind(int index, const std::optional<std::int64_t>& value) {
  return value ? bind(index, *value) : bind_null(index);
}

Statement& Statement::bind(int index, const std::optional<double>& value) {
  return value ? bind(index, *value) : bind_null(index);
}

Statement& Statement::bind(int index, const std::optional<std::string>& value) {
  return value ? bind(index, std::string_view(*value)) : bind_null(index);
}

Statement& Statement::bind_null(int index) {
  check_bind(sqlite3_bind_null(m_stmt, index), index);
  return *this;
}

util::Expected<bool> Statement::step() {
  int rc = sqlite3_step(m_stmt);
  if (rc == SQLITE_ROW)
    return true;
  if (rc == SQLITE_DONE)
    return false;
  util::Error error = sqlite_error(m_db, sqlite3_sql(m_stmt));
  sqlite3_reset(m_stmt);
  return error;
}

util::Status Statement::run() {
  for (;;) {
    PTXBENCH_TRY_ASSIGN(auto more, step());
    if (!more)
      break;
  }
  reset();
  return util::Ok{};
}

void Statement::reset() {
  sqlite3_reset(m_stmt);
  sqlite3_clear_bindings(m_stmt);
}

std::int64_t Statement::int64(int column) const {
  return sqlite3_column_int64(m_stmt, column);
}
double Statement::real(int column) const {
  return sqlite3_column_double(m_stmt, column);
}

std::string Statement::text(int column) const {
  const auto* data = sqlite3_column_text(m_stmt, column);
  int size = sqlite3_column_bytes(m_stmt, column);
  if (data == nullptr)
    return {};
  return std::string(reinterpret_cast<const char*>(data), static_cast<std::size_t>(size));
}

bool Statement::is_null(int column) const {
  return sqlite3_column_type(m_stmt, column) == SQLITE_NULL;
}

std::optional<std::int64_t> Statement::optional_int64(int column) const {
  if (is_null(column))
    return std::nullopt;
  return int64(column);
}

std::optional<double> Statement::optional_real(int column) const {
  if (is_null(column))
    return std::nullopt;
  return real(column);
}

std::optional<std::string> Statement::optional_text(int column) const {
  if (is_null(column))
    return std::nullopt;
  return text(column);
}

util::Expected<Connection> Connection::open(const std::filesystem::path& path) {
  sqlite3* raw = nullptr;
  int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX;
  int rc = sqlite3_open_v2(path.c_str(), &raw, flags, nullptr);
  Connection db(raw);
  if (rc != SQLITE_OK)
    return sqlite_error(raw, "cannot open " + path.string());
  sqlite3_extended_result_codes(raw, 1);
  sqlite3_busy_timeout(raw, static_cast<int>(kBusyTimeout.count()));
  // FULL: a committed turn survives a power cut, not only a killed process; one fsync per
  // write is nothing next to a model call or a GPU evaluation.
  auto status = db.exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; "
                        "PRAGMA foreign_keys=ON;");
  if (!status)
    return util::make_error(util::ErrorKind::io, path.string() + ": " + status.error().message);
  return db;
}

Connection::Connection(Connection&& other) noexcept
    : m_db(other.m_db), m_statements(std::move(other.m_statements)) {
  other.m_db = nullptr;
}

Connection::~Connection() {
  m_statements.clear(); // statements must be finalized before the connection closes
  if (m_db != nullptr)
    sqlite3_close(m_db);
}

util::Status Connection::exec(std::string_view sql) {
  std::string text(sql);
  char* message = nullptr;
  int rc = sqlite3_exec(m_db, text.c_str(), nullptr, nullptr, &message);
  if (rc == SQLITE_OK)
    return util::Ok{};
  std::string what = message != nullptr ? message : sqlite3_errstr(rc);
  sqlite3_free(message);
  return util::make_error(util::ErrorKind::io, "sqlite: " + what);
}

Statement& Connection::prepared(std::string_view sql) {
  auto found = m_statements.find(sql);
  if (found != m_statements.end()) {
    found->second->reset();
    return *found->second;
  }
  sqlite3_stmt* stmt = nullptr;
  int rc = sqlite3_prepare_v3(m_db, sql.data(), static_cast<int>(sql.size()),
                              SQLITE_PREPARE_PERSISTENT, &stmt, nullptr);
  if (rc != SQLITE_OK)
    throw util::Fatal("sqlite prepare failed: " + std::string(sqlite3_errmsg(m_db)) +
                      " in: " + std::string(sql));
  auto inserted = m_statements.emplace(std::string(sql), std::make_unique<Statement>(m_db, stmt));
  return *inserted.first->second;
}

std::int64_t Connection::last_insert_rowid() const {
  return sqlite3_last_insert_rowid(m_db);
}
std::int64_t Connection::changes() const {
  return sqlite3_changes64(m_db);
}

util::Expected<std::unique_ptr<WriteTransaction>> WriteTransaction::begin(Connection& db) {
  PTXBENCH_TRY(db.exec("BEGIN IMMEDIATE"));
  return std::unique_ptr<WriteTransaction>(new WriteTransaction(db));
}

WriteTransaction::~WriteTransaction() {
  if (!m_done)
    (void)m_db.exec("ROLLBACK");
}

util::Status WriteTransaction::commit() {
  auto status = m_db.exec("COMMIT");
  if (status)
    m_done = true;
  return status;
}

} // namespace ptxbench::store::detail
