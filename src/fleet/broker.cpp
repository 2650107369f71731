#include "fleet/broker.hpp"

#include <algorithm>
#include <array>
#include <fmt/format.h>
#include <thread>
#include <utility>

namespace ptxbench::fleet {
namespace {

using Json = nlohmann::ordered_json;
using Clock = std::chrono::steady_clock;

constexpr std::array<std::string_view, 4> kStateNames{"queued", "running", "completed", "failed"};
constexpr std::int64_t kSchemaLock = 0x70747862656e6368; // "ptxbench"

constexpr const char* kSchema = R"(
CREATE TABLE IF NOT EXISTS ptxbench_meta (key text PRIMARY KEY, value text NOT NULL);
CREATE TABLE IF NOT EXISTS ptxbench_tasks (
  id bigserial PRIMARY KEY,
  run text NOT NULL,
  client_key text NOT NULL,
  problem text NOT NULL,
  arch text NOT NULL,
  language text NOT NULL,
  priority integer NOT NULL DEFAULT 0,
  request text NOT NULL,
  state text NOT NULL DEFAULT 'queued',
  attempt bigint NOT NULL DEFAULT 0,
  deaths bigint NOT NULL DEFAULT 0,
  requeues bigint NOT NULL DEFAULT 0,
  requeue_reason text,
  worker text,
  lease_until timestamptz,
  submitted_at timestamptz NOT NULL DEFAULT now(),
  started_at timestamptz,
  finished_at timestamptz,
  result text,
  needs_gpu text,
  error text,
  UNIQUE (run, client_key));
CREATE INDEX IF NOT EXISTS ptxbench_tasks_open ON ptxbench_tasks (arch, state)
  WHERE state IN ('queued', 'running');
CREATE TABLE IF NOT EXISTS ptxbench_runs (run text PRIMARY KEY, last_served timestamptz);
CREATE TABLE IF NOT EXISTS ptxbench_workers (
  id text PRIMARY KEY, host text NOT NULL, device text NOT NULL, gpu text NOT NULL,
  arch text NOT NULL, state text NOT NULL, health text NOT NULL, task bigint,
  seen_at timestamptz NOT NULL DEFAULT now(), finished bigint NOT NULL DEFAULT 0);
)";

// Tasks whose lease expired for the max_deaths-th time fail with the reason.
constexpr const char* kFailPoisoned = R"(
UPDATE ptxbench_tasks SET state = 'failed', finished_at = now(), lease_until = NULL,
  deaths = deaths + 1,
  error = format('%s workers took this task and none finished it (the last, %s, stopped renewing '
                 'its lease): it is failed so that it cannot take the fleet down', deaths + 1, worker)
WHERE state = 'running' AND lease_until < now() AND deaths + 1 >= $1::bigint
RETURNING id)";

// The first task the worker can run: priority, then the run served longest ago, then age.
constexpr const char* kLease = R"(
WITH pick AS (
  SELECT t.id FROM ptxbench_tasks t LEFT JOIN ptxbench_runs r ON r.run = t.run
  WHERE t.arch = $2 AND (t.state = 'queued' OR (t.state = 'running' AND t.lease_until < now()))
  ORDER BY t.priority DESC, r.last_served ASC NULLS FIRST, t.id
  LIMIT 1 FOR UPDATE OF t SKIP LOCKED)
UPDATE ptxbench_tasks t SET
  deaths = t.deaths + CASE WHEN t.state = 'running' THEN 1 ELSE 0 END,
  state = 'running', attempt = t.attempt + 1, worker = $1,
  lease_until = now() + make_interval(secs => $3::double precision), started_at = now()
FROM pick WHERE t.id = pick.id
RETURNING t.id, t.attempt, t.run, t.request)";

