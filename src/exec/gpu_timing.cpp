// The timing phase of one evaluation: reference trials in the supervisor and candidate trials
// in the child, interleaved in pairs whose order alternates (reference-candidate,
// candidate-reference, …) under the exclusive GPU lock, NVML clocks before and after.
//
// Pre-heat. Back to back (batched mode) a power-hungry kernel drives the GPU into its power
// cap within ~100 ms; a trial that starts on a GPU that was idle runs its first calls at
// full clocks. Measured on an H200 (A/A, cuBLASLt GEMM): the first trial of an evaluation read
// 0.75 ms, every later one 0.85 ms, so whichever side went first read faster (A/A 0.94-0.97).
// In batched mode, before the first trial the reference runs untimed for kPreheat (flush and
// call, as in a trial), so every trial starts at the clocks the GPU sustains under load. (It
// was not enough: a dip of 10-15 % still hit one trial ~0.9 s into the load; A/A 0.95-1.06.)
//
// Mode. EvalOptions::timing_mode, strict by default. In batched mode (measure/timing.hpp),
// when either side's batch cannot be attributed — a candidate that launches on another stream
// without waiting for the call stream, leaves work running, or launches from other threads —
// that trial was timed strictly and every later trial of the evaluation, on both sides, is
// timed strictly too; the other trial of the same pair, if already timed batched, is timed
// again strictly, so each pair compares like with like. The reason is recorded with the
// timing. Both sides reset their outputs to the sentinel before every call (the reference its
// scratch outputs), so both do the same work around each call.
//
// Outlier pairs. Under its power cap an H200 running a power-hungry kernel dips its clocks
// by 10-15 % for a few hundred milliseconds about a second into the load (measured, A/A of
// cuDNN attention: one trial of three read 2.68-2.85 ms against 2.48-2.55 ms for its
// neighbours, bench/results/aa_speedup_h200.md), and the trial that sits there reads slow.
// The pairs of one evaluation measure the same ratio, so a pair whose reference/candidate
// ratio strays more than kPairOutlier from the median of all pairs' ratios is timed again,
// in its own order, at most kMaxRetimedPairs times per evaluation; the new pair replaces it
// and the trace lists what was re-timed and why. The protocol is unchanged: every trial is
// still 10 + 50 calls, median per trial, mean over the trials kept.
#include "exec/gpu_evaluation.hpp"

#include "exec/cuda_check.hpp"
#include "exec/trial_pairs.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <mutex>
#include <numeric>

