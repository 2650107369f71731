#include "service/service.hpp"

#include "exec/evaluation.hpp"
#include "util/json_reader.hpp"
#include "util/strings.hpp"

#include <algorithm>
#include <charconv>
#include <cuda_runtime.h>
#include <fmt/format.h>

namespace ptxbench::service {

struct Service::Worker {
  std::optional<int> device;
  std::string label; // "cuda:N" or "cpu", "cuda:N/K" with several workers per device
  std::string name;  // the GPU's name
  std::shared_ptr<exec::Evaluator> evaluator; // its device's, shared with that device's workers
  std::thread thread;
  // Guarded by Service::m_mutex.
  bool healthy = true;
  std::string task_id;
  std::int64_t finished = 0;
};

namespace {

std::string gpu_name(int device) {
  cudaDeviceProp props{};
  return cudaGetDeviceProperties(&props, device) == cudaSuccess ? std::string(props.name) : "";
}

std::vector<std::string_view> split_commas(std::string_view text) {
  std::vector<std::string_view> out;
  for (std::size_t start = 0;;) {
    const std::size_t comma = text.find(',', start);
    out.push_back(text.substr(start, comma == std::string_view::npos ? comma : comma - start));
    if (comma == std::string_view::npos)
      return out;
    start = comma + 1;
  }
}

std::string outcome_text(const Task& task) {
  if (task.state == TaskState::failed)
    return "failed: " + task.error;
  if (!task.result)
    return std::string(to_string(task.state));
  util::JsonReader in("result");
  const auto status = in.optional_string(*task.result, "$", "status", util::Emptiness::allowed);
  if (!in.ok())
    return in.finish(0).error().message;
  return status.value_or("not evaluated (" + task.needs_gpu + ")");
}

} // namespace

util::Expected<std::vector<int>> parse_gpus(std::string_view spec, int device_count) {
  std::vector<int> out;
  if (spec == "all") {
    for (int device = 0; device < device_count; ++device)
      out.push_back(device);
    return out;
  }
  for (std::string_view part : split_commas(spec)) {
    const std::string_view text = util::trim(part);
    int device = -1;
    auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), device);
    if (error != std::errc{} || end != text.data() + text.size() || device < 0)
      return util::make_error(util::ErrorKind::invalid_input,
                              fmt::format("--gpus: \"{}\" is not \"all\" or a list of device "
                                          "indices like 0,1",
                                          spec));
    if (device >= device_count)
      return util::make_error(util::ErrorKind::invalid_input,
                              fmt::format("--gpus: there is no CUDA device {} here ({} device{})",
                                          device, device_count, device_count == 1 ? "" : "s"));
    if (std::find(out.begin(), out.end(), device) != out.end())
      return util::make_error(util::ErrorKind::invalid_input,
                              fmt::format("--gpus: device {} is listed twice", device));
    out.push_back(device);
  }
  return out;
}

util::Expected<std::unique_ptr<Service>>
Service::start(const exec::Checker& checker, const suite::Suite& suite, ServiceOptions options) {
  if (options.workers_per_device < 1)
    return util::make_error(
        util::ErrorKind::invalid_input,
        fmt::format("--workers-per-gpu must be at least 1, not {}", options.workers_per_device));
  if (options.keep_finished < std::chrono::hours::zero() ||
      options.prune_interval <= std::chrono::milliseconds::zero())
    return util::make_error(util::ErrorKind::invalid_input,
                            "the finished-task retention must be >= 0 hours and its pruning "
                            "interval positive");
  PTXBENCH_TRY_ASSIGN(auto store, TaskStore::open(options.state_dir));
  PTXBENCH_TRY_ASSIGN(auto queued, store->recover());
  std::unique_ptr<Service> service(
      new Service(checker, suite, std::move(options), std::move(store)));
  for (const std::string& id : queued) {
    service->m_queue.push_back(id);
    service->m_unfinished.insert(id);
  }
  if (!queued.empty())
    service->log(fmt::format("re-queued {} unfinished task(s) from {}", queued.size(),
                             service->m_store->dir().string()));
  PTXBENCH_TRY(service->prune());
  if (service->m_options.keep_finished > std::chrono::hours::zero())
    service->m_pruner = std::thread([raw = service.get()] { raw->run_pruner(); });
  for (auto& worker : service->m_workers)
    worker->thread = std::thread([raw = service.get(), w = worker.get()] { raw->run_worker(*w); });
  return service;
}

