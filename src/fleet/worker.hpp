// A fleet worker: one per GPU (or one "cpu" worker on a host without one), on any host, taking
// tasks from the broker (broker.hpp) and evaluating them (docs/service.md "A fleet on
// PostgreSQL").
//
// Problem. A worker must keep its lease while an evaluation runs for minutes, must not report
// a result that was not measured properly (a throttled GPU), must stop taking tasks it cannot
// measure, and must survive the database going away and coming back.
//
// Approach. The loop: report the worker's row, lease a task, evaluate it in this thread while
// a heartbeat thread (its own connection) renews the lease every third of it, then record the
// outcome; with nothing to do, sleep until NOTIFY says a task was queued or `idle_wait` passes.
// `evaluate` returns the outcome: a result, a failure (no verdict exists), or `requeue` when
// the measurement is not a result (the health check in the caller's evaluate decides; a
// worker that requeues `drain_after` times in a row drains: it stops taking tasks and says so
// in its row; the caller may also drain it at once, and sets the health its row shows, e.g.
// "throttled: hw_thermal_slowdown at 91 C after timing"). Broker errors are retried by the broker
// itself (reconnect with backoff); one that outlives that window ends run() with the error.
//
// Invariants: one task at a time; a task whose lease was lost while evaluating is not written
// (finish() refuses it); stop() lets the running evaluation finish and record.
#pragma once

#include "fleet/broker.hpp"

#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <optional>
#include <string>

namespace ptxbench::fleet {

struct WorkerOptions {
  WorkerInfo info;
  std::chrono::milliseconds idle_wait{2000};
  int drain_after = 3; // requeues in a row before the worker drains
  std::string health;  // what its row shows until set_health() (e.g. "no GPU", "ok")
  // One line per event (task finished, lease lost, draining); optional.
  std::function<void(const std::string&)> log;
};

using Evaluate = std::function<TaskOutcome(const LeasedTask&)>;

class Worker {
public:
  // `broker` is the worker's own connection; the heartbeat opens another with its options.
  Worker(Broker& broker, Evaluate evaluate, WorkerOptions options);

  // Runs until stop() (or a broker error that reconnecting did not cure).
  util::Status run();
  void stop() { m_stop = true; }
  std::int64_t finished() const { return m_finished; }
  bool draining() const { return m_draining; }
  // The health its row shows from now on. Thread-safe (the evaluate function calls it).
  void set_health(std::string health);
  // Takes no more tasks from now on (its GPU broke); the row says "draining". Thread-safe.
  void drain(const std::string& why);

private:
  util::Status run_one(const LeasedTask& task);
  util::Status report(std::string_view state, std::optional<std::int64_t> task);
  void log(const std::string& line) const;

  Broker& m_broker;
  Evaluate m_evaluate;
  WorkerOptions m_options;
  std::atomic<bool> m_stop{false};
  std::atomic<std::int64_t> m_finished{0};
  std::atomic<bool> m_draining{false};
  int m_requeues_in_a_row = 0;
  mutable std::mutex m_health_mutex;
  std::string m_health;
};

} // namespace ptxbench::fleet
