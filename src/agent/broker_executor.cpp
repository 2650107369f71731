#include "agent/broker_executor.hpp"

#include "agent/feedback.hpp"
#include "agent/remote_executor.hpp"

#include <fmt/format.h>
#include <random>
#include <thread>

namespace ptxbench::agent {
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::size_t kMaxFailureChars = 300;

// 128 random bits as hex: a submission's client key.
std::string fresh_key() {
  std::random_device random;
  std::string key;
  for (int i = 0; i < 4; ++i)
    key += fmt::format("{:08x}", static_cast<std::uint32_t>(random()));
  return key;
}

} // namespace

BrokerExecutor::BrokerExecutor(const exec::Checker& checker, BrokerClientOptions options)
    : m_checker(checker), m_options(std::move(options)) {}

util::Expected<std::unique_ptr<fleet::Broker>> BrokerExecutor::take() {
  {
    std::lock_guard lock(m_mutex);
    if (!m_idle.empty()) {
      auto broker = std::move(m_idle.back());
      m_idle.pop_back();
      return broker;
    }
  }
  return fleet::Broker::connect(m_options.broker);
}

void BrokerExecutor::give_back(std::unique_ptr<fleet::Broker> broker) {
  std::lock_guard lock(m_mutex);
  m_idle.push_back(std::move(broker));
}

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
      m_options.run, fresh_key(), exec::EvalRequest{problem.name(), source, std::nullopt, options},
      m_options.priority};
  PTXBENCH_TRY_ASSIGN(auto broker, take());
  auto task = submit_and_wait(*broker, submission);
  give_back(std::move(broker));
  PTXBENCH_TRY(task);
  if (task->state == fleet::FleetState::failed)
    return util::make_error(util::ErrorKind::unsupported,
                            fmt::format("the fleet failed broker task {}: {}", task->id,
                                        clip(task->error, kMaxFailureChars)));
  PTXBENCH_TRY_ASSIGN(auto result, read_result(task->result.value_or(nlohmann::ordered_json()),
                                               task->needs_gpu, std::move(checked.report)));
  return evaluation_turn(result.evaluation, std::move(result.trace), source);
}

} // namespace ptxbench::agent
