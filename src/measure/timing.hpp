// Timing calls of GPU work (docs/evaluation.md "Timing").
//
// The authoritative latency of a call comes from CUPTI activity records (kernels, memcpy,
// memset, on every stream and from every thread of the process), and is last end − first
// start of the activities charged to the call. Two modes decide which activities those are:
//   strict   one call per window [host timestamp before the call, host timestamp after the
//            stream has synchronised], the device synchronised around it; every activity that
//            starts inside the window is charged, work still running after it is late work
//            (a violation). Two host round trips and a CUPTI flush per call.
//   batched  a trial's calls enqueued back to back, each behind its boundary (the caller's
//            output reset and the L2 flush, memsets on the call stream), one synchronise and
//            one CUPTI flush per trial; activities are attributed to calls by correlation id
//            and checked against the windows the boundaries cut (batch_attribution.hpp). A
//            batch that cannot be attributed exactly is timed again in strict mode.
// CUDA events recorded on the call stream around each call give a cross-check.
#pragma once

#include "cuda/owned.hpp"
#include "util/error.hpp"

#include <cstdint>
#include <cuda_runtime.h>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ptxbench::measure {

// How a trial's calls are windowed (see above). Persisted in evaluation JSON: explicit values.
enum class TimingMode : std::uint8_t { batched = 1, strict = 2 };

constexpr std::string_view to_string(TimingMode mode) {
  return mode == TimingMode::batched ? "batched" : "strict";
}

struct GpuActivity {
  enum class Kind : std::uint8_t { kernel = 1, memcpy = 2, memset = 3 };
  Kind kind = Kind::kernel;
  std::string name; // kernel name (mangled) or "memcpy HtoD" etc.
  std::uint32_t stream_id = 0;
  std::uint64_t start_ns = 0;
  std::uint64_t end_ns = 0;
  std::string module; // kernels: identity of the module (cubin) that holds the function
  std::uint32_t device_id = 0;
  std::uint32_t context_id = 0;
  std::uint32_t correlation_id = 0; // links the record to the API call that enqueued it
  // Kernels: the launch as CUPTI recorded it ("grid 132x1x1 block 384x1x1 cluster 1x1x1 smem
  // 0+229376 B (executed 233472 B) regs 168"); the same name can run another configuration.
  std::string launch;
};

// A module (cubin) loaded in this process, as CUPTI's module-load callback saw it: the identity
// a kernel's name cannot give (exec/launch_rules.hpp, foreign_kernel).
struct LoadedModule {
  std::string sha256;                 // of the cubin image the driver loaded
  std::vector<std::string> functions; // its function symbols (mangled)
};

struct CallTiming {
  double latency_ms = 0.0; // CUPTI: last end − first start of the call's activities
  double event_ms = 0.0;   // CUDA events on the call stream
  std::vector<GpuActivity> activities;
  bool late_work = false;          // activity still running after the window closed
  int call_status = 0;             // what `call` returned, else the first CUDA error seen
  std::size_t late_activities = 0; // activities started in the window that ended after it,
                                   // or started after it before the device synchronise
};

// Enqueues one call on `stream` and returns its status (0 = success, else a cudaError or a
// PTXBENCH_INVOKE_* code).
using CallFn = std::function<int(cudaStream_t stream)>;

// A batch of back-to-back calls: before call i, `boundary(i)` enqueues the work that must
// precede it on the call stream (output reset, L2 flush) as memsets only; calls before
// `first_timed` are warm-ups (attributed and checked like the others, not reported).
struct Batch {
  int calls = 0;
  int first_timed = 0;
  std::function<void(int call_index)> boundary;
  CallFn call;
};

struct BatchTiming {
  std::vector<CallTiming> timed; // one per timed call: latency, event_ms, activities
  int call_status = 0;           // the first failing call's status; enqueueing stops there
  std::string unattributable;    // non-empty: the batch cannot be timed; why
  std::uint64_t min_gap_ns = 0;  // closest approach of a call's activity to a boundary
};

