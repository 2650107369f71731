// Dynamic target-instruction counts of one call, in-process, through the CUPTI range profiler
// (hardware counters; DESIGN.md §4 "Target-instruction verification", dynamic part).
#pragma once

#include "measure/counter.hpp"

#include <memory>

namespace ptxbench::measure {

// Whether create() asks the context which counters are free (needs a context) or builds the
// configuration from the chip alone (host only; a counter held elsewhere fails at count()).
enum class CounterAvailability : std::uint8_t { query = 1, assume = 2 };

struct CounterOptions {
  std::vector<std::string> metrics; // empty: the device's row of sass::kArchCounters
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
class InstructionCounter final : public Counter {
public:
  // `unsupported` without a device or profiling permission, or, when no metrics are given,
  // on a GPU whose compute capability has no counter table. Metrics the chip rejects are
  // dropped and listed by rejected_metrics(); an error only if none is accepted.
  static util::Expected<InstructionCounter> create(int device,
                                                   std::vector<std::string> metrics = {});
  static util::Expected<InstructionCounter> create_with(int device, CounterOptions options);
  util::Expected<InstructionCounts> count(const CallFn& call, cudaStream_t stream);
  // `before_pass` runs before every run of the call, outside the profiled range (user replay
  // runs the call once per pass; kernel replay once).
  util::Expected<InstructionCounts>
  count(const CallFn& call, cudaStream_t stream,
        const std::function<void(cudaStream_t)>& before_pass) override;

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
  const std::string& arch() const override; // "" when the metrics were given
  const std::vector<std::string>& metrics() const override;
  const std::vector<std::string>& rejected_metrics() const override;
  std::size_t passes() const;
  CounterReplay replay() const;
  // Wall time of create(): profiler initialisation, counter availability, configuration.
  const std::vector<util::Phase>& setup_steps() const;

  InstructionCounter(InstructionCounter&&) noexcept;
  InstructionCounter& operator=(InstructionCounter&&) noexcept;
  ~InstructionCounter() override;

  struct Impl;

private:
  explicit InstructionCounter(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> m_impl;
};

} // namespace ptxbench::measure
