// The fleet's evaluation queue on PostgreSQL (docs/service.md "A fleet on PostgreSQL"): clients
// on any host submit evaluation requests for their run and wait for the results; workers on
// any host (one per GPU) lease the tasks they can run, renew their lease while they evaluate,
// and record the result.
//
// Problem. A queue that one host keeps holds its tasks hostage when that host dies, and runs
// that share GPUs cannot see each other's load. Workers and clients die, hang, are partitioned
// from the database or see it restart, at any moment; a task must still be evaluated, and its
// result recorded exactly once.
//
// Approach. One table of tasks. A worker leases the first task it can run with `SELECT … FOR
// UPDATE SKIP LOCKED` (workers never wait on each other's rows): among the runs with queued
// work, the one served longest ago (round-robin fairness), then priority, then age. The lease
// lasts `lease` by the database's clock (hosts' clocks never matter) and heartbeats renew it; a
// task whose lease expired is leased again by the next worker, up to `max_deaths` times, and
// then fails with the reason (a poisoned task must not take the fleet down one worker at a
// time). Every lease increments the task's attempt number and a result is written only
// `WHERE attempt = <the writer's>` and only while the task runs: a late result from a worker
// presumed dead never overwrites the one recorded. Submissions carry a client key, unique per
// run, so a submit retried after a lost acknowledgement queues nothing twice; a run may hold at
// most `max_queued_per_run` queued tasks (back-pressure: `rate_limited`, retried by the
// client). NOTIFY wakes idle workers (a task queued) and waiting clients (a task finished).
// Every operation reconnects with backoff when the connection is lost, for up to
// `reconnect_window`; a statement that did not commit is simply run again. A connection whose
// peer went silent (a partition) is found lost within seconds, not TCP's quarter of an hour
// (pg::Connection's keepalives and user timeout), so the backoff starts at once; the log says
// when a connection is lost and when it is back.
//
// Invariants: a task is `queued`, `running` (with a worker, an attempt and a lease), or finished
// (`completed` with a result, `failed` with an error) and never leaves a finished state; at most
// one result is recorded per task. The schema is created on first use under an advisory lock
// and carries its version; a newer schema than this build knows is refused.
#pragma once

