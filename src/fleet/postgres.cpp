#include "fleet/postgres.hpp"

#include <array>
#include <cstdlib>
#include <dlfcn.h>
#include <fmt/format.h>
#include <libpq-fe.h>
#include <poll.h>
#include <regex>
#include <string_view>
#include <utility>
#include <vector>

namespace ptxbench::fleet::pg {
namespace {

// libpq's entry points, resolved once from libpq.so.5.
struct Api {
  decltype(&PQconnectdb) connectdb = nullptr;
  decltype(&PQstatus) status = nullptr;
  decltype(&PQerrorMessage) error_message = nullptr;
  decltype(&PQfinish) finish = nullptr;
  decltype(&PQexecParams) exec_params = nullptr;
  decltype(&PQresultStatus) result_status = nullptr;
  decltype(&PQresultErrorField) result_error_field = nullptr;
  decltype(&PQresultErrorMessage) result_error_message = nullptr;
  decltype(&PQclear) clear = nullptr;
  decltype(&PQntuples) ntuples = nullptr;
  decltype(&PQgetvalue) getvalue = nullptr;
  decltype(&PQgetisnull) getisnull = nullptr;
  decltype(&PQcmdTuples) cmd_tuples = nullptr;
  decltype(&PQconsumeInput) consume_input = nullptr;
  decltype(&PQnotifies) notifies = nullptr;
  decltype(&PQfreemem) freemem = nullptr;
  decltype(&PQsocket) socket = nullptr;
  decltype(&PQlibVersion) lib_version = nullptr; // optional
  bool loaded = false;
};

template <typename F> bool resolve(void* library, const char* name, F& slot) {
  slot = reinterpret_cast<F>(::dlsym(library, name));
  return slot != nullptr;
}

Api load() {
  Api api;
  void* library = ::dlopen("libpq.so.5", RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr)
    return api;
  api.loaded =
      resolve(library, "PQconnectdb", api.connectdb) && resolve(library, "PQstatus", api.status) &&
      resolve(library, "PQerrorMessage", api.error_message) &&
      resolve(library, "PQfinish", api.finish) &&
      resolve(library, "PQexecParams", api.exec_params) &&
      resolve(library, "PQresultStatus", api.result_status) &&
      resolve(library, "PQresultErrorField", api.result_error_field) &&
      resolve(library, "PQresultErrorMessage", api.result_error_message) &&
      resolve(library, "PQclear", api.clear) && resolve(library, "PQntuples", api.ntuples) &&
      resolve(library, "PQgetvalue", api.getvalue) &&
      resolve(library, "PQgetisnull", api.getisnull) &&
      resolve(library, "PQcmdTuples", api.cmd_tuples) &&
      resolve(library, "PQconsumeInput", api.consume_input) &&
      resolve(library, "PQnotifies", api.notifies) && resolve(library, "PQfreemem", api.freemem) &&
      resolve(library, "PQsocket", api.socket);
  resolve(library, "PQlibVersion", api.lib_version);
  return api;
}

const Api& api() {
  static const Api instance = load();
  return instance;
}

std::string trimmed(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' '))
    text.pop_back();
  return text;
}

// When a connection whose server stopped answering is given up. A partition drops packets
// without a reset: without these a statement waits out TCP's retransmissions (tcp_retries2,
// about 15 minutes) and an idle connection is probed after two hours, so a worker's heartbeat
// and finish() hang instead of reconnecting. 10 s without an acknowledgement (or 5 s idle and
// then 5 unanswered probes a second apart) is far past a healthy network's pauses (TCP's
// retransmissions back off 0.2, 0.4, ... 3.2 s) and short against what waits on it: the
// default lease (60 s, renewed every 20 s) and the broker's reconnect window (120 s), whose
// backoff takes over once the call fails.
constexpr std::array<std::pair<std::string_view, std::string_view>, 5> kDeadPeerSettings{{
    {"keepalives", "1"},
    {"keepalives_idle", "5"},
    {"keepalives_interval", "1"},
    {"keepalives_count", "5"},
    {"tcp_user_timeout", "10000"}, // milliseconds; libpq 12 and later
}};

