// The evaluation service without its HTTP face (http_server.hpp): a durable FIFO of tasks and
// one supervisor per GPU, every GPU of the machine from one process (DESIGN.md §"Service",
// docs/service.md).
//
// Problem. Many agents share few GPUs. An evaluation holds its GPU for seconds to minutes and
// must not share it (timing); submitting must return at once; a client must be able to wait
// for its result without polling in a tight loop; and a restart (deploy, crash, SIGKILL) must
// lose no task and no result.
//
// Approach. submit() writes the task to the task store (task_store.hpp) and appends its id to
// the in-memory queue; each worker thread selects its CUDA device once, uses its device's
// exec::Evaluator (built for that device, so its candidate children run there too; its
// reference-latency cache stays warm for the life of the process) and takes the oldest queued
// task, marks it running, evaluates it and writes the result. task()
// is a long-poll: it waits on a condition variable until the task has finished or the wait
// has passed. start() re-queues what the task store says a stopped server left unfinished.
// Without a GPU there is one worker, "cpu", whose evaluations stop after the static check
// exactly as `ptxbench eval` does on such a machine. Retention: finished tasks that finished
// more than `keep_finished` ago are deleted from the store at start and then by a pruner
// thread every `prune_interval`; a pruned id is unknown (404) like one never submitted.
//
// Invariants: a task leaves the queue only to a worker that has marked it running; a worker
// runs one task at a time; stop() lets running tasks finish and leaves queued ones queued in
// the store; every long-poll returns once stopping starts; queued and running tasks are never
// pruned.
#pragma once

#include "exec/check.hpp"
#include "exec/evaluator.hpp"
#include "service/task.hpp"
#include "service/task_service.hpp"
#include "service/task_store.hpp"
#include "suite/suite.hpp"
#include "util/error.hpp"

#include <chrono>
#include <condition_variable>
#include <deque>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_set>
#include <vector>

namespace ptxbench::service {

struct ServiceOptions {
  static constexpr std::chrono::hours kDefaultKeepFinished{7 * 24};

  std::filesystem::path state_dir; // the task store's folder
  // CUDA device indices, one supervisor (exec::Evaluator, on that device) each; empty: one
  // without a GPU ("cpu").
  std::vector<int> gpus;
  // Worker threads per device, sharing its supervisor: with more than one, a task's static
  // check and untimed phases overlap another's on the same GPU (its GPU lock keeps timing
  // exclusive). `--workers-per-gpu`.
  int workers_per_device = 1;
  // When each supervisor's spare child opens the counter session (`--counter-session`).
  exec::CounterSessionAhead counter_session = exec::CounterSessionAhead::when_idle;
  // When each supervisor's spare child is prepared (`--spare-prepare`).
  exec::SparePrepare spare_prepare = exec::SparePrepare::beside_evaluation;
  std::filesystem::path candidate_binary; // empty: exec::candidate_binary_path()
  std::filesystem::path reference_cache = exec::ReferenceLatencyCache::default_file();
  // One line per event (task finished, worker failure, tasks pruned); called from any thread.
  // Optional.
  std::function<void(const std::string&)> log;
  // Completed and failed tasks are deleted once they finished longer ago than this: at start,
  // then every `prune_interval`. Zero keeps them forever (`--keep-finished-hours 0`).
  std::chrono::hours keep_finished = kDefaultKeepFinished;
  std::chrono::milliseconds prune_interval = std::chrono::hours(1);
  // The wall clock the retention rule reads (tests move it); system_clock::now when empty.
  std::function<std::chrono::system_clock::time_point()> clock;
};

class Service final : public TaskService {
public:
  // Opens the task store, re-queues unfinished tasks and starts the workers.
  static util::Expected<std::unique_ptr<Service>>
  start(const exec::Checker& checker, const suite::Suite& suite, ServiceOptions options);
  ~Service() override;
  Service(const Service&) = delete;
  Service& operator=(const Service&) = delete;

  // unsupported once stopping has started; io when the task store refuses.
  util::Expected<Submitted> submit(const TaskRequest& request) override;
  util::Expected<Task> task(const std::string& id, std::chrono::milliseconds wait) override;
  util::Expected<std::vector<Task>> tasks(const std::vector<std::string>& ids,
                                          std::chrono::milliseconds wait) override;
  Health health() const override;
  util::Expected<std::string> metrics() const override { return health_prometheus(health()); }
  const suite::Suite& suite() const override { return m_suite; }

  void stop_accepting() override;
  // stop_accepting(), then waits for running tasks to finish; queued ones stay in the store.
  void stop();

private:
  struct Worker;
  Service(const exec::Checker& checker, const suite::Suite& suite, ServiceOptions options,
          std::unique_ptr<TaskStore> store);
  // Deletes the finished tasks older than keep_finished (nothing when it is zero).
  util::Expected<std::int64_t> prune();
  void run_pruner();
  util::Error unknown_task(const std::string& id) const;
  void run_worker(Worker& worker);
  Task run_task(Worker& worker, const std::string& id);
  void evaluate(Worker& worker, Task& task);
  util::Status wait_for(const std::vector<std::string>& ids, std::chrono::milliseconds wait);
  void log(const std::string& line) const;

  const exec::Checker& m_checker;
  const suite::Suite& m_suite;
  ServiceOptions m_options;
  std::unique_ptr<TaskStore> m_store;
  mutable std::mutex m_mutex;
  std::condition_variable m_queue_cv; // workers wait for tasks
  std::condition_variable m_done_cv;  // long-polls wait for finished tasks
  std::condition_variable m_stop_cv;  // the pruner waits for its next round or for stopping
  std::deque<std::string> m_queue;
  std::unordered_set<std::string> m_unfinished; // queued or running in this process
  bool m_stopping = false;
  std::vector<std::unique_ptr<Worker>> m_workers;
  std::thread m_pruner; // only when keep_finished is not zero
};

// `--gpus`: "all" (every device; none on a machine without a GPU) or a list of indices
// "0,1" that must exist among `device_count`.
util::Expected<std::vector<int>> parse_gpus(std::string_view spec, int device_count);

} // namespace ptxbench::service
