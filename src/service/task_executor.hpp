// The agent loop's executor over this server's own task queue (task_service.hpp): the GPU step
// of a rollout's turn (rollout/rollouts.hpp) waits in the same queue as every other evaluation
// the server takes, and comes out as RemoteExecutor's turns do.
//
// The static check runs in the caller's thread (check_before_gpu, as GpuExecutor and
// RemoteExecutor do), so a kernel that does not build never queues; one that builds is a task of
// `options` (kind_of: /evaluate, or /sanitize with memcheck), under the fleet run `run`, awaited
// until it finishes. A full queue is waited out with backoff; a task the service failed, or none
// finished within `max_wait`, is an error: the loop's infra turn.
#pragma once

#include "agent/executor.hpp"
#include "service/task_service.hpp"

#include <chrono>
#include <string>

namespace ptxbench::service {

class TaskExecutor final : public agent::Executor {
public:
  TaskExecutor(const exec::Checker& checker, TaskService& service, exec::EvalOptions options,
               std::string run, std::chrono::milliseconds max_wait = std::chrono::hours(2))
      : m_checker(checker), m_service(service), m_options(options), m_run(std::move(run)),
        m_max_wait(max_wait) {}
  util::Expected<agent::TurnResult>
  evaluate(const std::string& source, const suite::Problem& problem, compile::Arch arch) override;
  std::string_view name() const override { return "service"; }

private:
  util::Expected<Task> submit_and_wait(const TaskRequest& request);

  const exec::Checker& m_checker;
  TaskService& m_service;
  exec::EvalOptions m_options;
  std::string m_run;
  std::chrono::milliseconds m_max_wait;
};

// The feedback of a finished task, as the agent loop renders it for the same kernel: the check
// of `source` (the compile cache makes it cheap), then the task's result, then the closing line
// against `target_speedup`. conflict for a task that has not finished or failed.
struct TaskFeedback {
  store::TurnCategory category = store::TurnCategory::infra;
  std::string feedback;
  std::optional<double> speedup;
};
util::Expected<TaskFeedback> task_feedback(const exec::Checker& checker, const Task& task,
                                           const suite::Problem& problem, const std::string& source,
                                           compile::Language language,
                                           std::optional<double> target_speedup);

} // namespace ptxbench::service
