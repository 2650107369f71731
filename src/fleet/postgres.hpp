// Move-only RAII over libpq (internal to fleet/): a connection, the result of one statement
// with text parameters, LISTEN/NOTIFY wake-ups, and a transaction that rolls back unless
// committed.
//
// libpq is loaded on first use (dlopen of libpq.so.5), not linked: a ptxbench binary starts on
// a GPU host that has no PostgreSQL client, and only `--broker` needs one there.
//
// Error policy: a connection that cannot be made or is lost (server down, restarted, network
// gone) is util::Error{transport}, which callers retry with backoff; a statement the server
// refuses for a reason an operator can cause (a serialization failure, a full disk, a
// read-only standby) is util::Error{io}; SQL the server cannot parse is a bug and throws
// util::Fatal. No message carries the connection's password.
#pragma once

#include "util/error.hpp"

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

struct pg_conn;
struct pg_result;

namespace ptxbench::fleet::pg {

// A statement's parameter: text, or SQL NULL.
using Param = std::optional<std::string>;

class Result {
public:
  explicit Result(pg_result* result);
  Result(Result&& other) noexcept;
  Result& operator=(Result&& other) noexcept;
  Result(const Result&) = delete;
  Result& operator=(const Result&) = delete;
  ~Result();

  int rows() const;
  // Rows an INSERT, UPDATE or DELETE touched.
  std::int64_t affected() const;
  bool is_null(int row, int column) const;
  std::string text(int row, int column) const;
  std::optional<std::string> optional_text(int row, int column) const;
  std::int64_t int64(int row, int column) const;
  double real(int row, int column) const;

private:
  friend class Connection;
  pg_result* m_result = nullptr;
};

class Connection {
public:
  // Connects to `url` (postgresql://user@host:port/db, or a key=value string) within
  // `timeout`; transport when the server cannot be reached or refuses. A call on a connection
  // whose server stopped answering (a partition: no reset comes) fails as lost within about
  // 10 s (TCP keepalives and tcp_user_timeout), where the URL does not set those itself.
  static util::Expected<Connection> open(const std::string& url,
                                         std::chrono::seconds timeout = std::chrono::seconds(10));
  Connection(Connection&& other) noexcept;
  Connection& operator=(Connection&& other) noexcept;
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;
  ~Connection();

  // Runs one statement ($1, $2, … are `params`).
  util::Expected<Result> exec(const std::string& sql, const std::vector<Param>& params = {});
  // Whether the connection is still usable (false once the server has gone).
  bool usable() const;
  // Waits up to `wait` for a NOTIFY on a channel this connection LISTENs on; the payloads
  // received (empty when the wait passed). transport when the connection is lost.
  util::Expected<std::vector<std::string>> notifications(std::chrono::milliseconds wait);

private:
  explicit Connection(pg_conn* connection) : m_connection(connection) {}
  util::Error lost(const std::string& what) const;
  pg_conn* m_connection = nullptr;
};

// BEGIN on construction, ROLLBACK on destruction unless commit() succeeded.
class Transaction {
public:
  static util::Expected<Transaction> begin(Connection& connection);
  Transaction(Transaction&& other) noexcept;
  Transaction& operator=(Transaction&&) = delete;
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  ~Transaction();
  util::Status commit();

private:
  explicit Transaction(Connection& connection) : m_connection(&connection) {}
  Connection* m_connection;
};

// The URL with its password replaced by "***" (what logs and errors may show).
std::string redact(const std::string& url);

// Whether libpq can be loaded on this machine (false: `--broker` cannot work here).
bool client_available();

} // namespace ptxbench::fleet::pg