// Times by the database's clock, as ISO-8601 UTC text.
constexpr const char* kTaskColumns = R"(id, run, problem, state, attempt, deaths, requeues, worker,
  result, needs_gpu, error, arch, request,
  to_char(submitted_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
  to_char(started_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
  to_char(finished_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))";

// Compact JSON; invalid UTF-8 (a candidate's log can hold any bytes) becomes U+FFFD.
std::string text_of(const Json& json) {
  return json.dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::string seconds_text(std::chrono::seconds seconds) {
  return std::to_string(seconds.count());
}

std::string id_array(const std::vector<std::int64_t>& ids) {
  std::string out = "{";
  for (std::size_t i = 0; i < ids.size(); ++i)
    out += (i ? "," : "") + std::to_string(ids[i]);
  return out + "}";
}

util::Error broker_error(util::ErrorKind kind, const std::string& what) {
  return util::make_error(kind, "broker: " + what);
}

FleetState state_named(const std::string& name) {
  for (std::size_t i = 0; i < kStateNames.size(); ++i)
    if (kStateNames[i] == name)
      return static_cast<FleetState>(i + 1);
  throw util::Fatal("broker: a task in the unknown state '" + name + "'");
}

util::Expected<FleetTask> task_row(const pg::Result& rows, int row) {
  FleetTask task;
  task.id = rows.int64(row, 0);
  task.run = rows.text(row, 1);
  task.problem = rows.text(row, 2);
  task.state = state_named(rows.text(row, 3));
  task.attempts = rows.int64(row, 4);
  task.deaths = rows.int64(row, 5);
  task.requeues = rows.int64(row, 6);
  task.worker = rows.optional_text(row, 7).value_or("");
  if (auto result = rows.optional_text(row, 8)) {
    Json json = Json::parse(*result, nullptr, /*allow_exceptions=*/false);
    if (json.is_discarded())
      return broker_error(util::ErrorKind::bad_response,
                          fmt::format("task {}: the stored result is not JSON", task.id));
    task.result = std::move(json);
  }
  task.needs_gpu = rows.optional_text(row, 9).value_or("");
  task.error = rows.optional_text(row, 10).value_or("");
  task.arch = rows.text(row, 11);
  task.request = rows.text(row, 12);
  task.submitted_at = rows.optional_text(row, 13).value_or("");
  task.started_at = rows.optional_text(row, 14).value_or("");
  task.finished_at = rows.optional_text(row, 15).value_or("");
  return task;
}

bool finished(FleetState state) {
  return state == FleetState::completed || state == FleetState::failed;
}

} // namespace

std::string_view to_string(FleetState state) {
  return kStateNames[static_cast<std::size_t>(state) - 1];
}

util::Status check_broker_url(const std::string& url) {
  if (pg::redact(url) != url)
    return util::make_error(util::ErrorKind::invalid_input,
                            fmt::format("--broker \"{}\": a password does not belong in the URL "
                                        "(command lines and run stores are read by others): put "
                                        "it in $PGPASSWORD or ~/.pgpass",
                                        pg::redact(url)));
  if (url.starts_with("postgresql://") || url.starts_with("postgres://"))
    return util::Ok{};
  return util::make_error(util::ErrorKind::invalid_input,
                          fmt::format("--broker \"{}\": expected a PostgreSQL URL such as "
                                      "postgresql://ptxbench@db-host:5432/ptxbench",
                                      pg::redact(url)));
}

util::Expected<std::unique_ptr<Broker>> Broker::connect(BrokerOptions options) {
  PTXBENCH_TRY(check_broker_url(options.url));
  std::unique_ptr<Broker> broker(new Broker(std::move(options)));
  PTXBENCH_TRY(broker->reconnect());
  PTXBENCH_TRY(broker->create_schema());
  return broker;
}

util::Status Broker::reconnect() {
  m_connection.reset();
  m_listening_done = m_listening_queued = false;
  PTXBENCH_TRY_ASSIGN(auto connection, pg::Connection::open(m_options.url));
  m_connection.emplace(std::move(connection));
  if (std::exchange(m_lost, false) && m_options.log)
    m_options.log(fmt::format("broker {}: connected again", pg::redact(m_options.url)));
  return util::Ok{};
}

void Broker::note_lost(const util::Error& error) {
  if (!std::exchange(m_lost, true) && m_options.log)
    m_options.log(fmt::format("reconnecting for up to {} s: {}", m_options.reconnect_window.count(),
                              error.message));
}

template <typename Op>
auto Broker::with_connection(Op op) -> decltype(op(std::declval<pg::Connection&>())) {
  const auto deadline = Clock::now() + m_options.reconnect_window;
  auto backoff = std::chrono::milliseconds(100);
  for (;;) {
    util::Status connected = util::Ok{};
    if (!m_connection || !m_connection->usable())
      connected = reconnect();
    if (connected) {
      auto result = op(*m_connection);
      if (result || result.error().kind != util::ErrorKind::transport)
        return result;
      note_lost(result.error());
      if (Clock::now() + backoff > deadline)
        return result;
      m_connection.reset();
    } else {
      if (connected.error().kind != util::ErrorKind::transport)
        return connected.error();
      note_lost(connected.error());
      if (Clock::now() + backoff > deadline)
        return connected.error();
    }
    std::this_thread::sleep_for(backoff);
    backoff = std::min(backoff * 2, std::chrono::milliseconds(5000));
  }
}

util::Status Broker::create_schema() {
  return with_connection([&](pg::Connection& db) -> util::Status {
    PTXBENCH_TRY_ASSIGN(auto transaction, pg::Transaction::begin(db));
    PTXBENCH_TRY(
        db.exec("SELECT pg_advisory_xact_lock($1::bigint)", {std::to_string(kSchemaLock)}));
    // One statement per call: the extended protocol takes no scripts.
    const std::string schema = kSchema;
    for (std::size_t start = 0, end; (end = schema.find(';', start)) != std::string::npos;
         start = end + 1)
      PTXBENCH_TRY(db.exec(schema.substr(start, end - start)));
    PTXBENCH_TRY(db.exec("INSERT INTO ptxbench_meta VALUES ('schema_version', $1) "
                         "ON CONFLICT (key) DO NOTHING",
                         {std::to_string(kBrokerSchemaVersion)}));
    PTXBENCH_TRY_ASSIGN(auto version,
                        db.exec("SELECT value FROM ptxbench_meta WHERE key = 'schema_version'"));
    const std::int64_t found = version.int64(0, 0);
    if (found > kBrokerSchemaVersion)
      return broker_error(util::ErrorKind::unsupported,
                          fmt::format("the database holds schema version {}, newer than this "
                                      "build's {}: update ptxbench",
                                      found, kBrokerSchemaVersion));
    return transaction.commit();
  });
}

util::Expected<std::int64_t> Broker::submit(const Submission& submission) {
  const std::string request = text_of(exec::to_json(submission.request));
  return with_connection([&](pg::Connection& db) -> util::Expected<std::int64_t> {
    PTXBENCH_TRY_ASSIGN(auto transaction, pg::Transaction::begin(db));
    PTXBENCH_TRY_ASSIGN(auto known, db.exec("SELECT id FROM ptxbench_tasks WHERE run = $1 AND "
                                            "client_key = $2",
                                            {submission.run, submission.client_key}));
    if (known.rows() == 1)
      return known.int64(0, 0);
    PTXBENCH_TRY_ASSIGN(auto queued, db.exec("SELECT count(*) FROM ptxbench_tasks WHERE run = $1 "
                                             "AND state = 'queued'",
                                             {submission.run}));
    if (queued.int64(0, 0) >= m_options.max_queued_per_run)
      return broker_error(util::ErrorKind::rate_limited,
                          fmt::format("run {} already has {} queued tasks (the bound per run)",
                                      submission.run, queued.int64(0, 0)));
    const exec::EvalOptions& o = submission.request.options;
    PTXBENCH_TRY_ASSIGN(
        auto inserted,
        db.exec("INSERT INTO ptxbench_tasks (run, client_key, problem, arch, language, priority, "
                "request) VALUES ($1, $2, $3, $4, $5, $6::integer, $7) RETURNING id",
                {submission.run, submission.client_key, submission.request.problem,
                 std::string(compile::to_string(o.arch)),
                 std::string(compile::to_string(o.language)), std::to_string(submission.priority),
                 request}));
    PTXBENCH_TRY(db.exec("INSERT INTO ptxbench_runs (run) VALUES ($1) ON CONFLICT DO NOTHING",
                         {submission.run}));
    PTXBENCH_TRY(db.exec("SELECT pg_notify('ptxbench_queued', '')"));
    PTXBENCH_TRY(transaction.commit());
    return inserted.int64(0, 0);
  });
}

util::Expected<std::optional<LeasedTask>> Broker::lease(const WorkerInfo& worker) {
  using Leased = std::optional<LeasedTask>;
  return with_connection([&](pg::Connection& db) -> util::Expected<Leased> {
    PTXBENCH_TRY_ASSIGN(auto transaction, pg::Transaction::begin(db));
    PTXBENCH_TRY_ASSIGN(auto poisoned,
                        db.exec(kFailPoisoned, {std::to_string(m_options.max_deaths)}));
    for (int row = 0; row < poisoned.rows(); ++row)
      PTXBENCH_TRY(db.exec("SELECT pg_notify('ptxbench_done', $1)", {poisoned.text(row, 0)}));
    PTXBENCH_TRY_ASSIGN(auto picked,
                        db.exec(kLease, {worker.id, std::string(compile::to_string(worker.arch)),
                                         seconds_text(m_options.lease)}));
    Leased leased;
    if (picked.rows() == 1) {
      LeasedTask task{picked.int64(0, 0), picked.int64(0, 1), picked.text(0, 2), worker.id, {}};
      const Json request = Json::parse(picked.text(0, 3), nullptr, /*allow_exceptions=*/false);
      auto read = exec::eval_request_from_json(request, fmt::format("broker task {}", task.id));
      if (!read) // the submitter wrote it with the same codec: a bug or a newer client
        PTXBENCH_TRY(db.exec("UPDATE ptxbench_tasks SET state = 'failed', finished_at = now(), "
                             "error = $2 WHERE id = $1::bigint",
                             {std::to_string(task.id), read.error().message}));
      else
        leased = LeasedTask{task.id, task.attempt, task.run, worker.id, std::move(*read)};
      PTXBENCH_TRY(db.exec(
          "UPDATE ptxbench_runs SET last_served = clock_timestamp() WHERE run = $1", {task.run}));
    }
    PTXBENCH_TRY(transaction.commit());
    return leased;
  });
}

util::Expected<bool> Broker::heartbeat(const LeasedTask& task) {
  return with_connection([&](pg::Connection& db) -> util::Expected<bool> {
    PTXBENCH_TRY_ASSIGN(auto renewed,
                        db.exec("UPDATE ptxbench_tasks SET lease_until = now() + "
                                "make_interval(secs => $3::double precision) WHERE id = $1::bigint "
                                "AND attempt = $2::bigint AND state = 'running'",
                                {std::to_string(task.id), std::to_string(task.attempt),
                                 seconds_text(m_options.lease)}));
    return renewed.affected() == 1;
  });
}

util::Expected<bool> Broker::finish(const LeasedTask& task, const TaskOutcome& outcome) {
  const std::string id = std::to_string(task.id);
  const std::string attempt = std::to_string(task.attempt);
  const std::string guard = " WHERE id = $1::bigint AND attempt = $2::bigint AND state = 'running'";
  return with_connection([&](pg::Connection& db) -> util::Expected<bool> {
    PTXBENCH_TRY_ASSIGN(auto transaction, pg::Transaction::begin(db));
    std::string set;
    pg::Param value;
    switch (outcome.kind) {
    case OutcomeKind::completed:
      set = "state = 'completed', finished_at = now(), lease_until = NULL, result = $3, "
            "needs_gpu = $4";
      value = text_of(outcome.result);
      break;
    case OutcomeKind::failed:
      set = "state = 'failed', finished_at = now(), lease_until = NULL, error = $3";
      value = outcome.reason;
      break;
    case OutcomeKind::requeue:
      set = "state = 'queued', worker = NULL, lease_until = NULL, requeues = requeues + 1, "
            "requeue_reason = $3";
      value = outcome.reason;
      break;
    }
    std::vector<pg::Param> params{id, attempt, value};
    if (outcome.kind == OutcomeKind::completed)
      params.emplace_back(outcome.needs_gpu);
    auto written = db.exec("UPDATE ptxbench_tasks SET " + set + guard, params);
    PTXBENCH_TRY(written);
    const bool recorded = written->affected() == 1;
    if (recorded && outcome.kind != OutcomeKind::requeue) {
      PTXBENCH_TRY(db.exec("SELECT pg_notify('ptxbench_done', $1)", {id}));
      PTXBENCH_TRY(db.exec("UPDATE ptxbench_workers SET finished = finished + 1 WHERE id = $1",
                           {task.worker}));
    }
    if (recorded && outcome.kind == OutcomeKind::requeue)
      PTXBENCH_TRY(db.exec("SELECT pg_notify('ptxbench_queued', '')"));
    PTXBENCH_TRY(transaction.commit());
    return recorded;
  });
}

util::Expected<std::vector<FleetTask>> Broker::tasks(const std::vector<std::int64_t>& ids) {
  return with_connection([&](pg::Connection& db) -> util::Expected<std::vector<FleetTask>> {
    PTXBENCH_TRY_ASSIGN(auto rows, db.exec(fmt::format("SELECT {} FROM ptxbench_tasks WHERE id = "
                                                       "ANY($1::bigint[])",
                                                       kTaskColumns),
                                           {id_array(ids)}));
    std::vector<FleetTask> out;
    for (std::int64_t id : ids) {
      int found = -1;
      for (int row = 0; row < rows.rows() && found < 0; ++row)
        if (rows.int64(row, 0) == id)
          found = row;
      if (found < 0)
        return broker_error(util::ErrorKind::not_found, fmt::format("no task {}", id));
      PTXBENCH_TRY_ASSIGN(auto task, task_row(rows, found));
      out.push_back(std::move(task));
    }
    return out;
  });
}

util::Expected<std::vector<FleetTask>> Broker::wait(const std::vector<std::int64_t>& ids,
                                                    std::chrono::milliseconds wait) {
  const auto deadline = Clock::now() + wait;
  for (;;) {
    PTXBENCH_TRY(with_connection([&](pg::Connection& db) -> util::Status {
      if (!m_listening_done)
        PTXBENCH_TRY(db.exec("LISTEN ptxbench_done"));
      m_listening_done = true;
      return util::Ok{};
    }));
    PTXBENCH_TRY_ASSIGN(auto found, tasks(ids));
    const bool all = std::all_of(found.begin(), found.end(),
                                 [](const FleetTask& task) { return finished(task.state); });
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (all || left.count() <= 0)
      return found;
    // A notification missed across a reconnect is made up for by the bounded wait.
    PTXBENCH_TRY(with_connection([&](pg::Connection& db) -> util::Status {
      PTXBENCH_TRY(db.notifications(std::min(left, std::chrono::milliseconds(1000))));
      return util::Ok{};
    }));
  }
}

util::Status Broker::wait_for_work(std::chrono::milliseconds wait) {
  return with_connection([&](pg::Connection& db) -> util::Status {
    if (!m_listening_queued)
      PTXBENCH_TRY(db.exec("LISTEN ptxbench_queued"));
    m_listening_queued = true;
    PTXBENCH_TRY(db.notifications(wait));
    return util::Ok{};
  });
}

util::Status Broker::report_worker(const WorkerInfo& worker, std::string_view state,
                                   const std::string& health, std::optional<std::int64_t> task) {
  return with_connection([&](pg::Connection& db) -> util::Status {
    PTXBENCH_TRY(db.exec(
        "INSERT INTO ptxbench_workers (id, host, device, gpu, arch, state, health, task, seen_at) "
        "VALUES ($1, $2, $3, $4, $5, $6, $7, $8::bigint, now()) ON CONFLICT (id) DO UPDATE SET "
        "host = $2, device = $3, gpu = $4, arch = $5, state = $6, health = $7, task = $8::bigint, "
        "seen_at = now()",
        {worker.id, worker.host, worker.device, worker.gpu,
         std::string(compile::to_string(worker.arch)), std::string(state), health,
         task ? pg::Param(std::to_string(*task)) : pg::Param()}));
    return util::Ok{};
  });
}

util::Expected<FleetStatus> Broker::status() {
  return with_connection([&](pg::Connection& db) -> util::Expected<FleetStatus> {
    FleetStatus status;
    PTXBENCH_TRY_ASSIGN(auto workers,
                        db.exec("SELECT id, host, device, gpu, arch, state, health, task, "
                                "extract(epoch FROM now() - seen_at), finished FROM "
                                "ptxbench_workers ORDER BY id"));
    for (int row = 0; row < workers.rows(); ++row)
      status.workers.push_back(WorkerRow{
          workers.text(row, 0), workers.text(row, 1), workers.text(row, 2), workers.text(row, 3),
          workers.text(row, 4), workers.text(row, 5), workers.text(row, 6),
          workers.is_null(row, 7) ? std::nullopt : std::optional(workers.int64(row, 7)),
          workers.real(row, 8), workers.int64(row, 9)});
    PTXBENCH_TRY_ASSIGN(auto runs,
                        db.exec("SELECT run, count(*) FILTER (WHERE state = 'queued'), count(*) "
                                "FILTER (WHERE state = 'running'), count(*) FILTER (WHERE state = "
                                "'completed'), count(*) FILTER (WHERE state = 'failed') FROM "
                                "ptxbench_tasks GROUP BY run ORDER BY run"));
    for (int row = 0; row < runs.rows(); ++row)
      status.runs.push_back(RunQueue{runs.text(row, 0), runs.int64(row, 1), runs.int64(row, 2),
                                     runs.int64(row, 3), runs.int64(row, 4)});
    PTXBENCH_TRY_ASSIGN(auto totals,
                        db.exec("SELECT count(*) FILTER (WHERE finished_at > now() - interval "
                                "'1 minute'), coalesce(sum(deaths), 0) FROM ptxbench_tasks"));
    status.finished_last_minute = totals.int64(0, 0);
    status.leases_expired = totals.int64(0, 1);
    return status;
  });
}

} // namespace ptxbench::fleet
