// What the HTTP face (http_server.hpp) serves: the tasks of this host's own queue
// (service.hpp, the default) or of a fleet's PostgreSQL broker (broker_service.hpp, `serve
// --broker URL --port P`), so that FIBServe-style clients reach either through one API.
#pragma once

#include "service/task.hpp"
#include "suite/suite.hpp"
#include "util/error.hpp"

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

namespace ptxbench::service {

struct WorkerHealth {
  std::string device;  // "cuda:0", or "cpu"; a fleet's worker id ("host-a/cuda:0")
  std::string name;    // the GPU's name, or empty
  bool healthy = true; // the worker runs (a fleet's: reported lately and not drained)
  std::string task_id; // the running task, or empty
  std::int64_t finished = 0;
  std::string note; // a fleet worker's state and health ("draining; throttled: …"), or empty
};

struct Health {
  std::vector<WorkerHealth> workers;
  std::size_t queue_size = 0; // queued tasks, not counting running ones
  bool stopping = false;
  std::string error; // why the health could not be read (a fleet's broker is unreachable)
};

struct Submitted {
  std::string task_id;
  std::string solution_name;
};

class TaskService {
public:
  virtual ~TaskService() = default;

  // unsupported once stopping has started; rate_limited when the client's queue is full;
  // io or transport when the queue's storage refuses.
  virtual util::Expected<Submitted> submit(const TaskRequest& request) = 0;
  // not_found for an unknown id; otherwise the task after it has finished or `wait` has passed.
  virtual util::Expected<Task> task(const std::string& id, std::chrono::milliseconds wait) = 0;
  // In request order; not_found when any id is unknown; waits until all have finished.
  virtual util::Expected<std::vector<Task>> tasks(const std::vector<std::string>& ids,
                                                  std::chrono::milliseconds wait) = 0;
  virtual Health health() const = 0;
  // GET /metrics: Prometheus' text exposition format (version 0.0.4).
  virtual util::Expected<std::string> metrics() const = 0;
  virtual const suite::Suite& suite() const = 0;
  // Takes no more tasks and wakes every long-poll; idempotent.
  virtual void stop_accepting() = 0;
};

// Health as Prometheus metrics (ptxbench_service_*): queue size, workers up and busy, tasks
// finished per worker.
std::string health_prometheus(const Health& health);

} // namespace ptxbench::service