#include "compile/nvcc.hpp"
#include "exec/eval_request.hpp"
#include "fleet/postgres.hpp"
#include "util/error.hpp"

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace ptxbench::fleet {

inline constexpr int kBrokerSchemaVersion = 1;

// Persisted as text; explicit values.
enum class FleetState : std::uint8_t { queued = 1, running = 2, completed = 3, failed = 4 };
std::string_view to_string(FleetState state);

struct BrokerOptions {
  std::string url; // postgresql://…; credentials from $PGPASSWORD or ~/.pgpass, not the URL
  std::chrono::seconds lease{60};
  int max_deaths = 3;           // workers that may die holding a task before it fails
  int max_queued_per_run = 256; // back-pressure
  std::chrono::seconds reconnect_window{120};
  // One line when the connection is lost and one when it is back; optional.
  std::function<void(const std::string&)> log;
};

struct Submission {
  std::string run;        // the run's id (a fairness unit)
  std::string client_key; // unique per run: a retried submit is the same task
  exec::EvalRequest request;
  int priority = 0; // higher first, within the fairness order
};

// What a worker can run: the tasks of its architecture.
struct WorkerInfo {
  std::string id;     // unique in the fleet: "<host>/<device>"
  std::string host;   // the host name
  std::string device; // "cuda:0", or "cpu"
  std::string gpu;    // the GPU's name, or empty
  compile::Arch arch = compile::Arch::sm_90a;
};

struct LeasedTask {
  std::int64_t id = 0;
  std::int64_t attempt = 0;
  std::string run;
  std::string worker; // the worker's id
  exec::EvalRequest request;
};

// What became of a leased task. `requeue`: the evaluation is not a result (the GPU throttled,
// the worker is draining) and the task goes back to the queue.
enum class OutcomeKind : std::uint8_t { completed = 1, failed = 2, requeue = 3 };
struct TaskOutcome {
  OutcomeKind kind = OutcomeKind::completed;
  nlohmann::ordered_json result; // completed: what `ptxbench eval --json` prints
  std::string needs_gpu;         // completed without the GPU step: why
  std::string reason;            // failed or requeue: why
};

struct FleetTask {
  std::int64_t id = 0;
  std::string run;
  std::string problem;
  std::string arch;
  std::string request; // the submitted exec::EvalRequest, as JSON text
  FleetState state = FleetState::queued;
  std::int64_t attempts = 0; // leases taken
  std::int64_t deaths = 0;   // leases that expired
  std::int64_t requeues = 0;
  std::string worker;
  std::optional<nlohmann::ordered_json> result;
  std::string needs_gpu;
  std::string error;
  // ISO-8601 UTC by the database's clock ("2026-12-04T18:43:03.123Z"); empty when not reached.
  std::string submitted_at, started_at, finished_at;
};

struct WorkerRow {
  std::string id, host, device, gpu, arch, state, health;
  std::optional<std::int64_t> task;
  double seen_s_ago = 0;
  std::int64_t finished = 0;
};
struct RunQueue {
  std::string run;
  std::int64_t queued = 0, running = 0, completed = 0, failed = 0;
};
struct FleetStatus {
  std::vector<WorkerRow> workers;
  std::vector<RunQueue> runs;
  std::int64_t finished_last_minute = 0;
  std::int64_t leases_expired = 0; // over every task the broker keeps
};

class Broker {
public:
  // Connects and creates or checks the schema; transport when the server cannot be reached.
  static util::Expected<std::unique_ptr<Broker>> connect(BrokerOptions options);

  // The task's id (the same id for a client key already submitted for the run);
  // rate_limited when the run already holds max_queued_per_run queued tasks.
  util::Expected<std::int64_t> submit(const Submission& submission);
  // The next task `worker` can run, leased to it; nullopt when there is none.
  util::Expected<std::optional<LeasedTask>> lease(const WorkerInfo& worker);
  // Renews the lease; false when it is no longer the worker's (expired and leased again).
  util::Expected<bool> heartbeat(const LeasedTask& task);
  // Records the outcome; false when the task is no longer this attempt's (nothing written).
  util::Expected<bool> finish(const LeasedTask& task, const TaskOutcome& outcome);
  // The tasks in `ids` order; not_found for an unknown id.
  util::Expected<std::vector<FleetTask>> tasks(const std::vector<std::int64_t>& ids);
  // tasks(), once every one has finished or `wait` has passed.
  util::Expected<std::vector<FleetTask>> wait(const std::vector<std::int64_t>& ids,
                                              std::chrono::milliseconds wait);
  // Waits up to `wait` for a task to be queued (an idle worker's sleep).
  util::Status wait_for_work(std::chrono::milliseconds wait);
  // The worker's row: what it is, whether it takes tasks, its health, its task.
  util::Status report_worker(const WorkerInfo& worker, std::string_view state,
                             const std::string& health, std::optional<std::int64_t> task);
  util::Expected<FleetStatus> status();

  const BrokerOptions& options() const { return m_options; }

private:
  explicit Broker(BrokerOptions options) : m_options(std::move(options)) {}
  util::Status reconnect();
  // Logs the first loss of an outage.
  void note_lost(const util::Error& error);
  util::Status create_schema();
  // Runs `op` on a live connection, reconnecting with backoff when the connection is lost.
  template <typename Op>
  auto with_connection(Op op) -> decltype(op(std::declval<pg::Connection&>()));

  BrokerOptions m_options;
  std::optional<pg::Connection> m_connection;
  bool m_listening_done = false;
  bool m_listening_queued = false;
  bool m_lost = false; // a loss was logged and no connection made since
};

// invalid_input unless `url` is postgresql:// or postgres:// without a password in it.
util::Status check_broker_url(const std::string& url);

} // namespace ptxbench::fleet
