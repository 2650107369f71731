// Move-only RAII over the SQLite C API (internal to store/): a connection, prepared
// statements cached per connection, and a write transaction that rolls back unless committed.
// SQLite failures an operator can cause (disk full, database locked past the busy timeout,
// a file that is not a database) come back as util::Error{io}; misuse (bad SQL, binding a
// parameter that does not exist) throws util::Fatal.
#pragma once

#include "util/error.hpp"

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

struct sqlite3;
struct sqlite3_stmt;

namespace ptxbench::store::detail {

class Statement {
public:
  Statement(sqlite3* db, sqlite3_stmt* stmt) : m_db(db), m_stmt(stmt) {}
  Statement(Statement&& other) noexcept;
  Statement& operator=(Statement&&) = delete;
  Statement(const Statement&) = delete;
  ~Statement();

  // Parameters are 1-based, as in SQL text `?1`, `?2`.
  Statement& bind(int index, std::int64_t value);
  Statement& bind(int index, double value);
  Statement& bind(int index, std::string_view value);
  Statement& bind(int index, const std::string& value) {
    return bind(index, std::string_view(value));
  }
  Statement& bind(int index, const char* value) { return bind(index, std::string_view(value)); }
  Statement& bind(int index, const std::optional<std::int64_t>& value);
  Statement& bind(int index, const std::optional<double>& value);
  Statement& bind(int index, const std::optional<std::string>& value);
  Statement& bind_null(int index);

  // One step: true while a row is available, false when done; errors become io errors.
  util::Expected<bool> step();
  // Steps to completion (for writes).
  util::Status run();
  // Clears bindings and rewinds, ready for the next use.
  void reset();
  // Steps through every row, turning each into a T with `read(*this)` (which returns T or
  // util::Expected<T>), then resets; the first error ends the walk and is returned.
  template <typename T, typename Read> util::Expected<std::vector<T>> collect(Read&& read);

  // Columns are 0-based.
  std::int64_t int64(int column) const;
  double real(int column) const;
  std::string text(int column) const;
  bool is_null(int column) const;
  std::optional<std::int64_t> optional_int64(int column) const;
  std::optional<double> optional_real(int column) const;
  std::optional<std::string> optional_text(int column) const;

private:
  void check_bind(int rc, int index);
  sqlite3* m_db;
  sqlite3_stmt* m_stmt;
};

template <typename T, typename Read>
util::Expected<std::vector<T>> Statement::collect(Read&& read) {
  std::vector<T> rows;
  for (;;) {
    PTXBENCH_TRY_ASSIGN(auto row, step());
    if (!row)
      break;
    auto value = read(*this);
    if constexpr (std::is_same_v<decltype(value), T>) {
      rows.push_back(std::move(value));
    } else {
      if (!value) {
        reset();
        return value.take_error();
      }
      rows.push_back(std::move(*value));
    }
  }
  reset();
  return rows;
}

class Connection {
public:
  // Opens (creating when absent) the database at `path`, with foreign keys on, WAL and a busy
  // timeout so that several connections can write the same file.
  static util::Expected<Connection> open(const std::filesystem::path& path);
  Connection(Connection&& other) noexcept;
  Connection& operator=(Connection&&) = delete;
  Connection(const Connection&) = delete;
  ~Connection();

  // Runs one or more statements without results (schema, pragmas).
  util::Status exec(std::string_view sql);
  // The cached statement for `sql`, reset and ready to bind; the cache key is the text.
  Statement& prepared(std::string_view sql);
  std::int64_t last_insert_rowid() const;
  std::int64_t changes() const;

private:
  explicit Connection(sqlite3* db) : m_db(db) {}
  sqlite3* m_db;
  std::map<std::string, std::unique_ptr<Statement>, std::less<>> m_statements;
};

// BEGIN IMMEDIATE on construction (takes the write lock at once, so two writers never
// deadlock upgrading read locks); ROLLBACK on destruction unless commit() succeeded.
class WriteTransaction {
public:
  static util::Expected<std::unique_ptr<WriteTransaction>> begin(Connection& db);
  ~WriteTransaction();
  WriteTransaction(const WriteTransaction&) = delete;
  WriteTransaction& operator=(const WriteTransaction&) = delete;
  util::Status commit();

private:
  explicit WriteTransaction(Connection& db) : m_db(db) {}
  Connection& m_db;
  bool m_done = false;
};

util::Error sqlite_error(sqlite3* db, std::string_view what);

} // namespace ptxbench::store::detail
