#include "exec/gpu_evaluation.hpp"

#include "exec/cuda_check.hpp"
#include "measure/nvml_monitor.hpp"
#include "trace/json_io.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <numeric>

namespace ptxbench::exec::detail {
namespace {

using Status = trace::EvaluationStatus;

double mean(const std::vector<double>& values) {
  if (values.empty()) return 0.0;
  return std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
}

double median(std::vector<double> values) {
  if (values.empty()) return 0.0;
  std::sort(values.begin(), values.end());
  const std::size_t mid = values.size() / 2;
  return values.size() % 2 ? values[mid] : (values[mid - 1] + values[mid]) / 2.0;
}

std::filesystem::path fresh_log_path() {
  static std::atomic<int> counter{0};
  return std::filesystem::temp_directory_path() /
         fmt::format("ptxbench-candidate-{}-{}.log", ::getpid(), counter++);
}

trace::Json snapshot_json(const std::optional<measure::GpuMonitor>& monitor) {
  if (!monitor) return "unavailable";
  auto snap = monitor->snapshot();
  if (!snap) return snap.error().message;
  return {{"sm_clock_mhz", snap->sm_clock_mhz},
          {"memory_clock_mhz", snap->memory_clock_mhz},
          {"max_sm_clock_mhz", snap->max_sm_clock_mhz},
          {"power_w", snap->power_w},
          {"temperature_c", snap->temperature_c},
          {"clock_event_reasons", snap->clock_event_reasons},
          {"clock_event_names", snap->clock_event_names}};
}

// A tool pass that did not run, and why.
template <typename Pass> Pass not_run(std::string reason) {
  Pass pass;
  pass.reason = std::move(reason);
  return pass;
}

} // namespace

util::Status GpuEvaluation::run(const std::filesystem::path& candidate_binary,
                                const std::filesystem::path& library) {
  if (auto status = m_phases.time("inputs", [&] { return prepare(); }); !status) return status;
  const bool ok = m_phases.time("child", [&] { return start_child(candidate_binary, library); }) &&
                  m_phases.time("correctness", [&] { return correctness(); }) &&
                  m_phases.time("timing", [&] { return timing(); }) &&
                  m_phases.time("recheck", [&] { return recheck(); });
  if (ok && m_options.dynamic_counts) m_phases.time("counts", [&] { counts(); });
  finish_child();
  tool_passes(candidate_binary, library);
  return util::Ok{};
}

void GpuEvaluation::tool_passes(const std::filesystem::path& binary,
                                const std::filesystem::path& library) {
  const bool sanitize_wanted = m_options.sanitize == Sanitize::memcheck;
  const bool audit_wanted = m_options.audit == Audit::ncu;
  if (!sanitize_wanted && !audit_wanted) return;
  auto files = SingleCallFiles::write(*m_buffers, library, m_result.check.signature);
  if (!files) {
    if (sanitize_wanted) m_result.sanitizer = not_run<SanitizerPass>(files.error().message);
    if (audit_wanted) m_result.ncu_audit = not_run<NcuAuditPass>(files.error().message);
    return;
  }
  if (sanitize_wanted) m_phases.time("sanitizer", [&] { sanitize(binary, *files); });
  if (audit_wanted) m_phases.time("ncu_audit", [&] { audit(binary, *files); });
}

void GpuEvaluation::sanitize(const std::filesystem::path& binary, const SingleCallFiles& files) {
  // A candidate that hangs or does not load would do the same under the sanitizer.
  if (m_result.status == Status::timeout || m_result.status == Status::compile_error) {
    m_result.sanitizer = not_run<SanitizerPass>(
        fmt::format("the main pass ended in {}", trace::to_string(m_result.status)));
    return;
  }
  m_result.sanitizer = run_sanitizer_pass(m_tool_runner, binary, files, m_options.tool_timeout);
  const SanitizerPass& pass = *m_result.sanitizer;
  if (!pass.ran || pass.finding.empty()) return;
  std::string message = pass.finding;
  if (m_result.status != Status::passed && !m_result.message.empty())
    message += " — without the sanitizer: " + m_result.message;
  fail(Status::runtime_error, std::move(message));
}

void GpuEvaluation::audit(const std::filesystem::path& binary, const SingleCallFiles& files) {
  // The audit reproduces the counts of a call that ran to the end; others have none to compare.
  if (m_result.status != Status::passed && m_result.status != Status::incorrect_numerical) {
    m_result.ncu_audit = not_run<NcuAuditPass>(
        fmt::format("the candidate ended in {}", trace::to_string(m_result.status)));
    return;
  }
  m_result.ncu_audit = run_ncu_audit_pass(m_tool_runner, binary, files, m_options.tool_timeout);
  const std::optional<trace::Json> in_process =
      m_result.dynamic ? m_result.dynamic->raw : std::optional<trace::Json>{};
  compare_counts(*m_result.ncu_audit, in_process);
}

util::Status GpuEvaluation::prepare() {
  auto stream = Stream::create();
  if (!stream) return stream.take_error();
  m_stream = std::move(*stream);
  auto reference = reference::make_library_reference(m_problem);
  std::string fallback;
  if (!reference) {
    fallback = reference.error().message;
    reference = reference::make_naive_reference(m_problem);
  }
  if (!reference) return reference.take_error();
  m_reference = std::move(*reference);
  m_result.library = m_reference->library();
  if (!fallback.empty()) m_result.violations.push_back("library baseline unavailable: " + fallback);
  auto buffers = EvalBuffers::create(m_suite, m_problem, *m_reference, m_result.sets,
                                     m_result.seed, m_stream->get());
  if (!buffers) return buffers.take_error();
  m_buffers = std::move(*buffers);
  m_input_digest = m_buffers->input_checksum(m_stream->get());
  return util::Ok{};
}

void GpuEvaluation::fail(Status status, std::string message) {
  m_result.status = status;
  m_result.message = std::move(message);
}

std::optional<Reply> GpuEvaluation::ask(const Request& request) {
  auto reply = m_child->request(request, m_options.timeout);
  if (!reply) {
    const bool timeout = reply.error().kind == util::ErrorKind::timeout;
    fail(timeout ? Status::timeout : Status::runtime_error, reply.error().message);
    return std::nullopt;
  }
  if (!reply->ok) {
    const bool abi = reply->error == ChildError::signature_mismatch;
    std::string message = reply->message;
    if (!reply->cuda_error.empty()) message += ": " + reply->cuda_error;
    fail(abi ? Status::compile_error : Status::runtime_error, std::move(message));
    return std::nullopt;
  }
  return std::move(*reply);
}

bool GpuEvaluation::start_child(const std::filesystem::path& binary,
                                const std::filesystem::path& library) {
  m_log_path = fresh_log_path();
  auto child = CandidateProcess::start(binary, m_log_path);
  if (!child) {
    fail(Status::runtime_error, child.error().message);
    return false;
  }
  m_child = std::move(*child);
  Request load;
  load.op = RequestOp::load;
  load.library = library.string();
  load.signature = m_result.check.signature;
  load.sets = m_buffers->handles();
  load.scalars = m_buffers->scalar_bits();
  load.var_axes = m_buffers->var_axes();
  return ask(load).has_value();
}

bool GpuEvaluation::inputs_unchanged(std::string_view when) {
  if (m_buffers->input_checksum(m_stream->get()) == m_input_digest) return true;
  fail(Status::incorrect_numerical,
       fmt::format("the candidate modified its inputs ({}); inputs are read-only", when));
  m_result.violations.push_back("inputs modified");
  return false;
}

bool GpuEvaluation::outputs_match(int set, std::string_view when) {
  CompareStats stats;
  for (const CompareStats& output : m_buffers->compare(set, m_stream->get())) stats.merge(output);
  if (!m_result.correctness) m_result.correctness = CompareStats{};
  m_result.correctness->merge(stats);
  if (stats.failed == 0) return true;
  std::string detail = fmt::format("{} of {} elements wrong", stats.failed, stats.elements);
  if (stats.candidate_nan > 0)
    detail += fmt::format(" ({} NaN: never written, or computed NaN)", stats.candidate_nan);
  fail(Status::incorrect_numerical, fmt::format("{} on input set {}: {}", when, set, detail));
  return false;
}

bool GpuEvaluation::correctness() {
  for (int set = 0; set < m_buffers->set_count(); ++set) {
    m_buffers->fill_outputs_sentinel(set, m_stream->get());
    PTXBENCH_EXEC_CUDA_CHECK(cudaStreamSynchronize(m_stream->get()));
    Request call;
    call.op = RequestOp::call;
    call.set = set;
    if (!ask(call)) return false;
    if (!inputs_unchanged(fmt::format("call on input set {}", set))) return false;
    if (!outputs_match(set, "correctness call")) return false;
  }
  return true;
}

bool GpuEvaluation::reference_trial(std::vector<double>& medians) {
  auto timer = measure::cupti_call_timer();
  if (!timer) throw util::Fatal("reference timing: " + timer.error().message);
  int device = 0;
  PTXBENCH_EXEC_CUDA_CHECK(cudaGetDevice(&device));
  auto flusher = measure::L2Flusher::create(device);
  if (!flusher) throw util::Fatal("reference timing: " + flusher.error().message);
  int current = 0;
  const int sets = m_buffers->set_count();
  auto before_each = [&](int index) { current = index % sets; };
  auto call = [&](cudaStream_t stream) {
    auto status = m_reference->run(m_buffers->call(current, stream));
    return status ? 0 : -1;
  };
  auto trial = measure::run_trial(**timer, *flusher, call, before_each, m_stream->get(),
                                  {m_options.warmup, m_options.iterations});
  if (!trial || trial->call_status != 0)
    throw util::Fatal("the reference failed while timing: " +
                      (trial ? cuda_error_text(trial->call_status) : trial.error().message));
  medians.push_back(trial->median_ms);
  return true;
}

bool GpuEvaluation::candidate_trial(int trial) {
  Request time;
  time.op = RequestOp::time;
  time.warmup = m_options.warmup;
  time.iterations = m_options.iterations;
  const auto start = std::chrono::steady_clock::now();
  auto reply = ask(time);
  if (!reply) return false;
  const double wall_ms = std::chrono::duration<double, std::milli>(
                             std::chrono::steady_clock::now() - start).count();
  TimingReport& timing = *m_result.timing;
  if (reply->late_work) {
    m_result.violations.push_back("late work");
    fail(Status::runtime_error,
         fmt::format("trial {}: GPU work was still running after a timed call returned and its "
                     "stream was synchronised; all work must finish inside the call", trial));
    return false;
  }
  const double reported = std::accumulate(reply->latencies_ms.begin(), reply->latencies_ms.end(), 0.0);
  if (reported > wall_ms)
    m_result.violations.push_back(fmt::format(
        "trial {}: reported GPU time {:.3f} ms exceeds the request's wall time {:.3f} ms", trial,
        reported, wall_ms));
  timing.candidate_trial_ms.push_back(reply->median_ms);
  timing.candidate_event_ms.push_back(median(reply->event_ms));
  timing.kernels.clear();
  for (const KernelSeen& k : reply->kernels) timing.kernels.push_back(k.name);
  m_last_set = reply->last_set;
  return true;
}

bool GpuEvaluation::timing() {
  m_result.timing = TimingReport{};
  TimingReport& timing = *m_result.timing;
  auto cached = m_cache.get(m_problem.name(), m_result.gpu, m_result.library);
  const bool measure_reference =
      m_options.reference_timing == ReferenceTiming::interleave || !cached;
  std::optional<measure::GpuMonitor> monitor;
  if (auto created = measure::GpuMonitor::create(0)) monitor = std::move(*created);
  m_result.clocks["before"] = snapshot_json(monitor);
  for (int trial = 0; trial < m_options.trials; ++trial) {
    if (measure_reference) reference_trial(timing.reference_trial_ms);
    if (!candidate_trial(trial)) return false;
  }
  m_result.clocks["after"] = snapshot_json(monitor);
  timing.candidate_ms = mean(timing.candidate_trial_ms);
  timing.reference_cached = !measure_reference;
  timing.reference_ms = measure_reference ? mean(timing.reference_trial_ms) : *cached;
  if (measure_reference)
    m_cache.put(m_problem.name(), m_result.gpu, m_result.library, timing.reference_ms);
  return true;
}

bool GpuEvaluation::recheck() {
  if (m_last_set < 0 || m_last_set >= m_buffers->set_count()) {
    fail(Status::runtime_error, "the candidate process named no valid last timed input set");
    return false;
  }
  return inputs_unchanged("timed calls") && outputs_match(m_last_set, "last timed call");
}

void GpuEvaluation::counts() {
  Request count;
  count.op = RequestOp::count;
  count.set = 0;
  m_result.dynamic = DynamicReport{};
  auto reply = ask(count);
  if (!reply) {
    // A count pass that breaks the candidate is a runtime error like any other call.
    m_result.dynamic->reason = "the counting pass failed";
    return;
  }
  m_result.dynamic->raw = reply->counts;
}

void GpuEvaluation::finish_child() {
  if (m_child) {
    if (m_child->alive()) m_child->stop();
    m_result.child_log = m_child->log_tail(64 * 1024);
    m_child.reset();
  }
  if (!m_log_path.empty()) std::filesystem::remove(m_log_path);
}

} // namespace ptxbench::exec::detail
