// The counting seam: the executed-instruction counts of one call, as metric → value per
// profiled range (one range per kernel launch). Which metrics a counter configures comes from
// the per-architecture table (sass/counters.hpp), chosen by the device's compute capability,
// so a counter on a B200 measures the TCGEN05 metrics without any other code; nothing here
// names a family. The one implementation is InstructionCounter (the CUPTI range profiler).
#pragma once

#include "measure/timing.hpp"
#include "util/error.hpp"
#include "util/phases.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ptxbench::measure {

struct MetricValue {
  std::string name;
  double value = 0.0;
};

// Who replays the call for the passes a configuration needs. Persisted: explicit values.
//   kernel  CUPTI replays every kernel of one call, saving and restoring device memory
//   user    the caller's call runs once per pass (before_pass resets its outputs); one
//           range set per pass, as ncu's application replay re-runs the whole program
enum class CounterReplay : std::uint8_t { kernel = 1, user = 2 };

constexpr std::string_view to_string(CounterReplay replay) {
  return replay == CounterReplay::kernel ? "kernel" : "user";
}

// The counts of one call: every metric summed over every kernel the call launched, and per
// range (in `kernels` order) each metric's value in `metrics` order, so the evaluator can credit
// the candidate's own kernels only. A value the passes could not complete is NaN (user replay:
// a repeat of the call launched other kernels).
struct InstructionCounts {
  std::string arch;                 // the counter table's architecture ("sm_90a"); "" for none
  std::vector<MetricValue> metrics; // every accepted metric, summed over ranges
  std::vector<std::string> kernels; // the profiled ranges' names (one per kernel launch)
  std::vector<std::vector<double>> range_values;
  std::size_t passes = 0; // hardware passes the configuration needs
  double pass_ms = 0.0;   // wall time of the whole profiling pass
  int call_status = 0;    // what the call returned, else the first CUDA error
  std::size_t calls = 0;  // how often the call ran (user replay: once per pass)
  CounterReplay replay = CounterReplay::kernel; // the replay that produced the counts
  std::vector<util::Phase> steps; // where pass_ms went: enable, set_config, passes, …

  // The total of `metric`; nullopt when it was not measured.
  std::optional<double> total(std::string_view metric) const;
};

class Counter {
public:
  virtual ~Counter() = default;
  // `before_pass` runs before every run of the call, outside the profiled range.
  virtual util::Expected<InstructionCounts>
  count(const CallFn& call, cudaStream_t stream,
        const std::function<void(cudaStream_t)>& before_pass) = 0;
  virtual const std::string& arch() const = 0;
  virtual const std::vector<std::string>& metrics() const = 0;
  // Metrics of the table the chip did not accept.
  virtual const std::vector<std::string>& rejected_metrics() const = 0;
};

} // namespace ptxbench::measure
