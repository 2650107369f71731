#include "service/broker_service.hpp"

#include "exec/eval_request.hpp"
#include "exec/evaluation.hpp"
#include "fleet/status_view.hpp"
#include "trace/json_io.hpp"
#include "util/hash.hpp"

#include <algorithm>
#include <charconv>
#include <fmt/format.h>

namespace ptxbench::service {
namespace {

using Clock = std::chrono::steady_clock;

// A long-poll waits in slices this long, so that stop_accepting() is seen promptly.
constexpr std::chrono::milliseconds kWaitSlice{1000};
// A worker that has not reported for this long is not counted as up (fleet status's rule).
constexpr double kWorkerSilentS = 60;

// A broker id from a task id ("42"); nullopt for anything else (an unknown task).
std::optional<std::int64_t> broker_id(std::string_view id) {
  std::int64_t value = 0;
  auto [end, error] = std::from_chars(id.data(), id.data() + id.size(), value);
  if (id.empty() || error != std::errc{} || end != id.data() + id.size() || value <= 0)
    return std::nullopt;
  return value;
}

TaskState state_of(fleet::FleetState state) {
  switch (state) {
  case fleet::FleetState::queued:
    return TaskState::queued;
  case fleet::FleetState::running:
    return TaskState::running;
  case fleet::FleetState::completed:
    return TaskState::completed;
  case fleet::FleetState::failed:
    return TaskState::failed;
  }
  return TaskState::failed;
}

bool finished(const fleet::FleetTask& task) {
  return task.state == fleet::FleetState::completed || task.state == fleet::FleetState::failed;
}

} // namespace

util::Expected<std::unique_ptr<BrokerService>>
BrokerService::connect(const suite::Suite& suite, BrokerServiceOptions options) {
  PTXBENCH_TRY(fleet::check_broker_url(options.broker.url));
  std::unique_ptr<BrokerService> service(new BrokerService(suite, std::move(options)));
  PTXBENCH_TRY(service->m_pool.take());
  return service;
}

util::Expected<Submitted> BrokerService::submit(const TaskRequest& request) {
  if (m_stopping)
    return util::make_error(util::ErrorKind::unsupported, "the service is stopping");
  PTXBENCH_TRY_ASSIGN(auto eval, exec::eval_request_from_json(request.canonical, "request"));
  const fleet::Submission submission{request.run.empty() ? m_options.default_run : request.run,
                                     util::random_hex_128(), std::move(eval), 0};
  PTXBENCH_TRY_ASSIGN(auto broker, m_pool.take());
  PTXBENCH_TRY_ASSIGN(const std::int64_t id, broker->submit(submission));
  return Submitted{std::to_string(id), request.solution_name};
}

util::Expected<Task> BrokerService::task_of(const fleet::FleetTask& row) const {
  PTXBENCH_TRY_ASSIGN(auto json, trace::parse_json_text(row.request, "stored request"));
  PTXBENCH_TRY_ASSIGN(auto request, exec::eval_request_from_json(json, "stored request"));
  Task task;
  task.id = std::to_string(row.id);
  task.kind = kind_of(request.options);
  task.problem = row.problem;
  if (auto problem = m_suite.find(row.problem))
    task.solution_name = exec::solution_name(request.source, **problem, request.options.language);
  task.arch = request.options.arch;
  task.state = state_of(row.state);
  task.result = row.result;
  task.needs_gpu = row.needs_gpu;
  task.error = row.error;
  task.device = row.worker;
  task.attempts = static_cast<int>(row.attempts);
  task.submitted_at = row.submitted_at;
  task.started_at = row.started_at;
  task.finished_at = row.finished_at;
  return task;
}

util::Expected<Task> BrokerService::task(const std::string& id, std::chrono::milliseconds wait) {
  PTXBENCH_TRY_ASSIGN(auto found, tasks({id}, wait));
  return std::move(found.front());
}

util::Expected<std::vector<Task>> BrokerService::tasks(const std::vector<std::string>& ids,
                                                       std::chrono::milliseconds wait) {
  std::vector<std::int64_t> numbers;
  for (const std::string& id : ids) {
    auto number = broker_id(id);
    if (!number)
      return util::make_error(util::ErrorKind::not_found, fmt::format("Task {} not found", id));
    numbers.push_back(*number);
  }
  PTXBENCH_TRY_ASSIGN(auto broker, m_pool.take());
  const auto deadline = Clock::now() + wait;
  std::vector<fleet::FleetTask> rows;
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    auto found = broker->wait(numbers, std::clamp(left, std::chrono::milliseconds(0), kWaitSlice));
    if (!found && found.error().kind == util::ErrorKind::not_found)
      return util::make_error(util::ErrorKind::not_found,
                              "Task not found: " + found.error().message);
    PTXBENCH_TRY(found);
    rows = std::move(*found);
    if (std::all_of(rows.begin(), rows.end(), finished) || m_stopping || Clock::now() >= deadline)
      break;
  }
  std::vector<Task> out;
  for (const fleet::FleetTask& row : rows) {
    PTXBENCH_TRY_ASSIGN(auto task, task_of(row));
    out.push_back(std::move(task));
  }
  return out;
}

Health BrokerService::health() const {
  Health health;
  health.stopping = m_stopping;
  auto broker = m_pool.take();
  auto status = broker ? (*broker)->status() : util::Expected<fleet::FleetStatus>(broker.error());
  if (!status) {
    health.error = "the fleet's broker cannot be reached: " + status.error().message;
    return health;
  }
  for (const fleet::RunQueue& run : status->runs)
    health.queue_size += static_cast<std::size_t>(run.queued);
  for (const fleet::WorkerRow& row : status->workers) {
    WorkerHealth worker;
    worker.device = row.id;
    worker.name = row.gpu;
    worker.healthy =
        row.seen_s_ago < kWorkerSilentS && row.state != "stopped" && row.state != "draining";
    worker.task_id = row.task ? std::to_string(*row.task) : "";
    worker.finished = row.finished;
    worker.note = row.health.empty() ? row.state : row.state + "; " + row.health;
    health.workers.push_back(std::move(worker));
  }
  return health;
}

util::Expected<std::string> BrokerService::metrics() const {
  PTXBENCH_TRY_ASSIGN(auto broker, m_pool.take());
  PTXBENCH_TRY_ASSIGN(auto status, broker->status());
  return fleet::status_prometheus(status);
}

} // namespace ptxbench::service
