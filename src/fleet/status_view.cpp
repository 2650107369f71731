#include "fleet/status_view.hpp"

#include <array>
#include <fmt/format.h>
#include <string_view>

namespace ptxbench::fleet {
namespace {

// The first word of a worker's health text (measure/gpu_health.hpp: "ok", "throttled: …",
// "broken: …"; "no GPU" for a cpu worker), as a label value; "unknown" before the first report.
constexpr std::array<std::string_view, 5> kHealthStates{"ok", "throttled", "broken", "no_gpu",
                                                        "unknown"};
std::string_view health_state(std::string_view health) {
  if (health.starts_with("no GPU"))
    return "no_gpu";
  for (std::string_view state : kHealthStates)
    if (health.starts_with(state) && (health.size() == state.size() ||
                                      health[state.size()] == ':' || health[state.size()] == ' '))
      return state;
  return "unknown";
}

std::int64_t open_tasks(const FleetStatus& status) {
  std::int64_t queued = 0;
  for (const RunQueue& run : status.runs)
    queued += run.queued;
  return queued;
}

} // namespace

std::string prometheus_label(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '\\' || c == '"')
      out += '\\';
    out += c == '\n' ? 'n' : c;
  }
  return out;
}

std::string status_text(const FleetStatus& status) {
  std::string out = fmt::format("{} worker(s), {} queued task(s), {} finished in the last minute, "
                                "{} lease(s) expired\n",
                                status.workers.size(), open_tasks(status),
                                status.finished_last_minute, status.leases_expired);
  if (!status.workers.empty())
    out += fmt::format("\n{:<32} {:<8} {:<24} {:<9} {:>8} {:>9} {}\n", "worker", "arch", "gpu",
                       "state", "task", "finished", "seen");
  for (const WorkerRow& w : status.workers)
    out += fmt::format("{:<32} {:<8} {:<24} {:<9} {:>8} {:>9} {:.0f} s ago{}\n", w.id, w.arch,
                       w.gpu.empty() ? "-" : w.gpu, w.state, w.task ? std::to_string(*w.task) : "-",
                       w.finished, w.seen_s_ago, w.health.empty() ? "" : "  " + w.health);
  if (!status.runs.empty())
    out += fmt::format("\n{:<48} {:>7} {:>7} {:>9} {:>6}\n", "run", "queued", "running",
                       "completed", "failed");
  for (const RunQueue& run : status.runs)
    out += fmt::format("{:<48} {:>7} {:>7} {:>9} {:>6}\n", run.run, run.queued, run.running,
                       run.completed, run.failed);
  return out;
}

nlohmann::ordered_json status_json(const FleetStatus& status) {
  nlohmann::ordered_json out{{"workers", nlohmann::ordered_json::array()},
                             {"runs", nlohmann::ordered_json::array()},
                             {"finished_last_minute", status.finished_last_minute},
                             {"leases_expired", status.leases_expired}};
  for (const WorkerRow& w : status.workers)
    out["workers"].push_back({{"id", w.id},
                              {"host", w.host},
                              {"device", w.device},
                              {"gpu", w.gpu},
                              {"arch", w.arch},
                              {"state", w.state},
                              {"health", w.health},
                              {"task", w.task ? nlohmann::ordered_json(*w.task) : nullptr},
                              {"finished", w.finished},
                              {"seen_s_ago", w.seen_s_ago}});
  for (const RunQueue& run : status.runs)
    out["runs"].push_back({{"run", run.run},
                           {"queued", run.queued},
                           {"running", run.running},
                           {"completed", run.completed},
                           {"failed", run.failed}});
  return out;
}

std::string status_prometheus(const FleetStatus& status) {
  std::string out;
  out += "# HELP ptxbench_fleet_worker_up Whether the worker reported in the last minute.\n"
         "# TYPE ptxbench_fleet_worker_up gauge\n";
  for (const WorkerRow& w : status.workers)
    out +=
        fmt::format("ptxbench_fleet_worker_up{{worker=\"{}\",gpu=\"{}\",arch=\"{}\",state=\"{}\"}} "
                    "{}\n",
                    prometheus_label(w.id), prometheus_label(w.gpu), prometheus_label(w.arch),
                    prometheus_label(w.state), w.seen_s_ago < 60 && w.state != "stopped" ? 1 : 0);
  out += "# HELP ptxbench_fleet_workers_by_health Workers by their GPU's last health verdict.\n"
         "# TYPE ptxbench_fleet_workers_by_health gauge\n";
  for (std::string_view state : kHealthStates) {
    std::int64_t count = 0;
    for (const WorkerRow& w : status.workers)
      count += health_state(w.health) == state ? 1 : 0;
    out += fmt::format("ptxbench_fleet_workers_by_health{{health=\"{}\"}} {}\n", state, count);
  }
  out += "# HELP ptxbench_fleet_worker_finished_total Tasks the worker finished.\n"
         "# TYPE ptxbench_fleet_worker_finished_total counter\n";
  for (const WorkerRow& w : status.workers)
    out += fmt::format("ptxbench_fleet_worker_finished_total{{worker=\"{}\"}} {}\n",
                       prometheus_label(w.id), w.finished);
  out += "# HELP ptxbench_fleet_tasks Tasks of each run by state.\n"
         "# TYPE ptxbench_fleet_tasks gauge\n";
  for (const RunQueue& run : status.runs)
    for (const auto& [state, count] :
         {std::pair{"queued", run.queued}, std::pair{"running", run.running},
          std::pair{"completed", run.completed}, std::pair{"failed", run.failed}})
      out += fmt::format("ptxbench_fleet_tasks{{run=\"{}\",state=\"{}\"}} {}\n",
                         prometheus_label(run.run), state, count);
  out += fmt::format("# HELP ptxbench_fleet_finished_last_minute Evaluations finished in the last "
                     "minute.\n# TYPE ptxbench_fleet_finished_last_minute gauge\n"
                     "ptxbench_fleet_finished_last_minute {}\n",
                     status.finished_last_minute);
  out += fmt::format("# HELP ptxbench_fleet_leases_expired_total Leases that expired (a worker "
                     "died or was cut off).\n# TYPE ptxbench_fleet_leases_expired_total counter\n"
                     "ptxbench_fleet_leases_expired_total {}\n",
                     status.leases_expired);
  return out;
}

} // namespace ptxbench::fleet