class CallTimer {
public:
  virtual ~CallTimer() = default;
  // Runs `call` once inside a window and reports what ran in it. The caller has synchronised
  // the device before; L2 flushing is the caller's (L2Flusher), outside the window.
  virtual util::Expected<CallTiming> time_call(const CallFn& call, cudaStream_t stream) = 0;
  // Enqueues the batch's calls back to back on `stream`, synchronises once, and attributes
  // what ran to the calls (batch_attribution.hpp). Never reports late work: a batch whose
  // work escapes its windows comes back unattributable.
  virtual util::Expected<BatchTiming> time_batch(const Batch& batch, cudaStream_t stream) = 0;
};

// The CUPTI implementation; one per process (CUPTI activity tracing is process-wide).
// Create it before the candidate's module is loaded: kernel module identities come from
// CUPTI's module-load callback and are unknown (empty) for modules loaded earlier.
util::Expected<CallTimer*> cupti_call_timer();

// Every module loaded since the CUPTI timer was made, in load order; empty when there is no
// timer (it never makes one: a spare child touches no driver before `prepare`).
std::vector<LoadedModule> cupti_loaded_modules();

// How many stream-ordered frees (cuMemFreeAsync, which cudaFreeAsync calls) the process has
// made since the CUPTI timer was made; 0 without a timer.
std::uint64_t cupti_stream_ordered_frees();

// Suspends CUPTI activity collection for its lifetime (no-op when no CUPTI timer exists).
// The range profiler (InstructionCounter) runs under one, so counters never overlap tracing.
class ActivityTracingPause {
public:
  ActivityTracingPause();
  ~ActivityTracingPause();
  ActivityTracingPause(const ActivityTracingPause&) = delete;
  ActivityTracingPause& operator=(const ActivityTracingPause&) = delete;

private:
  bool m_paused = false;
};

// Fills an L2-sized scratch buffer (cudaMemsetAsync) so the next call starts with a cold L2.
// A memset does not evict persisting lines (a carve-out set with cudaLimitPersistingL2CacheSize
// and filled through an access-policy window), so a call could keep its inputs in L2 across
// the flush: `release_persisting` turns every persisting line back to normal and returns the
// carve-out to 0 (as `create` does: a context starts with a carve-out). It takes effect when
// it returns, so it protects the next call only when the device is idle (strict windows); a
// batch is checked with `persisting_bytes` instead.
class L2Flusher {
public:
  static util::Expected<L2Flusher> create(int device);
  void flush(cudaStream_t stream);
  void release_persisting();
  // The persisting carve-out in bytes now (0 unless a call set one aside).
  std::size_t persisting_bytes() const;
  std::size_t bytes() const { return m_bytes; }

private:
  L2Flusher(cuda::DeviceMemory buffer, std::size_t bytes)
      : m_buffer(std::move(buffer)), m_bytes(bytes) {}
  cuda::DeviceMemory m_buffer; // the scratch; the flusher is move-only through it
  std::size_t m_bytes = 0;
};

struct TrialOptions {
  int warmup = 10;
  int iterations = 50;
  TimingMode mode = TimingMode::batched;
};

struct Trial {
  std::vector<double> latencies_ms; // CUPTI, one per timed call
  std::vector<double> event_ms;     // cross-check, one per timed call
  double median_ms = 0.0;
  bool late_work = false;
  int call_status = 0; // first failing call's status; the trial stops there
  std::vector<GpuActivity> last_call_activities;
  // Per timed call, the names of the kernels it launched, sorted: what the evaluator compares
  // between calls (the same call on other inputs must launch the same kernels).
  std::vector<std::vector<std::string>> call_kernels;
  TimingMode mode = TimingMode::strict; // the mode the latencies come from
  std::string strict_reason;            // why a batched trial was timed strictly instead
  std::uint64_t min_gap_ns = 0;         // batched: closest approach to a boundary
};

// The names of the kernels among `activities`, sorted.
std::vector<std::string> kernel_names(const std::vector<GpuActivity>& activities);

// `before_each(i)` runs before every call (warm-up and timed), outside the window: the
// caller rotates input sets and resets outputs there, enqueueing memsets on `stream` only
// (in batched mode they are part of the call's boundary). The L2 is flushed after it.
// Batched mode falls back to strict for the whole trial when the batch is unattributable.
util::Expected<Trial> run_trial(CallTimer& timer, L2Flusher& flusher, const CallFn& call,
                                const std::function<void(int call_index)>& before_each,
                                cudaStream_t stream, const TrialOptions& options);

} // namespace ptxbench::measure
