#include "service/task_executor.hpp"

#include "agent/feedback.hpp"
#include "agent/remote_executor.hpp"
#include "exec/eval_request.hpp"

#include <fmt/format.h>
#include <thread>

namespace ptxbench::service {
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::size_t kMaxFailureChars = 300;
constexpr std::chrono::milliseconds kLongPoll{std::chrono::seconds(30)};

// The turn of a completed task whose check, run here, passed.
util::Expected<agent::TurnResult> completed_turn(const Task& task, exec::CheckReport report,
                                                 const std::string& source) {
  PTXBENCH_TRY_ASSIGN(auto result, agent::read_result(task.result.value_or(Json()), task.needs_gpu,
                                                      std::move(report)));
  return agent::evaluation_turn(result.evaluation, std::move(result.trace), source);
}

} // namespace

util::Expected<Task> TaskExecutor::submit_and_wait(const TaskRequest& request) {
  const auto deadline = Clock::now() + m_max_wait;
  auto submitted = m_service.submit(request);
  for (auto backoff = std::chrono::milliseconds(200);
       !submitted && submitted.error().kind == util::ErrorKind::rate_limited &&
       Clock::now() < deadline;
       backoff = std::min(backoff * 2, std::chrono::milliseconds(5000))) {
    std::this_thread::sleep_for(backoff);
    submitted = m_service.submit(request);
  }
  PTXBENCH_TRY(submitted);
  while (true) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    const auto wait = std::max(std::min(left, kLongPoll), std::chrono::milliseconds(0));
    const auto asked = Clock::now();
    PTXBENCH_TRY_ASSIGN(auto task, m_service.task(submitted->task_id, wait));
    if (task.state == TaskState::completed || task.state == TaskState::failed)
      return task;
    // A long-poll answered early without a verdict: the service is stopping.
    if (Clock::now() - asked < wait && m_service.health().stopping)
      return util::make_error(util::ErrorKind::unsupported,
                              fmt::format("the server stopped before task {} finished", task.id));
    if (Clock::now() >= deadline)
      return util::make_error(
          util::ErrorKind::timeout,
          fmt::format("task {} did not finish within {} s", task.id, m_max_wait.count() / 1000));
  }
}

util::Expected<agent::TurnResult> TaskExecutor::evaluate(const std::string& source,
                                                         const suite::Problem& problem,
                                                         compile::Arch arch) {
  PTXBENCH_TRY_ASSIGN(
      auto checked,
      agent::check_before_gpu(m_checker, frontend::of(m_options.language), source, problem, arch));
  if (checked.stopped)
    return std::move(*checked.stopped);
  exec::EvalOptions options = m_options;
  options.arch = arch;
  const std::string body =
      dump_json(exec::to_json(exec::EvalRequest{problem.name(), source, std::nullopt, options}));
  PTXBENCH_TRY_ASSIGN(auto request, parse_task_request(body, kind_of(options), m_service.suite()));
  request.run = m_run;
  PTXBENCH_TRY_ASSIGN(auto task, submit_and_wait(request));
  if (task.state == TaskState::failed)
    return util::make_error(util::ErrorKind::unsupported,
                            fmt::format("the service failed task {}: {}", task.id,
                                        agent::clip(task.error, kMaxFailureChars)));
  return completed_turn(task, std::move(checked.report), source);
}

util::Expected<TaskFeedback> task_feedback(const exec::Checker& checker, const Task& task,
                                           const suite::Problem& problem, const std::string& source,
                                           compile::Language language,
                                           std::optional<double> target_speedup) {
  if (task.state == TaskState::failed)
    return util::make_error(util::ErrorKind::conflict,
                            fmt::format("task {} failed (no verdict to give feedback on): {}",
                                        task.id, agent::clip(task.error, kMaxFailureChars)));
  if (task.state != TaskState::completed)
    return util::make_error(
        util::ErrorKind::conflict,
        fmt::format("task {} is {}: wait until it has finished", task.id, to_string(task.state)));
  if (exec::solution_name(source, problem, language) != task.solution_name)
    return util::make_error(util::ErrorKind::invalid_input,
                            fmt::format("the source is not the one task {} evaluated (its "
                                        "solution is {}; check the language too)",
                                        task.id, task.solution_name));
  PTXBENCH_TRY_ASSIGN(auto checked, agent::check_before_gpu(checker, frontend::of(language), source,
                                                            problem, task.arch));
  agent::TurnResult turn;
  if (checked.stopped) {
    turn = std::move(*checked.stopped);
  } else {
    auto completed = completed_turn(task, std::move(checked.report), source);
    if (!completed)
      return util::make_error(util::ErrorKind::conflict,
                              fmt::format("task {} is not an evaluation of this source: {}",
                                          task.id, completed.error().message));
    turn = std::move(*completed);
  }
  return TaskFeedback{turn.category,
                      turn.feedback +
                          agent::closing_line(turn.category, turn.speedup, target_speedup),
                      turn.speedup};
}

} // namespace ptxbench::service
