// `ptxbench serve --broker URL`: this host's GPUs as workers of a fleet that shares one
// PostgreSQL queue (fleet/broker.hpp, docs/service.md "A fleet on PostgreSQL").
//
// Problem. Each GPU of each host must take the tasks it can run from the shared queue, evaluate
// them exactly as the HTTP service's workers do (the same evaluator, the same result JSON), and
// keep going through evaluator failures and database restarts.
//
// Approach. One fleet::Worker thread per device (or one "cpu" worker, whose evaluations stop
// after the static check), each with its own broker connection and its device's
// exec::Evaluator. A leased request is evaluated as service::Service evaluates a task, in the
// GPU's turn (device_turn.hpp: workers of other processes on the same GPU wait); an
// evaluation the host's health check rejects (`health`: the GPU throttled while it ran) is
// requeued, not reported. A worker thread whose broker stays unreachable past the reconnect
// window is started again after a pause; stop() lets running evaluations record.
#pragma once

#include "exec/check.hpp"
#include "exec/evaluator.hpp"
#include "fleet/worker.hpp"
#include "suite/suite.hpp"

#include <atomic>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace ptxbench::service {

struct FleetHostOptions {
  fleet::BrokerOptions broker;
  std::vector<int> gpus; // CUDA devices; empty: one worker without a GPU ("cpu")
  std::string host;      // this host's name in the fleet; empty: gethostname()
  compile::Arch cpu_arch = compile::Arch::sm_90a; // the tasks a worker without a GPU takes
  exec::CounterSessionAhead counter_session = exec::CounterSessionAhead::when_idle;
  std::filesystem::path candidate_binary;
  std::filesystem::path reference_cache = exec::ReferenceLatencyCache::default_file();
  // Why the last evaluation on `device` is not a result (the GPU throttled), or nullopt.
  std::function<std::optional<std::string>(std::optional<int> device)> health;
  std::function<void(const std::string&)> log;
};

class FleetHost {
public:
  static util::Expected<std::unique_ptr<FleetHost>>
  start(const exec::Checker& checker, const suite::Suite& suite, FleetHostOptions options);
  ~FleetHost();
  FleetHost(const FleetHost&) = delete;
  FleetHost& operator=(const FleetHost&) = delete;

  // The workers' ids, "<host>/cuda:0" or "<host>/cpu".
  std::vector<std::string> worker_ids() const;
  // Lets running evaluations record, then returns.
  void stop();

private:
  struct Slot;
  FleetHost(const exec::Checker& checker, const suite::Suite& suite, FleetHostOptions options);
  void run_slot(Slot& slot);
  fleet::TaskOutcome evaluate(Slot& slot, const fleet::LeasedTask& task);
  void log(const std::string& line) const;

  const exec::Checker& m_checker;
  const suite::Suite& m_suite;
  FleetHostOptions m_options;
  std::atomic<bool> m_stopping{false};
  std::vector<std::unique_ptr<Slot>> m_slots;
};

} // namespace ptxbench::service
