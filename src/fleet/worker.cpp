#include "fleet/worker.hpp"

#include <algorithm>
#include <condition_variable>
#include <fmt/format.h>
#include <mutex>
#include <thread>

namespace ptxbench::fleet {
namespace {

// Renews `task`'s lease every third of it on a connection of its own until destroyed. A
// renewal not made within its period is logged and tried again at the next: retrying longer
// cannot save a lease that is gone by then, and would hold up the worker's own finish().
class Heartbeat {
public:
  Heartbeat(const BrokerOptions& options, const LeasedTask& task,
            std::function<void(const std::string&)> log)
      : m_thread([this, options, task, log = std::move(log)] { beat(options, task, log); }) {}
  ~Heartbeat() {
    {
      std::lock_guard lock(m_mutex);
      m_done = true;
    }
    m_cv.notify_all();
    m_thread.join();
  }
  Heartbeat(const Heartbeat&) = delete;
  Heartbeat& operator=(const Heartbeat&) = delete;

private:
  void beat(BrokerOptions options, const LeasedTask& task,
            const std::function<void(const std::string&)>& log) {
    std::unique_ptr<Broker> broker;
    const auto period = std::chrono::duration_cast<std::chrono::milliseconds>(options.lease) / 3;
    options.reconnect_window =
        std::max(std::chrono::seconds(1), std::chrono::duration_cast<std::chrono::seconds>(period));
    std::unique_lock lock(m_mutex);
    while (!m_cv.wait_for(lock, period, [this] { return m_done; })) {
      lock.unlock();
      auto renewed = renew(broker, options, task);
      if (log && (!renewed || !*renewed))
        log(fmt::format("task {}: the lease could not be renewed{}", task.id,
                        renewed ? " (it was taken over)" : ": " + renewed.error().message));
      lock.lock();
    }
  }

  static util::Expected<bool> renew(std::unique_ptr<Broker>& broker, const BrokerOptions& options,
                                    const LeasedTask& task) {
    if (!broker) {
      PTXBENCH_TRY_ASSIGN(broker, Broker::connect(options));
    }
    return broker->heartbeat(task);
  }

  std::mutex m_mutex;
  std::condition_variable m_cv;
  bool m_done = false;
  std::thread m_thread; // last: started once the members it uses exist
};

} // namespace

Worker::Worker(Broker& broker, Evaluate evaluate, WorkerOptions options)
    : m_broker(broker), m_evaluate(std::move(evaluate)), m_options(std::move(options)),
      m_health(m_options.health) {}

void Worker::set_health(std::string health) {
  std::lock_guard lock(m_health_mutex);
  m_health = std::move(health);
}

void Worker::drain(const std::string& why) {
  if (!m_draining.exchange(true))
    log(fmt::format("{} drains: {}", m_options.info.id, why));
}

util::Status Worker::report(std::string_view state, std::optional<std::int64_t> task) {
  std::string health;
  {
    std::lock_guard lock(m_health_mutex);
    health = m_health;
  }
  return m_broker.report_worker(m_options.info, state, health, task);
}

void Worker::log(const std::string& line) const {
  if (m_options.log)
    m_options.log(line);
}

util::Status Worker::run() {
  while (!m_stop) {
    const std::string_view state = m_draining ? "draining" : "idle";
    PTXBENCH_TRY(report(state, std::nullopt));
    if (m_draining) {
      std::this_thread::sleep_for(m_options.idle_wait);
      continue;
    }
    PTXBENCH_TRY_ASSIGN(auto task, m_broker.lease(m_options.info));
    if (!task) {
      PTXBENCH_TRY(m_broker.wait_for_work(m_options.idle_wait));
      continue;
    }
    PTXBENCH_TRY(run_one(*task));
  }
  return report("stopped", std::nullopt);
}

util::Status Worker::run_one(const LeasedTask& task) {
  PTXBENCH_TRY(report("busy", task.id));
  TaskOutcome outcome;
  {
    Heartbeat heartbeat(m_broker.options(), task, m_options.log);
    outcome = m_evaluate(task);
  }
  PTXBENCH_TRY_ASSIGN(auto recorded, m_broker.finish(task, outcome));
  if (!recorded) {
    log(fmt::format("task {} attempt {}: not recorded, the lease was taken over", task.id,
                    task.attempt));
    return util::Ok{};
  }
  if (outcome.kind != OutcomeKind::requeue) {
    m_requeues_in_a_row = 0;
    ++m_finished;
    log(fmt::format("task {} {} on {}: {}", task.id, task.request.problem, m_options.info.id,
                    outcome.kind == OutcomeKind::completed ? "completed" : outcome.reason));
    return util::Ok{};
  }
  log(fmt::format("task {} requeued by {}: {}", task.id, m_options.info.id, outcome.reason));
  if (++m_requeues_in_a_row >= m_options.drain_after)
    drain(fmt::format("{} evaluations in a row were not results ({})", m_requeues_in_a_row,
                      outcome.reason));
  return util::Ok{};
}

} // namespace ptxbench::fleet
