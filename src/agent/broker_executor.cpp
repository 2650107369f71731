#include "agent/broker_executor.hpp"

#include "agent/feedback.hpp"
#include "agent/remote_executor.hpp"
#include "util/hash.hpp"

#include <fmt/format.h>
#include <thread>

namespace ptxbench::agent {
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::size_t kMaxFailureChars = 300;

} // namespace

BrokerExecutor::BrokerExecutor(const exec::Checker& checker, BrokerClientOptions options)
    : m_checker(checker), m_options(std::move(options)), m_pool(m_options.broker) {}

util::Expected<fleet::FleetTask>
BrokerExecutor::submit_and_wait(fleet::Broker& broker, const fleet::Submission& submission) {
  const auto deadline = Clock::now() + m_options.max_wait;
  auto id = broker.submit(submission);
  for (auto backoff = std::chrono::milliseconds(200);
       !id && id.error().kind == util::ErrorKind::rate_limited && Clock::now() < deadline;
       backoff = std::min(backoff * 2, std::chrono::milliseconds(5000))) {
    std::this_thread::sleep_for(backoff);
    id = broker.submit(submission);
  }
  PTXBENCH_TRY(id);
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  PTXBENCH_TRY_ASSIGN(auto tasks, broker.wait({*id}, left));
  const fleet::FleetTask& task = tasks.front();
  if (task.state != fleet::FleetState::completed && task.state != fleet::FleetState::failed)
    return util::make_error(util::ErrorKind::timeout,
                            fmt::format("broker task {} did not finish within {} s", task.id,
                                        m_options.max_wait.count() / 1000));
  return task;
}

util::Expected<TurnResult> BrokerExecutor::evaluate(const std::string& source,
                                                    const suite::Problem& problem,
                                                    compile::Arch arch) {
  PTXBENCH_TRY_ASSIGN(
      auto checked,
      check_before_gpu(m_checker, frontend::of(m_options.eval.language), source, problem, arch));
  if (checked.stopped)
    return std::move(*checked.stopped);
  exec::EvalOptions options = m_options.eval;
  options.arch = arch;
  const fleet::Submission submission{
      m_options.run, util::random_hex_128(),
      exec::EvalRequest{problem.name(), source, std::nullopt, options}, m_options.priority};
  PTXBENCH_TRY_ASSIGN(auto task, [&]() -> util::Expected<fleet::FleetTask> {
    PTXBENCH_TRY_ASSIGN(auto broker, m_pool.take());
    return submit_and_wait(*broker, submission);
  }());
  if (task.state == fleet::FleetState::failed)
    return util::make_error(util::ErrorKind::unsupported,
                            fmt::format("the fleet failed broker task {}: {}", task.id,
                                        clip(task.error, kMaxFailureChars)));
  PTXBENCH_TRY_ASSIGN(auto result, read_result(task.result.value_or(nlohmann::ordered_json()),
                                               task.needs_gpu, std::move(checked.report)));
  return evaluation_turn(result.evaluation, std::move(result.trace), source);
}

} // namespace ptxbench::agent