Service::Service(const exec::Checker& checker, const suite::Suite& suite, ServiceOptions options,
                 std::unique_ptr<TaskStore> store)
    : m_checker(checker), m_suite(suite), m_options(std::move(options)), m_store(std::move(store)) {
  std::vector<std::optional<int>> devices(m_options.gpus.begin(), m_options.gpus.end());
  if (devices.empty())
    devices.emplace_back(std::nullopt);
  const int per_device = m_options.workers_per_device;
  for (const auto& device : devices) {
    // One Evaluator per device, shared by its workers: one GPU lock, one spare child, one
    // counter-session right, and children started for that device.
    exec::EvaluatorOptions evaluator_options;
    evaluator_options.device = device.value_or(0);
    evaluator_options.counter_session = m_options.counter_session;
    evaluator_options.spare_prepare = m_options.spare_prepare;
    auto evaluator =
        std::make_shared<exec::Evaluator>(m_checker, m_suite, m_options.candidate_binary,
                                          m_options.reference_cache, evaluator_options);
    const std::string label = device ? fmt::format("cuda:{}", *device) : "cpu";
    for (int index = 0; index < per_device; ++index) {
      auto worker = std::make_unique<Worker>();
      worker->device = device;
      worker->label = per_device == 1 ? label : fmt::format("{}/{}", label, index);
      worker->name = device ? gpu_name(*device) : "";
      worker->evaluator = evaluator;
      m_workers.push_back(std::move(worker));
    }
  }
}

Service::~Service() {
  stop();
}

void Service::log(const std::string& line) const {
  if (m_options.log)
    m_options.log(line);
}

void Service::stop_accepting() {
  {
    std::lock_guard lock(m_mutex);
    m_stopping = true;
  }
  m_queue_cv.notify_all();
  m_done_cv.notify_all();
  m_stop_cv.notify_all();
}

void Service::stop() {
  stop_accepting();
  for (auto& worker : m_workers)
    if (worker->thread.joinable())
      worker->thread.join();
  if (m_pruner.joinable())
    m_pruner.join();
}

util::Expected<std::int64_t> Service::prune() {
  if (m_options.keep_finished == std::chrono::hours::zero())
    return std::int64_t{0};
  const auto now = m_options.clock ? m_options.clock() : std::chrono::system_clock::now();
  auto pruned = m_store->prune_finished(now - m_options.keep_finished);
  if (pruned && *pruned > 0)
    log(fmt::format("pruned {} finished task(s) older than {} hours", *pruned,
                    m_options.keep_finished.count()));
  return pruned;
}

void Service::run_pruner() {
  std::unique_lock lock(m_mutex);
  while (!m_stop_cv.wait_for(lock, m_options.prune_interval, [&] { return m_stopping; })) {
    lock.unlock();
    if (auto pruned = prune(); !pruned)
      log("pruning finished tasks failed: " + pruned.error().message);
    lock.lock();
  }
}

util::Error Service::unknown_task(const std::string& id) const {
  if (m_options.keep_finished == std::chrono::hours::zero())
    return util::make_error(util::ErrorKind::not_found,
                            fmt::format("unknown task id {}: it was never submitted here", id));
  return util::make_error(
      util::ErrorKind::not_found,
      fmt::format("unknown task id {}: it was never submitted here, or it finished more than {} "
                  "hours ago and was pruned (ptxbench serve --keep-finished-hours)",
                  id, m_options.keep_finished.count()));
}

util::Expected<Submitted> Service::submit(const TaskRequest& request) {
  Task task = new_task(request);
  {
    std::lock_guard lock(m_mutex);
    if (m_stopping)
      return util::make_error(util::ErrorKind::unsupported, "the service is shutting down");
    // Under the lock: the queue order is the store's submission order.
    PTXBENCH_TRY(m_store->insert(task, request.canonical));
    m_queue.push_back(task.id);
    m_unfinished.insert(task.id);
  }
  m_queue_cv.notify_one();
  return Submitted{task.id, task.solution_name};
}

