// One trial: `warmup` untimed calls, then `iterations` timed calls, each preceded by the
// caller's `before_each` (input rotation, output reset) and an L2 flush, both outside the
// call window; the trial's latency is the median of the CUPTI latencies (robust to the odd
// interrupted sample; the mean over trials is the caller's). A failing call ends the trial
// with its status; late work in any timed call marks the trial.
#include "measure/check.hpp"
#include "measure/timing.hpp"

#include <algorithm>

namespace ptxbench::measure {
namespace {

double median(std::vector<double> values) {
  if (values.empty()) return 0.0;
  const std::size_t middle = values.size() / 2;
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(middle),
                   values.end());
  const double upper = values[middle];
  if (values.size() % 2 == 1) return upper;
  return (*std::max_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(middle)) +
          upper) / 2.0;
}

} // namespace

util::Expected<Trial> run_trial(CallTimer& timer, L2Flusher& flusher, const CallFn& call,
                                const std::function<void(int call_index)>& before_each,
                                cudaStream_t stream, const TrialOptions& options) {
  Trial trial;
  const int total = options.warmup + options.iterations;
  for (int index = 0; index < total; ++index) {
    if (before_each) before_each(index);
    flusher.flush(stream);
    if (index < options.warmup) {
      trial.call_status = call(stream);
      if (trial.call_status == 0) trial.call_status = cudaDeviceSynchronize();
      if (trial.call_status != 0) return trial;
      continue;
    }
    auto timing = timer.time_call(call, stream);
    if (!timing) return timing.take_error();
    trial.call_status = timing->call_status;
    if (trial.call_status != 0) return trial;
    trial.latencies_ms.push_back(timing->latency_ms);
    trial.event_ms.push_back(timing->event_ms);
    trial.late_work = trial.late_work || timing->late_work;
    trial.last_call_activities = std::move(timing->activities);
  }
  trial.median_ms = median(trial.latencies_ms);
  return trial;
}

} // namespace ptxbench::measure