bool is_uri(const std::string& url) {
  return url.starts_with("postgresql://") || url.starts_with("postgres://");
}

// Whether `url` (a URI's query, or key=value words) sets `key` itself.
bool sets(const std::string& url, std::string_view key) {
  if (!is_uri(url))
    return std::regex_search(url, std::regex("(^|\\s)" + std::string(key) + "\\s*="));
  const std::size_t query = url.find('?');
  for (std::size_t start = query; start != std::string::npos; start = url.find('&', start + 1))
    if (url.compare(start + 1, key.size() + 1, std::string(key) + "=") == 0)
      return true;
  return false;
}

// `url` with a connect timeout and the dead-peer settings, where it does not set them itself.
std::string with_defaults(const std::string& url, std::chrono::seconds connect_timeout) {
  std::vector<std::pair<std::string, std::string>> settings{
      {"connect_timeout", std::to_string(std::max<long>(1, connect_timeout.count()))}};
  const int version = api().lib_version ? api().lib_version() : 0;
  for (const auto& [key, value] : kDeadPeerSettings)
    if (key != "tcp_user_timeout" || version >= 120000)
      settings.emplace_back(key, value);
  std::string out = url;
  for (const auto& [key, value] : settings) {
    if (sets(url, key))
      continue;
    const bool first_query = out.find('?') == std::string::npos;
    out += (is_uri(url) ? (first_query ? "?" : "&") : " ") + key + "=" + value;
  }
  return out;
}

} // namespace

bool client_available() {
  return api().loaded;
}

std::string redact(const std::string& url) {
  static const std::regex uri_password(R"(^(postgres(?:ql)?://[^:/@]*):[^@]*@)");
  static const std::regex keyword_password(R"(password\s*=\s*('[^']*'|\S+))");
  std::string out = std::regex_replace(url, uri_password, "$1:***@");
  return std::regex_replace(out, keyword_password, "password=***");
}

Result::Result(pg_result* result) : m_result(result) {}
Result::Result(Result&& other) noexcept : m_result(std::exchange(other.m_result, nullptr)) {}
Result& Result::operator=(Result&& other) noexcept {
  if (this != &other) {
    if (m_result != nullptr)
      api().clear(m_result);
    m_result = std::exchange(other.m_result, nullptr);
  }
  return *this;
}
Result::~Result() {
  if (m_result != nullptr)
    api().clear(m_result);
}

int Result::rows() const {
  return api().ntuples(m_result);
}
std::int64_t Result::affected() const {
  const char* text = api().cmd_tuples(m_result);
  return text == nullptr || *text == '\0' ? 0 : std::strtoll(text, nullptr, 10);
}
bool Result::is_null(int row, int column) const {
  return api().getisnull(m_result, row, column) != 0;
}
std::string Result::text(int row, int column) const {
  return api().getvalue(m_result, row, column);
}
std::optional<std::string> Result::optional_text(int row, int column) const {
  return is_null(row, column) ? std::nullopt : std::optional(text(row, column));
}
std::int64_t Result::int64(int row, int column) const {
  return is_null(row, column) ? 0
                              : std::strtoll(api().getvalue(m_result, row, column), nullptr, 10);
}
double Result::real(int row, int column) const {
  return is_null(row, column) ? 0.0 : std::strtod(api().getvalue(m_result, row, column), nullptr);
}