namespace ptxbench::exec::detail {
namespace {

using Status = trace::EvaluationStatus;

double mean(const std::vector<double>& values) {
  if (values.empty()) return 0.0;
  return std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
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

} // namespace

measure::L2Flusher& GpuEvaluation::flusher() {
  if (!m_warm.flusher) {
    int device = 0;
    PTXBENCH_EXEC_CUDA_CHECK(cudaGetDevice(&device));
    auto made = measure::L2Flusher::create(device);
    if (!made) throw util::Fatal("reference timing: " + made.error().message);
    m_warm.flusher = std::make_unique<measure::L2Flusher>(std::move(*made));
  }
  return *m_warm.flusher;
}

// Keeps the GPU busy with the reference (flush, call, …; nothing timed) for kPreheat, so that
// the first trial starts at the clocks the GPU sustains under load.
void GpuEvaluation::preheat() {
  const auto start = std::chrono::steady_clock::now();
  const cudaStream_t stream = m_stream->get();
  for (int call = 0; std::chrono::steady_clock::now() - start < kPreheat;) {
    for (int chunk = 0; chunk < 10; ++chunk, ++call) {
      flusher().flush(stream);
      const int set = call % m_buffers->set_count();
      auto status = m_reference->reference->run(m_buffers->timing_call(set, stream));
      if (!status)
        throw util::Fatal("the reference failed while pre-heating: " + status.error().message);
    }
    PTXBENCH_EXEC_CUDA_CHECK(cudaStreamSynchronize(stream));
  }
  m_result.timing->preheat_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

measure::Trial GpuEvaluation::reference_trial(measure::TimingMode mode) {
  auto timer = measure::cupti_call_timer();
  if (!timer) throw util::Fatal("reference timing: " + timer.error().message);
  int current = 0;
  const int sets = m_buffers->set_count();
  // As the child does before every candidate call: next set, outputs reset to the sentinel.
  auto before_each = [&](int index) {
    current = index % sets;
    m_buffers->fill_timing_outputs_sentinel(m_stream->get());
  };
  auto call = [&](cudaStream_t stream) {
    auto status = m_reference->reference->run(m_buffers->timing_call(current, stream));
    return status ? 0 : -1;
  };
  auto trial = measure::run_trial(**timer, flusher(), call, before_each, m_stream->get(),
                                  {m_options.warmup, m_options.iterations, mode});
  if (!trial || trial->call_status != 0)
    throw util::Fatal("the reference failed while timing: " +
                      (trial ? cuda_error_text(trial->call_status) : trial.error().message));
  return std::move(*trial);
}

void GpuEvaluation::switch_to_strict(std::string reason) {
  if (m_mode == measure::TimingMode::strict) return;
  m_mode = measure::TimingMode::strict;
  m_result.timing->mode = std::string(to_string(m_mode));
  m_result.timing->strict_reason = std::move(reason);
}

bool GpuEvaluation::candidate_trial(int trial, std::optional<std::size_t> slot) {
  Request time;
  time.op = RequestOp::time;
  time.warmup = m_options.warmup;
  time.iterations = m_options.iterations;
  time.mode = m_mode;
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
  if (reply->mode != time.mode)
    switch_to_strict(fmt::format("candidate trial {}: {}", trial, reply->strict_reason));
  const double reported = std::accumulate(reply->latencies_ms.begin(), reply->latencies_ms.end(), 0.0);
  if (reported > wall_ms)
    m_result.violations.push_back(fmt::format(
        "trial {}: reported GPU time {:.3f} ms exceeds the request's wall time {:.3f} ms", trial,
        reported, wall_ms));
  if (!slot) {
    slot = timing.candidate_trial_ms.size();
    timing.candidate_trial_ms.push_back(0.0);
    timing.candidate_event_ms.push_back(0.0);
  }
  timing.candidate_trial_ms.at(*slot) = reply->median_ms;
  timing.candidate_event_ms.at(*slot) = median(reply->event_ms);
  timing.kernels.clear();
  for (const KernelSeen& k : reply->kernels) timing.kernels.push_back(k.name);
  m_last_set = reply->last_set;
  return true;
}

void GpuEvaluation::reference_step(int trial, std::optional<std::size_t> slot) {
  TimingReport& timing = *m_result.timing;
  const measure::TimingMode requested = m_mode;
  const measure::Trial reference = reference_trial(requested);
  if (reference.mode != requested)
    switch_to_strict(fmt::format("reference trial {}: {}", trial, reference.strict_reason));
  if (!slot) {
    slot = timing.reference_trial_ms.size();
    timing.reference_trial_ms.push_back(0.0);
    timing.reference_event_ms.push_back(0.0);
  }
  timing.reference_trial_ms.at(*slot) = reference.median_ms;
  timing.reference_event_ms.at(*slot) = median(reference.event_ms);
}

// One pair of trials. Pairs alternate their order (R C, C R, R C, …): a
// drift of the GPU's clocks over the timing phase (the power cap engaging as it heats)
// favours the earlier trial of a pair, and alternating spreads that over both sides. When the
// pair's second trial fell back to strict mode, its first is timed again strictly. The
// reference writes scratch outputs (EvalBuffers::timing_call), never the candidate's.
bool GpuEvaluation::trial_pair(int trial, bool measure_reference,
                               std::optional<std::size_t> slot) {
  if (!measure_reference) return candidate_trial(trial, slot);
  const std::size_t index = slot.value_or(m_result.timing->candidate_trial_ms.size());
  const bool reference_first = trial % 2 == 0;
  const measure::TimingMode before = m_mode;
  if (reference_first) {
    reference_step(trial, slot);
    if (!candidate_trial(trial, slot)) return false;
    if (m_mode != before) reference_step(trial, index);
    return true;
  }
  if (!candidate_trial(trial, slot)) return false;
  const measure::TimingMode middle = m_mode;
  reference_step(trial, slot);
  return m_mode == middle || candidate_trial(trial, index);
}

// Times again, in its own order, the pair whose ratio strays most beyond kPairOutlier from the
// median ratio, until none does or kMaxRetimedPairs pairs were re-timed (see the top).
bool GpuEvaluation::retime_outlier_pairs() {
  TimingReport& timing = *m_result.timing;
  for (int retimed = 0; retimed < kMaxRetimedPairs; ++retimed) {
    const auto stray = stray_pair(timing.reference_trial_ms, timing.candidate_trial_ms, kPairOutlier);
    if (!stray) return true;
    timing.retimed_pairs.push_back(fmt::format(
        "pair {}: ratio {:.4f} strayed {:+.1f} % from the median {:.4f} (reference {:.4f} ms, "
        "candidate {:.4f} ms)", stray->index, stray->ratio, 100.0 * stray->stray, stray->median,
        timing.reference_trial_ms[stray->index], timing.candidate_trial_ms[stray->index]));
    if (!trial_pair(static_cast<int>(stray->index), true, stray->index)) return false;
  }
  return true;
}

bool GpuEvaluation::timing() {
  // No range-profiler session is open anywhere while trials run: our child's is closed (the
  // count closed it, or it is closed now), and the right to open one is held until the trials
  // end, waited for outside the GPU lock (spare_child.hpp "The counter session").
  if (!end_counter_session()) return false;
  const CounterSessionClaim no_session(m_warm.spares, m_options.tool_timeout);
  std::unique_lock gpu(m_warm.lock);
  m_result.timing = TimingReport{};
  TimingReport& timing = *m_result.timing;
  timing.inputs_warm = m_inputs_warm;
  m_mode = m_options.timing_mode;
  timing.mode = std::string(to_string(m_mode));
  // Cached latencies are per timing mode (strict entries keep the historical key).
  const std::string cache_library =
      m_result.library + (m_mode == measure::TimingMode::batched ? " | batched timing" : "");
  auto cached = m_cache.get(m_problem.name(), m_result.gpu, cache_library);
  const bool measure_reference =
      m_options.reference_timing == ReferenceTiming::interleave || !cached;
  if (!m_warm.monitor_tried) {
    m_warm.monitor_tried = true;
    if (auto created = measure::GpuMonitor::create(0)) m_warm.monitor = std::move(*created);
  }
  m_result.clocks["before"] = snapshot_json(m_warm.monitor);
  if (m_mode == measure::TimingMode::batched) preheat();
  for (int trial = 0; trial < m_options.trials; ++trial)
    if (!trial_pair(trial, measure_reference)) return false;
  if (measure_reference && !retime_outlier_pairs()) return false;
  // A cached latency is of the mode the evaluation started in; one that fell back to strict
  // times its own reference.
  const bool fell_back = m_mode != m_options.timing_mode;
  const bool time_reference_now = !measure_reference && fell_back;
  for (int trial = 0; time_reference_now && trial < m_options.trials; ++trial)
    reference_step(trial, std::nullopt);
  m_result.clocks["after"] = snapshot_json(m_warm.monitor);
  timing.candidate_ms = mean(timing.candidate_trial_ms);
  timing.reference_cached = !measure_reference && !time_reference_now;
  timing.reference_ms = timing.reference_cached ? *cached : mean(timing.reference_trial_ms);
  if (measure_reference && !fell_back)
    m_cache.put(m_problem.name(), m_result.gpu, cache_library, timing.reference_ms);
  return true;
}

} // namespace ptxbench::exec::detail
