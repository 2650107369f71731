// The service's durable task table: one SQLite database in the state folder
// (`ptxbench serve --state DIR`, tasks.sqlite), written at every state change, so that a
// killed or restarted server loses nothing.
//
// Approach. A task is inserted with its canonical request before its id is returned to the
// client; a worker marks it running (attempts + 1) before the evaluation starts and writes
// the result in the same statement that marks it finished. At start, recover() puts the tasks
// a stopped server left running back in the queue (a task that was already started
// kMaxAttempts times fails instead: something in it takes the server down) and returns the
// queue in submission order. A lock file keeps a second server off the same folder.
// prune_finished() deletes finished tasks by their finish time (the service's retention rule);
// queued and running tasks are never deleted.
//
// Invariants: a task id the service has answered is in the table until it is pruned, and only a
// finished task is pruned; a finished task never changes again. Thread-safe (one connection
// behind a mutex).
#pragma once

#include "service/task.hpp"
#include "store/sqlite.hpp"
#include "util/error.hpp"

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace ptxbench::service {

class TaskStore {
public:
  static constexpr std::string_view kDatabaseName = "tasks.sqlite";
  static constexpr int kMaxAttempts = 3;

  // Creates the folder and the database when absent; io when another server holds the folder.
  static util::Expected<std::unique_ptr<TaskStore>> open(const std::filesystem::path& dir);
  ~TaskStore();
  TaskStore(const TaskStore&) = delete;
  TaskStore& operator=(const TaskStore&) = delete;

  util::Status insert(const Task& task, const Json& request);
  // Queued -> running on `device`; the attempt count goes up by one.
  util::Status mark_running(const std::string& id, const std::string& device);
  // Writes the finished state with its result, needs_gpu, error and finish time.
  util::Status finish(const Task& task);
  util::Expected<std::optional<Task>> find(const std::string& id);
  // The canonical request the task was submitted with.
  util::Expected<Json> request(const std::string& id);
  // Running tasks back to queued (or failed past kMaxAttempts); the queued ids, oldest first.
  util::Expected<std::vector<std::string>> recover();
  // Deletes the completed and failed tasks that finished before `cutoff`; how many it deleted.
  util::Expected<std::int64_t> prune_finished(std::chrono::system_clock::time_point cutoff);

  const std::filesystem::path& dir() const { return m_dir; }

private:
  TaskStore(std::filesystem::path dir, store::detail::Connection db, int lock_fd);
  util::Status migrate();

  std::filesystem::path m_dir;
  std::mutex m_mutex;
  store::detail::Connection m_db;
  int m_lock_fd = -1;
};

} // namespace ptxbench::service
