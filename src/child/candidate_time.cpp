// The timing and counting requests of the candidate child. Timing is one measure::run_trial
// in the requested mode (batched, falling back to strict when the batch cannot be attributed;
// or strict): before every call (warm-up and timed alike) the next input set in rotation is
// chosen and its outputs are reset to the NaN sentinel, outside the call's window; the L2 is
// flushed by run_trial. The reply names the set of the last timed call so the supervisor can
// check that output again, lists the kernels of every timed call (grouped) for the checks
// between calls and on foreign kernels, and says which mode timed the trial. Counting resets
// the outputs before every run of the call (user replay runs it once per hardware pass) and
// reports each profiled range's kernel and values, so only the candidate's own are credited.
#include "child/candidate.hpp"
#include "cuda/check.hpp"
#include "protocol/call_status.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <thread>

namespace ptxbench::child {
namespace {

std::vector<protocol::KernelSet> group(const std::vector<std::vector<std::string>>& calls) {
  std::vector<protocol::KernelSet> sets;
  for (const auto& kernels : calls) {
    auto same = std::find_if(sets.begin(), sets.end(), [&](const protocol::KernelSet& set) {
      return set.kernels == kernels;
    });
    if (same == sets.end())
      sets.push_back({kernels, 1});
    else
      ++same->calls;
  }
  return sets;
}

// Fault injection for the calibration cap's GPU test (docs/evaluation.md "The calibration's
// cap"): PTXBENCH_TEST_CALIBRATION_DELAY_MS delays every calibration reply once a candidate is
// loaded, as code that rewrote the child's memory could. It can only make calibrations slower,
// which the supervisor's cap bounds.
int calibration_delay_ms() {
  static const int delay = [] {
    const char* text = std::getenv("PTXBENCH_TEST_CALIBRATION_DELAY_MS");
    if (text == nullptr)
      return 0;
    char* end = nullptr;
    const long value = std::strtol(text, &end, 10);
    return end != text && value > 0 ? static_cast<int>(std::min(value, 60'000L)) : 0;
  }();
  return delay;
}

} // namespace

protocol::Reply CandidateServer::time(const protocol::Request& request) {
  auto timer = measure::cupti_call_timer();
  if (!timer)
    return protocol::Reply::failure(protocol::ChildError::timer, timer.error().message);
  if (!m_flusher) {
    int device = 0;
    cudaGetDevice(&device);
    auto flusher = measure::L2Flusher::create(device);
    if (!flusher)
      return protocol::Reply::failure(protocol::ChildError::timer, flusher.error().message);
    m_flusher = std::make_unique<measure::L2Flusher>(std::move(*flusher));
  }
  if (!m_stream)
    if (protocol::Reply reply = create_stream(); !reply.ok)
      return reply;
  int current = 0;
  const int sets = static_cast<int>(m_sets.size());
  // Before the load (calibrations only) there are no sets to reset.
  auto before_each = [&](int call_index) {
    if (sets == 0)
      return;
    current = (request.first_call + call_index) % sets;
    reset_outputs(current, m_stream.get());
  };
  // A calibration request times the harness's own one-block kernel the same way.
  auto call = [&](cudaStream_t stream) {
    return request.calibrate ? measure::launch_warmup_kernel(stream) : invoke(current, stream);
  };
  auto trial = measure::run_trial(**timer, *m_flusher, call, before_each, m_stream.get(),
                                  {request.warmup, request.iterations, request.mode});
  if (const cudaError_t sync = cudaDeviceSynchronize(); sync != cudaSuccess) {
    protocol::Reply reply =
        protocol::Reply::failure(protocol::ChildError::cuda, "CUDA error during timing");
    reply.cuda_error = protocol::call_status_text(sync);
    return reply;
  }
  if (!trial)
    return protocol::Reply::failure(protocol::ChildError::timer, trial.error().message);
  if (trial->call_status != 0) {
    protocol::Reply reply =
        protocol::Reply::failure(protocol::ChildError::invoke, "a timed call reported an error");
    reply.invoke_status = trial->call_status;
    reply.cuda_error = protocol::call_status_text(trial->call_status);
    return reply;
  }
  protocol::Reply reply;
  reply.latencies_ms = trial->latencies_ms;
  reply.event_ms = trial->event_ms;
  reply.late_work = trial->late_work;
  reply.last_set = current;
  reply.kernels = kernels_seen(trial->last_call_activities);
  reply.kernel_sets = group(trial->call_kernels);
  reply.mode = trial->mode;
  reply.strict_reason = trial->strict_reason;
  if (request.calibrate && m_invoke != nullptr && calibration_delay_ms() > 0)
    std::this_thread::sleep_for(std::chrono::milliseconds(calibration_delay_ms()));
  return reply;
}

protocol::Reply CandidateServer::count(int set) {
  if (!m_counter) {
    protocol::Reply reply;
    reply.counts = protocol::Counts::unavailable(m_counter_error.empty() ? "no range profiler"
                                                                         : m_counter_error);
    return reply;
  }
  auto reset = [&](cudaStream_t stream) { reset_outputs(set, stream); };
  auto call = [&](cudaStream_t stream) { return invoke(set, stream); };
  const bool prepared = m_counter->session_open();
  auto counts = m_counter->count(call, m_stream.get(), reset);
  // No session stays open once counted: timing never runs beside one.
  if (prepared) {
    const util::Phase closed = m_counter->close_session();
    if (counts)
      counts->steps.push_back(closed);
  }
  protocol::Reply reply = after_call(counts ? counts->call_status : 0);
  if (!reply.ok)
    return reply;
  if (!counts) {
    reply.counts = protocol::Counts::unavailable(counts.error().message);
    return reply;
  }
  reply.counts = protocol::counts_of(*counts, m_counter->chip(), m_counter->rejected_metrics(),
                                     prepared ? "opened at prepare" : "opened by this count");
  return reply;
}

} // namespace ptxbench::child
