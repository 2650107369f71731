#include "service/task_service.hpp"

#include "fleet/status_view.hpp"

#include <fmt/format.h>

namespace ptxbench::service {

std::string health_prometheus(const Health& health) {
  using fleet::prometheus_label;
  std::string out = fmt::format("# HELP ptxbench_service_queued Tasks waiting for a worker.\n"
                                "# TYPE ptxbench_service_queued gauge\n"
                                "ptxbench_service_queued {}\n",
                                health.queue_size);
  out += fmt::format("# HELP ptxbench_service_stopping Whether the service stopped taking tasks.\n"
                     "# TYPE ptxbench_service_stopping gauge\n"
                     "ptxbench_service_stopping {}\n",
                     health.stopping ? 1 : 0);
  out += "# HELP ptxbench_service_worker_up Whether the worker runs.\n"
         "# TYPE ptxbench_service_worker_up gauge\n";
  for (const WorkerHealth& w : health.workers)
    out += fmt::format("ptxbench_service_worker_up{{worker=\"{}\",gpu=\"{}\"}} {}\n",
                       prometheus_label(w.device), prometheus_label(w.name), w.healthy ? 1 : 0);
  out += "# HELP ptxbench_service_worker_busy Whether the worker is evaluating a task.\n"
         "# TYPE ptxbench_service_worker_busy gauge\n";
  for (const WorkerHealth& w : health.workers)
    out += fmt::format("ptxbench_service_worker_busy{{worker=\"{}\"}} {}\n",
                       prometheus_label(w.device), w.task_id.empty() ? 0 : 1);
  out += "# HELP ptxbench_service_worker_finished_total Tasks the worker finished.\n"
         "# TYPE ptxbench_service_worker_finished_total counter\n";
  for (const WorkerHealth& w : health.workers)
    out += fmt::format("ptxbench_service_worker_finished_total{{worker=\"{}\"}} {}\n",
                       prometheus_label(w.device), w.finished);
  return out;
}

} // namespace ptxbench::service