util::Status Service::wait_for(const std::vector<std::string>& ids,
                               std::chrono::milliseconds wait) {
  for (const std::string& id : ids) {
    if (!is_task_id(id))
      return util::make_error(util::ErrorKind::not_found, "unknown task id " + id);
    PTXBENCH_TRY_ASSIGN(auto found, m_store->find(id));
    if (!found)
      return unknown_task(id);
  }
  std::unique_lock lock(m_mutex);
  m_done_cv.wait_for(lock, wait, [&] {
    return m_stopping || std::none_of(ids.begin(), ids.end(), [&](const std::string& id) {
             return m_unfinished.contains(id);
           });
  });
  return util::Ok{};
}

util::Expected<Task> Service::task(const std::string& id, std::chrono::milliseconds wait) {
  PTXBENCH_TRY_ASSIGN(auto tasks, this->tasks({id}, wait));
  return std::move(tasks.front());
}

util::Expected<std::vector<Task>> Service::tasks(const std::vector<std::string>& ids,
                                                 std::chrono::milliseconds wait) {
  PTXBENCH_TRY(wait_for(ids, wait));
  std::vector<Task> out;
  for (const std::string& id : ids) {
    PTXBENCH_TRY_ASSIGN(auto found, m_store->find(id));
    if (!found)
      return unknown_task(id);
    out.push_back(std::move(*found));
  }
  return out;
}

Health Service::health() const {
  std::lock_guard lock(m_mutex);
  Health out;
  out.queue_size = m_queue.size();
  out.stopping = m_stopping;
  for (const auto& worker : m_workers)
    out.workers.push_back(
        {worker->label, worker->name, worker->healthy, worker->task_id, worker->finished, ""});
  return out;
}

void Service::run_worker(Worker& worker) {
  if (worker.device)
    if (cudaError_t status = cudaSetDevice(*worker.device); status != cudaSuccess) {
      log(fmt::format("worker {}: cudaSetDevice failed ({}); it takes no tasks", worker.label,
                      cudaGetErrorString(status)));
      std::lock_guard lock(m_mutex);
      worker.healthy = false;
      return;
    }
  for (;;) {
    std::string id;
    {
      std::unique_lock lock(m_mutex);
      m_queue_cv.wait(lock, [&] { return m_stopping || !m_queue.empty(); });
      if (m_stopping)
        return;
      id = std::move(m_queue.front());
      m_queue.pop_front();
      worker.task_id = id;
    }
    Task task = run_task(worker, id);
    {
      std::lock_guard lock(m_mutex);
      worker.task_id.clear();
      ++worker.finished;
      m_unfinished.erase(id);
    }
    m_done_cv.notify_all();
    log(fmt::format("task {} {} {} on {}: {}", id, to_string(task.kind), task.problem, worker.label,
                    outcome_text(task)));
  }
}

Task Service::run_task(Worker& worker, const std::string& id) {
  Task task;
  task.id = id;
  task.state = TaskState::failed;
  if (auto running = m_store->mark_running(id, worker.label); !running) {
    task.error = running.error().message;
    return task;
  }
  if (auto found = m_store->find(id); found && *found)
    task = std::move(**found);
  else
    task.error = found ? "the task vanished from the store" : found.error().message;
  if (task.error.empty())
    evaluate(worker, task);
  task.finished_at = utc_now();
  if (auto written = m_store->finish(task); !written)
    log(fmt::format("task {}: the result could not be stored: {}", id, written.error().message));
  return task;
}

// Fills the task's result (completed) or error (failed). A throw from the evaluator is a
// broken set-up, caught here at the task boundary so the worker survives it.
void Service::evaluate(Worker& worker, Task& task) {
  task.state = TaskState::failed;
  auto json = m_store->request(task.id);
  if (!json) {
    task.error = json.error().message;
    return;
  }
  auto request = parse_task_request(dump_json(*json), task.kind, m_suite);
  if (!request) {
    task.error = "the stored request no longer parses: " + request.error().message;
    return;
  }
  auto problem = m_suite.find(request->problem);
  if (!problem) {
    task.error = problem.error().message;
    return;
  }
  try {
    auto evaluation = worker.evaluator->evaluate(request->source, **problem, request->options);
    if (!evaluation) {
      task.error = evaluation.error().message;
      return;
    }
    task.result = exec::to_json(*evaluation, **problem);
    if (!evaluation->gpu_ran)
      task.needs_gpu = evaluation->needs_gpu;
    task.state = TaskState::completed;
  } catch (const std::exception& error) {
    task.error = std::string("internal error: ") + error.what();
  }
}

} // namespace ptxbench::service
