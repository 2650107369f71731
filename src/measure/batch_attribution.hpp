// Attributing the GPU activities of a batch of back-to-back calls to the calls
// (docs/evaluation.md "Timing", batched mode).
//
// Problem. A batched trial enqueues `boundary, call, boundary, call, …` on one stream with no
// host synchronisation in between, and reads CUPTI's records once at the end. Each activity
// must be charged to the call that issued it, and a call whose work escapes its own slot —
// still running when the next call's boundary starts, or started before its own boundary had
// finished (work on another stream that did not wait for the call stream) — must not be
// timed from this batch at all.
//
// Approach. Every boundary (output reset and L2 flush) is a set of memsets on the call stream
// whose CUPTI correlation ids the timer marked when it enqueued them (the runtime call's and
// the driver call's inside it: the memset's record carries one of them). Correlation ids grow
// with enqueue order, so an activity's id places it between two boundaries on the host side:
// it belongs to the call issued between them. On the device side the boundaries cut the
// stream into windows: call i's window runs from the end of boundary i to the start of
// boundary i+1 (the last call's to the host timestamp after the stream synchronised). The
// batch is attributable only when every activity lies inside the window of the call that
// issued it; then a call's latency is last end − first start of its activities, as in the
// per-call (strict) mode. Anything else — an activity across a boundary, in another call's
// window, after the close, issued during a boundary, a missing boundary record — makes the
// whole batch unattributable with a reason, and the caller times the trial strictly, where
// the device is synchronised around every call and late work is decided.
//
// Invariants. Pure function of its inputs (tested on the CPU with synthetic records). It
// never reports late work: late work is a verdict only the strict mode gives.
#pragma once

#include "measure/timing.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace ptxbench::measure {

// Slack allowed between a boundary's edge and an activity of the adjacent call (CUPTI
// timestamps are quantised to 32 ns on an H200); far below anything a call could hide.
inline constexpr std::uint64_t kBoundarySlackNs = 1000;

struct BatchAttribution {
  std::vector<std::vector<GpuActivity>> calls; // per call: its activities, by start time
  std::vector<double> latency_ms;              // per call: last end − first start
  std::string unattributable;                  // empty when every activity was placed
  std::uint64_t min_gap_ns = UINT64_MAX;       // closest approach of an activity to a boundary
};

// The correlation ids of one memset API call of a boundary (runtime call, nested driver call).
using MarkedMemset = std::vector<std::uint32_t>;

// `boundaries[i]`: the memsets enqueued before call i (at least one; each must have exactly
// one record). `records`: everything CUPTI delivered for the batch. `close_ns`: the CUPTI
// timestamp taken after the call stream synchronised behind the last call.
BatchAttribution attribute_batch(std::vector<GpuActivity> records,
                                 const std::vector<std::vector<MarkedMemset>>& boundaries,
                                 std::uint64_t close_ns);

} // namespace ptxbench::measure
