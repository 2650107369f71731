#include "service/fleet_host.hpp"

#include "exec/evaluation.hpp"
#include "service/device_turn.hpp"
#include "util/process.hpp"

#include <algorithm>
#include <cuda_runtime.h>
#include <fmt/format.h>

namespace ptxbench::service {

struct FleetHost::Slot {
  std::optional<int> device;
  fleet::WorkerInfo info;
  std::shared_ptr<exec::Evaluator> evaluator;
  std::unique_ptr<measure::GpuHealthProbe> probe; // none without a GPU
  std::optional<DevicePresence> presence;         // none without a GPU
  bool sessions_ahead = true; // the evaluator's spare may hold the counter session
  std::unique_ptr<fleet::Broker> broker;
  std::unique_ptr<fleet::Worker> worker;
  std::thread thread;
};

namespace {

// How often a worker looks for other processes on its GPU.
constexpr std::chrono::milliseconds kPresencePeriod{500};

// The GPU's name and the architecture its tasks are compiled for (nullopt: none ptxbench runs).
std::pair<std::string, std::optional<compile::Arch>> gpu_of(int device) {
  cudaDeviceProp props{};
  if (cudaGetDeviceProperties(&props, device) != cudaSuccess)
    return {"", std::nullopt};
  const auto arch = props.major == 9    ? compile::parse_arch("sm_90a")
                    : props.major == 10 ? compile::parse_arch("sm_100a")
                                        : std::nullopt;
  return {props.name, arch};
}

// The broker options of the worker `id`: its lost and restored connections in the host's log.
fleet::BrokerOptions broker_options(const FleetHostOptions& host, const std::string& id) {
  fleet::BrokerOptions options = host.broker;
  if (host.log)
    options.log = [log = host.log, id](const std::string& line) { log(id + ": " + line); };
  return options;
}

fleet::TaskOutcome failed(std::string reason) {
  return fleet::TaskOutcome{fleet::OutcomeKind::failed, {}, {}, std::move(reason)};
}

// The evaluation's own NVML samples around its timing (exec/gpu_timing.cpp writes them; a
// string in a sample's place says why there is none).
std::vector<measure::HealthSample> timing_samples(const trace::Json& clocks) {
  std::vector<measure::HealthSample> out;
  for (const auto& [key, moment] : {std::pair{"before", measure::SampleMoment::before_timing},
                                    std::pair{"after", measure::SampleMoment::after_timing}}) {
    const auto found = clocks.find(key);
    if (found == clocks.end() || !found->is_object())
      continue;
    measure::GpuSnapshot gpu;
    gpu.sm_clock_mhz = found->value("sm_clock_mhz", 0u);
    gpu.memory_clock_mhz = found->value("memory_clock_mhz", 0u);
    gpu.max_sm_clock_mhz = found->value("max_sm_clock_mhz", 0u);
    gpu.power_w = found->value("power_w", 0.0);
    gpu.temperature_c = found->value("temperature_c", 0u);
    gpu.clock_event_reasons = found->value("clock_event_reasons", std::uint64_t{0});
    gpu.clock_event_names = measure::decode_clock_event_reasons(gpu.clock_event_reasons);
    out.push_back({moment, std::move(gpu)});
  }
  return out;
}

} // namespace

util::Expected<std::unique_ptr<FleetHost>> FleetHost::start(const exec::Checker& checker,
                                                            const suite::Suite& suite,
                                                            FleetHostOptions options) {
  PTXBENCH_TRY(fleet::check_broker_url(options.broker.url));
  std::unique_ptr<FleetHost> host(new FleetHost(checker, suite, std::move(options)));
  for (auto& slot : host->m_slots) {
    PTXBENCH_TRY_ASSIGN(slot->broker,
                        fleet::Broker::connect(broker_options(host->m_options, slot->info.id)));
    fleet::WorkerOptions worker;
    worker.info = slot->info;
    worker.log = host->m_options.log;
    const bool broken = host->check_at_start(*slot, worker);
    Slot* raw = slot.get();
    FleetHost* self = host.get();
    slot->worker = std::make_unique<fleet::Worker>(
        *slot->broker,
        [self, raw](const fleet::LeasedTask& task) { return self->evaluate(*raw, task); },
        std::move(worker));
    // A restart would find it broken again: it waits for a person instead.
    if (broken)
      slot->worker->drain("its GPU is broken at start (" + slot->info.id + ")");
  }
  host->follow_presence();
  if (std::any_of(host->m_slots.begin(), host->m_slots.end(),
                  [](const auto& slot) { return slot->presence.has_value(); }))
    host->m_presence_watcher = std::thread([self = host.get()] { self->watch_presence(); });
  for (auto& slot : host->m_slots)
    slot->thread = std::thread([self = host.get(), raw = slot.get()] { self->run_slot(*raw); });
  return host;
}

FleetHost::FleetHost(const exec::Checker& checker, const suite::Suite& suite,
                     FleetHostOptions options)
    : m_checker(checker), m_suite(suite), m_options(std::move(options)) {
  if (m_options.host.empty())
    m_options.host = util::host_name();
  std::vector<std::optional<int>> devices(m_options.gpus.begin(), m_options.gpus.end());
  if (devices.empty())
    devices.emplace_back(std::nullopt);
  for (const auto& device : devices) {
    auto slot = std::make_unique<Slot>();
    slot->device = device;
    exec::EvaluatorOptions evaluator_options;
    evaluator_options.device = device.value_or(0);
    evaluator_options.counter_session = m_options.counter_session;
    evaluator_options.spare_prepare = m_options.spare_prepare;
    slot->evaluator =
        std::make_shared<exec::Evaluator>(m_checker, m_suite, m_options.candidate_binary,
                                          m_options.reference_cache, evaluator_options);
    if (device) {
      if (auto presence = DevicePresence::announce(*device))
        slot->presence.emplace(std::move(*presence));
      else
        log(presence.error().message);
    }
    if (m_options.health_probe)
      slot->probe = m_options.health_probe(device);
    else if (device)
      slot->probe = measure::make_gpu_health_probe(*device);
    const std::string label = device ? fmt::format("cuda:{}", *device) : "cpu";
    auto [name, arch] =
        device ? gpu_of(*device) : std::pair{std::string(), std::optional(m_options.cpu_arch)};
    slot->info = fleet::WorkerInfo{m_options.host + "/" + label, m_options.host, label, name,
                                   arch.value_or(m_options.cpu_arch)};
    m_slots.push_back(std::move(slot));
  }
}

FleetHost::~FleetHost() {
  stop();
}

std::vector<std::string> FleetHost::worker_ids() const {
  std::vector<std::string> out;
  for (const auto& slot : m_slots)
    out.push_back(slot->info.id);
  return out;
}

void FleetHost::stop() {
  {
    std::lock_guard lock(m_stop_mutex);
    m_stopping = true;
  }
  m_stop_cv.notify_all();
  if (m_presence_watcher.joinable())
    m_presence_watcher.join();
  for (auto& slot : m_slots)
    if (slot->worker)
      slot->worker->stop();
  for (auto& slot : m_slots)
    if (slot->thread.joinable())
      slot->thread.join();
}

void FleetHost::follow_presence() {
  for (auto& slot : m_slots) {
    if (!slot->presence)
      continue;
    const bool alone = slot->presence->alone();
    if (alone == slot->sessions_ahead)
      continue;
    slot->evaluator->allow_counter_sessions_ahead(alone);
    slot->sessions_ahead = alone;
    log(fmt::format("{}: {}", slot->info.id,
                    alone ? "alone on its GPU again: its spare child may hold the counter session"
                          : "another process uses its GPU: each evaluation opens its own counter "
                            "session, in its turn"));
  }
}

void FleetHost::watch_presence() {
  std::unique_lock lock(m_stop_mutex);
  while (!m_stop_cv.wait_for(lock, kPresencePeriod, [this] { return m_stopping.load(); })) {
    lock.unlock();
    follow_presence();
    lock.lock();
  }
}

void FleetHost::log(const std::string& line) const {
  if (m_options.log)
    m_options.log(line);
}

void FleetHost::run_slot(Slot& slot) {
  while (!m_stopping) {
    auto ran = slot.worker->run();
    if (ran || m_stopping)
      return;
    log(fmt::format("{}: the broker could not be reached ({}); trying again", slot.info.id,
                    ran.error().message));
    std::this_thread::sleep_for(std::chrono::seconds(1));
  }
}

bool FleetHost::check_at_start(Slot& slot, fleet::WorkerOptions& worker) {
  if (!slot.probe) {
    worker.health = "no GPU";
    return false;
  }
  slot.probe->before();
  const measure::HealthEvidence evidence = slot.probe->after();
  const measure::HealthVerdict verdict = measure::judge_health(evidence);
  worker.health = measure::health_text(verdict, evidence.unavailable);
  return verdict.state == measure::HealthState::broken;
}

fleet::TaskOutcome FleetHost::evaluate(Slot& slot, const fleet::LeasedTask& task) {
  // Another process's workers on this GPU wait for the end of this evaluation and its health
  // samples.
  std::optional<DeviceTurn> turn;
  if (slot.device) {
    auto taken = DeviceTurn::take(*slot.device);
    if (!taken)
      return fleet::TaskOutcome{fleet::OutcomeKind::requeue, {}, {}, taken.error().message};
    turn.emplace(std::move(*taken));
  }
  std::vector<measure::HealthSample> timing;
  if (!slot.probe)
    return run_evaluation(slot, task, timing);
  slot.probe->before();
  fleet::TaskOutcome outcome = run_evaluation(slot, task, timing);
  measure::HealthEvidence evidence = slot.probe->after();
  evidence.samples.insert(evidence.samples.end(), timing.begin(), timing.end());
  std::stable_sort(evidence.samples.begin(), evidence.samples.end(),
                   [](const measure::HealthSample& a, const measure::HealthSample& b) {
                     return a.moment < b.moment;
                   });
  return judged(slot, std::move(outcome), evidence);
}

fleet::TaskOutcome FleetHost::run_evaluation(Slot& slot, const fleet::LeasedTask& task,
                                             std::vector<measure::HealthSample>& timing) {
  auto problem = m_suite.find(task.request.problem);
  if (!problem)
    return failed(problem.error().message);
  try {
    auto evaluation =
        slot.evaluator->evaluate(task.request.source, **problem, task.request.options);
    if (!evaluation)
      return failed(evaluation.error().message);
    timing = timing_samples(evaluation->clocks);
    fleet::TaskOutcome outcome;
    outcome.result = exec::to_json(*evaluation, **problem);
    if (!evaluation->gpu_ran)
      outcome.needs_gpu = evaluation->needs_gpu;
    return outcome;
  } catch (const std::exception& error) {
    return failed(std::string("internal error: ") + error.what());
  }
}

// A result or failure stands only on a healthy GPU; otherwise the task goes back to the queue
// with the reason (a failure on a broken GPU is the GPU's, not the kernel's).
fleet::TaskOutcome FleetHost::judged(Slot& slot, fleet::TaskOutcome outcome,
                                     const measure::HealthEvidence& evidence) {
  const measure::HealthVerdict verdict = measure::judge_health(evidence);
  slot.worker->set_health(measure::health_text(verdict, evidence.unavailable));
  if (verdict.state == measure::HealthState::healthy)
    return outcome;
  const std::string reason = measure::health_text(verdict, {});
  if (verdict.state == measure::HealthState::broken) {
    slot.worker->drain(reason);
    if (!m_restart_requested.exchange(true)) {
      log(fmt::format("{} {}: this host restarts (a broken CUDA context cannot be repaired "
                      "inside the process)",
                      slot.info.id, reason));
      if (m_options.restart)
        m_options.restart(slot.info.id + " " + reason);
    }
  }
  return fleet::TaskOutcome{fleet::OutcomeKind::requeue, {}, {}, reason};
}

} // namespace ptxbench::service
