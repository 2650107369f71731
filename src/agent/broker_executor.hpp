// The GPU step on a fleet of workers through a PostgreSQL broker (fleet/broker.hpp,
// docs/service.md "A fleet on PostgreSQL"): `ptxbench run --broker URL`.
//
// Problem. As with one evaluation service (remote_executor.hpp), a turn must come out exactly
// as it would on a local GPU, and the broker or the fleet failing must cost an infra turn, not
// a verdict; but the queue is shared by many runs and many hosts, and a run must neither lose
// nor duplicate a turn's evaluation when a worker dies or the database restarts.
//
// Approach. The static check runs here, as in GpuExecutor. A kernel that builds is submitted as
// one exec::EvalRequest under this run's id and a fresh client key (a retried submit is the
// same task), retried while the broker pushes back (`rate_limited`: the run's queue is full),
// then waited for with LISTEN/NOTIFY. A completed task's result is read exactly as the HTTP
// service's (read_result); a failed one (a poisoned task, a worker that kept dying) is an
// error, so the loop makes an infra turn that is not counted against the model.
//
// Thread-safe: each turn takes a broker connection from the run's pool (fleet/broker_pool.hpp)
// and gives it back.
#pragma once

#include "agent/executor.hpp"
#include "fleet/broker.hpp"
#include "fleet/broker_pool.hpp"

#include <chrono>
#include <string>

namespace ptxbench::agent {

struct BrokerClientOptions {
  fleet::BrokerOptions broker;
  std::string run;        // this run's id in the broker (its fairness unit)
  exec::EvalOptions eval; // sent with every task (the language too); the arch is the turn's
  int priority = 0;
  std::chrono::milliseconds max_wait{std::chrono::hours(2)}; // submit to finished
};

class BrokerExecutor final : public Executor {
public:
  BrokerExecutor(const exec::Checker& checker, BrokerClientOptions options);
  util::Expected<TurnResult> evaluate(const std::string& source, const suite::Problem& problem,
                                      compile::Arch arch) override;
  std::string_view name() const override { return "broker"; }

private:
  util::Expected<fleet::FleetTask> submit_and_wait(fleet::Broker& broker,
                                                   const fleet::Submission& submission);

  const exec::Checker& m_checker;
  BrokerClientOptions m_options;
  fleet::BrokerPool m_pool;
};

} // namespace ptxbench::agent
