// The HTTP service in front of a fleet (`ptxbench serve --broker URL --port P`): FIBServe-style
// clients submit and poll over HTTP as they do with one host (docs/service.md), and the tasks
// go to the fleet's PostgreSQL queue (fleet/broker.hpp), where any worker of any host takes
// them.
//
// Problem. The HTTP face (http_server.hpp) reads and checks requests and answers with task
// JSON; a fleet keeps its tasks in the broker under numeric ids, and a front may be restarted
// or run beside others, so it must keep no task state of its own.
//
// Approach. A TaskService over a pool of broker connections. submit() queues the checked
// request under the client's run (the X-Ptxbench-Run header, or this front's default run: the
// broker's fairness unit) with a fresh client key; a full queue is rate_limited (HTTP 429).
// Task ids are the broker's ids as decimal text; task() and tasks() read the broker (its own
// long-poll, LISTEN/NOTIFY), in slices of at most a second so that stopping wakes them, and
// rebuild the task JSON from the stored request. health() and metrics() are the fleet's status.
//
// Invariant: any number of fronts over one broker answer the same for the same id.
#pragma once

#include "fleet/broker_pool.hpp"
#include "service/task_service.hpp"

#include <atomic>
#include <memory>
#include <string>

namespace ptxbench::service {

struct BrokerServiceOptions {
  fleet::BrokerOptions broker;
  std::string default_run = "http"; // the run of a request without X-Ptxbench-Run
};

class BrokerService final : public TaskService {
public:
  // Connects once (transport when the broker cannot be reached; the schema is checked).
  static util::Expected<std::unique_ptr<BrokerService>> connect(const suite::Suite& suite,
                                                                BrokerServiceOptions options);

  util::Expected<Submitted> submit(const TaskRequest& request) override;
  util::Expected<Task> task(const std::string& id, std::chrono::milliseconds wait) override;
  util::Expected<std::vector<Task>> tasks(const std::vector<std::string>& ids,
                                          std::chrono::milliseconds wait) override;
  Health health() const override;
  util::Expected<std::string> metrics() const override;
  const suite::Suite& suite() const override { return m_suite; }
  void stop_accepting() override { m_stopping = true; }

private:
  BrokerService(const suite::Suite& suite, BrokerServiceOptions options)
      : m_suite(suite), m_options(std::move(options)), m_pool(m_options.broker) {}
  util::Expected<Task> task_of(const fleet::FleetTask& row) const;

  const suite::Suite& m_suite;
  BrokerServiceOptions m_options;
  mutable fleet::BrokerPool m_pool;
  std::atomic<bool> m_stopping{false};
};

} // namespace ptxbench::service
