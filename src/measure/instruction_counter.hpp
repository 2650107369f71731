// Dynamic target-instruction counts of one call, in-process, through the CUPTI range profiler
// (hardware counters; DESIGN.md §4 "Target-instruction verification", dynamic part).
#pragma once

#include "measure/timing.hpp"
#include "util/error.hpp"
#include "util/phases.hpp"

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace ptxbench::measure {

inline constexpr const char* kMetricGmma = "smsp__sass_inst_executed_op_shared_gmma.sum";
inline constexpr const char* kMetricTmaLoad = "smsp__sass_inst_executed_op_tma_ld.sum";
inline constexpr const char* kMetricTmaStore = "smsp__sass_inst_executed_op_tma_st.sum";
inline constexpr const char* kMetricTmaReduce = "smsp__sass_inst_executed_op_tma_red.sum";
inline constexpr const char* kMetricHgmmaBf16Flops =
    "sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32.sum";

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

// Whether create() asks the context which counters are free (needs a context) or builds the
// configuration from the chip alone (host only; a counter held elsewhere fails at count()).
enum class CounterAvailability : std::uint8_t { query = 1, assume = 2 };

// Totals over every kernel the call launched (one auto range per launch). GMMA counts warp
// instructions (HGMMA/IGMMA/QGMMA/BGMMA); TMA counts are presence signals (op_tma_st counts one
// in four UTMASTG warp instructions on GH100, reference/measurement.md §4.3).
struct InstructionCounts {
  double gmma = 0.0;
  double tma_load = 0.0;
  double tma_store = 0.0;
  double tma_reduce = 0.0;
  double hgmma_bf16_flops = 0.0;    // tensor-core FLOPs through the bf16→fp32 HGMMA path
  std::vector<MetricValue> metrics; // every accepted metric, summed over ranges
  std::vector<std::string> kernels; // the profiled ranges' names (one per kernel launch)
  // Per range, the value of every metric (in `metrics` order): which kernel did what, so the
  // evaluator can credit the candidate's own kernels only. A value the passes could not
  // complete is NaN (user replay: a repeat of the call launched other kernels).
  std::vector<std::vector<double>> range_values;
  std::size_t passes = 0; // hardware passes the configuration needs
  double pass_ms = 0.0;   // wall time of the whole profiling pass
  int call_status = 0;    // what the call returned, else the first CUDA error
  std::size_t calls = 0;  // how often the call ran (user replay: once per pass)
  CounterReplay replay = CounterReplay::kernel; // the replay that produced the counts
  std::vector<util::Phase> steps; // where pass_ms went: enable, set_config, passes, …
};

struct CounterOptions {
  std::vector<std::string> metrics; // empty: default_metrics()
  CounterReplay replay = CounterReplay::kernel;
  CounterAvailability availability = CounterAvailability::query;
};

// Launches a one-block kernel that does nothing on `stream`: the call to warm a session with
// (InstructionCounter::open_session). Returns the launch's cudaError_t.
int launch_warmup_kernel(cudaStream_t stream);

// Owns a CUPTI profiler host configuration for one device. count() enables the range
// profiler on the context only for the duration of one call (auto range, kernel replay: CUPTI
// replays each kernel once per pass, saving and restoring device memory) and disables it
// again, with CUPTI activity tracing paused meanwhile: counters and timing never overlap.
class InstructionCounter {
public:
  static std::vector<std::string> default_metrics();
  // `unsupported` without a device or profiling permission. Metrics the chip rejects are
  // dropped and listed by rejected_metrics(); an error only if none is accepted.
  static util::Expected<InstructionCounter> create(int device,
                                                   std::vector<std::string> metrics = {});
  static util::Expected<InstructionCounter> create_with(int device, CounterOptions options);
  util::Expected<InstructionCounts> count(const CallFn& call, cudaStream_t stream);
  // `before_pass` runs before every run of the call, outside the profiled range (user replay
  // runs the call once per pass; kernel replay once).
  util::Expected<InstructionCounts> count(const CallFn& call, cudaStream_t stream,
                                          const std::function<void(cudaStream_t)>& before_pass);

  // Keeps a range-profiler session open on the current context from here until
  // close_session() or the counter's end, and runs `warm` once under it (CUPTI activity
  // tracing paused meanwhile). The first pass of a session pays the profiler's start-up
  // (bench/results/counter_session_h200.md); with a session open, count() pays only its
  // own passes. The steps of the warm-up are returned.
  util::Expected<std::vector<util::Phase>> open_session(const CallFn& warm, cudaStream_t stream);
  // Disables the open session (a no-op without one); its wall time as step "disable".
  util::Phase close_session();
  bool session_open() const;

  const std::string& chip() const;
  const std::vector<std::string>& metrics() const;
  const std::vector<std::string>& rejected_metrics() const;
  std::size_t passes() const;
  CounterReplay replay() const;
  // Wall time of create(): profiler initialisation, counter availability, configuration.
  const std::vector<util::Phase>& setup_steps() const;

  InstructionCounter(InstructionCounter&&) noexcept;
  InstructionCounter& operator=(InstructionCounter&&) noexcept;
  ~InstructionCounter();

  struct Impl;

private:
  explicit InstructionCounter(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> m_impl;
};

} // namespace ptxbench::measure
