// One trial: `warmup` untimed calls, then `iterations` timed calls, each preceded by the
// caller's `before_each` (input rotation, output reset) and an L2 flush, both outside the
// call window; the trial's latency is the median of the CUPTI latencies (robust to the odd
// interrupted sample; the mean over trials is the caller's). A failing call ends the trial
// with its status; late work in any timed call marks the trial.
//
// Batched mode enqueues all of it as one batch (CallTimer::time_batch); when the batch is
// unattributable the whole trial is run again in strict mode, which is the one that decides
// late work, and the reason is kept with the trial. A batch after which a persisting L2
// carve-out is set aside is timed strictly too: its lines would outlive the flush.
#include "measure/check.hpp"
#include "measure/timing.hpp"
#include "util/stats.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <optional>

namespace ptxbench::measure {
namespace {

// The batched trial; nullopt (with `reason`) when it must be timed strictly.
util::Expected<std::optional<Trial>> batched_trial(CallTimer& timer, L2Flusher& flusher,
                                                   const CallFn& call,
                                                   const std::function<void(int)>& before_each,
                                                   cudaStream_t stream, const TrialOptions& options,
                                                   std::string& reason) {
  Batch batch;
  batch.calls = options.warmup + options.iterations;
  batch.first_timed = options.warmup;
  batch.call = call;
  batch.boundary = [&](int index) {
    if (before_each)
      before_each(index);
    flusher.flush(stream);
  };
  PTXBENCH_TRY_ASSIGN(auto timed, timer.time_batch(batch, stream));
  Trial trial;
  trial.mode = TimingMode::batched;
  trial.call_status = timed.call_status;
  if (trial.call_status != 0)
    return std::optional<Trial>(std::move(trial));
  if (!timed.unattributable.empty()) {
    reason = std::move(timed.unattributable);
    return std::optional<Trial>();
  }
  if (const std::size_t carve_out = flusher.persisting_bytes(); carve_out != 0) {
    reason = fmt::format("the call set aside {} bytes of persisting L2, which survive the flush "
                         "between batched calls; strict windows release them before every call",
                         carve_out);
    return std::optional<Trial>();
  }
  trial.min_gap_ns = timed.min_gap_ns;
  for (CallTiming& timing : timed.timed) {
    trial.latencies_ms.push_back(timing.latency_ms);
    trial.event_ms.push_back(timing.event_ms);
    trial.call_kernels.push_back(kernel_names(timing.activities));
  }
  if (!timed.timed.empty())
    trial.last_call_activities = std::move(timed.timed.back().activities);
  trial.median_ms = util::median(trial.latencies_ms);
  return std::optional<Trial>(std::move(trial));
}

} // namespace

std::vector<std::string> kernel_names(const std::vector<GpuActivity>& activities) {
  std::vector<std::string> names;
  for (const GpuActivity& activity : activities)
    if (activity.kind == GpuActivity::Kind::kernel)
      names.push_back(activity.name);
  std::sort(names.begin(), names.end());
  return names;
}

util::Expected<Trial> run_trial(CallTimer& timer, L2Flusher& flusher, const CallFn& call,
                                const std::function<void(int call_index)>& before_each,
                                cudaStream_t stream, const TrialOptions& options) {
  std::string strict_reason;
  if (options.mode == TimingMode::batched && options.warmup + options.iterations > 0) {
    PTXBENCH_TRY_ASSIGN(auto batched, batched_trial(timer, flusher, call, before_each, stream,
                                                    options, strict_reason));
    if (batched)
      return std::move(*batched);
  }
  Trial trial;
  trial.strict_reason = std::move(strict_reason);
  const int total = options.warmup + options.iterations;
  for (int index = 0; index < total; ++index) {
    if (before_each)
      before_each(index);
    flusher.release_persisting(); // the device is idle: the previous call was synchronised
    flusher.flush(stream);
    if (index < options.warmup) {
      trial.call_status = call(stream);
      if (trial.call_status == 0)
        trial.call_status = cudaDeviceSynchronize();
      if (trial.call_status != 0)
        return trial;
      continue;
    }
    PTXBENCH_TRY_ASSIGN(auto timing, timer.time_call(call, stream));
    trial.call_status = timing.call_status;
    if (trial.call_status != 0)
      return trial;
    trial.latencies_ms.push_back(timing.latency_ms);
    trial.event_ms.push_back(timing.event_ms);
    trial.late_work = trial.late_work || timing.late_work;
    trial.call_kernels.push_back(kernel_names(timing.activities));
    trial.last_call_activities = std::move(timing.activities);
  }
  trial.median_ms = util::median(trial.latencies_ms);
  return trial;
}

} // namespace ptxbench::measure