util::Expected<Connection> Connection::open(const std::string& url, std::chrono::seconds timeout) {
  if (!api().loaded)
    return util::make_error(util::ErrorKind::unsupported,
                            "PostgreSQL's client library (libpq.so.5) is not installed on this "
                            "machine: install libpq5 to use --broker");
  pg_conn* connection = api().connectdb(with_defaults(url, timeout).c_str());
  if (connection == nullptr)
    throw util::Fatal("libpq: out of memory");
  if (api().status(connection) != CONNECTION_OK) {
    const std::string why = trimmed(api().error_message(connection));
    api().finish(connection);
    return util::make_error(util::ErrorKind::transport,
                            fmt::format("broker {}: {}", redact(url), why));
  }
  Connection opened(connection);
  // The schema's `IF NOT EXISTS` notices are not news; warnings and errors still are.
  PTXBENCH_TRY(opened.exec("SET client_min_messages TO warning"));
  return opened;
}

Connection::Connection(Connection&& other) noexcept
    : m_connection(std::exchange(other.m_connection, nullptr)) {}
Connection& Connection::operator=(Connection&& other) noexcept {
  if (this != &other) {
    if (m_connection != nullptr)
      api().finish(m_connection);
    m_connection = std::exchange(other.m_connection, nullptr);
  }
  return *this;
}
Connection::~Connection() {
  if (m_connection != nullptr)
    api().finish(m_connection);
}

bool Connection::usable() const {
  return m_connection != nullptr && api().status(m_connection) == CONNECTION_OK;
}

util::Error Connection::lost(const std::string& what) const {
  return util::make_error(util::ErrorKind::transport,
                          "the broker's connection was lost: " +
                              trimmed(m_connection ? api().error_message(m_connection) : what));
}

util::Expected<Result> Connection::exec(const std::string& sql, const std::vector<Param>& params) {
  std::vector<const char*> values;
  values.reserve(params.size());
  for (const Param& param : params)
    values.push_back(param ? param->c_str() : nullptr);
  Result result(api().exec_params(m_connection, sql.c_str(), static_cast<int>(values.size()),
                                  nullptr, values.data(), nullptr, nullptr, 0));
  const ExecStatusType status = api().result_status(result.m_result);
  if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK)
    return result;
  if (!usable())
    return lost("no answer");
  const char* state = api().result_error_field(result.m_result, PG_DIAG_SQLSTATE);
  const std::string code = state == nullptr ? "" : state;
  const std::string message = trimmed(api().result_error_message(result.m_result));
  // Class 42 (syntax, an undefined table or column) is a bug; 08 and 57P a lost server.
  if (code.starts_with("42"))
    throw util::Fatal(fmt::format("broker SQL: {} ({}): {}", message, code, sql));
  if (code.starts_with("08") || code.starts_with("57P"))
    return lost(message);
  return util::make_error(util::ErrorKind::io, fmt::format("the broker refused: {}", message));
}

util::Expected<std::vector<std::string>> Connection::notifications(std::chrono::milliseconds wait) {
  std::vector<std::string> payloads;
  auto drain = [&] {
    while (PGnotify* notify = api().notifies(m_connection)) {
      payloads.emplace_back(notify->extra == nullptr ? "" : notify->extra);
      api().freemem(notify);
    }
  };
  if (api().consume_input(m_connection) == 0)
    return lost("no input");
  drain();
  if (!payloads.empty())
    return payloads;
  pollfd fd{api().socket(m_connection), POLLIN, 0};
  if (fd.fd < 0)
    return lost("no socket");
  if (::poll(&fd, 1, static_cast<int>(wait.count())) > 0) {
    if (api().consume_input(m_connection) == 0)
      return lost("no input");
    drain();
  }
  return payloads;
}

util::Expected<Transaction> Transaction::begin(Connection& connection) {
  PTXBENCH_TRY(connection.exec("BEGIN"));
  return Transaction(connection);
}
Transaction::Transaction(Transaction&& other) noexcept
    : m_connection(std::exchange(other.m_connection, nullptr)) {}
Transaction::~Transaction() {
  if (m_connection != nullptr && m_connection->usable())
    (void)m_connection->exec("ROLLBACK");
}
util::Status Transaction::commit() {
  Connection* connection = std::exchange(m_connection, nullptr);
  PTXBENCH_TRY(connection->exec("COMMIT"));
  return util::Ok{};
}

} // namespace ptxbench::fleet::pg
