// `ptxbench serve --broker URL`: this host's GPUs as workers of a fleet that shares one
// PostgreSQL queue (fleet/broker.hpp, docs/service.md "A fleet on PostgreSQL").
//
// Problem. Each GPU of each host must take the tasks it can run from the shared queue, evaluate
// them exactly as the HTTP service's workers do (the same evaluator, the same result JSON), and
// keep going through evaluator failures and database restarts; an evaluation measured on a GPU
// that throttled or broke is not a result (docs/service.md "Health").
//
// Approach. One fleet::Worker thread per device (or one "cpu" worker, whose evaluations stop
// after the static check), each with its own broker connection, its device's exec::Evaluator
// and its device's health probe (measure/gpu_health_probe.hpp; none without a GPU). A leased
// request is evaluated as service::Service evaluates a task, in the GPU's turn (device_turn.hpp:
// workers of other processes on the same GPU wait), between the probe's before() and after();
// judge_health (measure/gpu_health.hpp) reads the probe's samples with the evaluation's own
// (exec::Evaluation::clocks). Healthy: the result is recorded. Throttled: the task is requeued
// with the reason (the worker drains after three in a row). Broken: the task is requeued, the
// worker drains at once and `restart` is called, because a broken CUDA context cannot be
// repaired inside the process. Each verdict is the worker's health in its row. A GPU already
// broken at start drains at once and asks for no restart (no restart loop). A worker thread
// whose broker stays unreachable past the reconnect window is started again after a pause;
// stop() lets running evaluations record. A GPU's counter session is one per device across
// processes: while another process announces itself on a worker's GPU, that worker's spare
// child keeps none open between evaluations (each evaluation opens its own, in its turn).
#pragma once

#include "exec/check.hpp"
#include "exec/evaluator.hpp"
#include "fleet/worker.hpp"
#include "measure/gpu_health_probe.hpp"
#include "suite/suite.hpp"

#include <atomic>
#include <condition_variable>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
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
  exec::SparePrepare spare_prepare = exec::SparePrepare::beside_evaluation;
  std::filesystem::path candidate_binary;
  std::filesystem::path reference_cache = exec::ReferenceLatencyCache::default_file();
  // The health probe of a worker's device; unset: the real one (NVML and a CUDA probe) for a
  // GPU and none for the cpu worker. Tests stand in a GPU that throttles or breaks.
  std::function<std::unique_ptr<measure::GpuHealthProbe>(std::optional<int> device)> health_probe;
  // Called once, from a worker's thread, when a GPU's CUDA state broke: the process must start
  // again (`serve --broker` stops the host and re-executes itself).
  std::function<void(const std::string& why)> restart;
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
  fleet::TaskOutcome run_evaluation(Slot& slot, const fleet::LeasedTask& task,
                                    std::vector<measure::HealthSample>& timing_samples);
  fleet::TaskOutcome judged(Slot& slot, fleet::TaskOutcome outcome,
                            const measure::HealthEvidence& evidence);
  // Judges the device once before taking tasks; true when it is broken.
  bool check_at_start(Slot& slot, fleet::WorkerOptions& worker);
  // Lets each GPU's spare child hold the counter session between evaluations only while no
  // other process announces itself on that GPU (device_turn.hpp DevicePresence); once, then
  // every kPresencePeriod until stop().
  void follow_presence();
  void watch_presence();
  void log(const std::string& line) const;

  const exec::Checker& m_checker;
  const suite::Suite& m_suite;
  FleetHostOptions m_options;
  std::atomic<bool> m_stopping{false};
  std::atomic<bool> m_restart_requested{false};
  std::vector<std::unique_ptr<Slot>> m_slots;
  std::mutex m_stop_mutex;
  std::condition_variable m_stop_cv; // wakes the presence watcher at stop()
  std::thread m_presence_watcher;
};

} // namespace ptxbench::service
