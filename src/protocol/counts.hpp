// The counts reply of a `count` request: what the child's counter (measure/counter.hpp)
// measured in one call, typed, and its JSON on the pipe and in the evaluation report.
//
// Nothing here names a family or an architecture's metric: the counts are metric → value per
// profiled range, with the counter table's architecture (sass/counters.hpp) that chose the
// metrics, so the supervisor credits families from the same table for any architecture.
//
// JSON: {"available": bool, "reason"?, "arch", "chip", "metrics": {metric: total},
// "ranges": [{"kernel", "metrics": {metric: value}}], "kernels", "rejected_metrics", "passes",
// "pass_ms", "replay", "calls", "session", "steps": {step: ms}}. Values that are not finite
// travel as "NaN", "Infinity", "-Infinity" (util/json_number.hpp, exact spellings). Decoding is
// strict and never throws: a field of the wrong type, a value that is not a number, a range
// without one of the metrics of the totals is a bad_response error naming its JSON path
// ("instruction counts: $.ranges[0].kernel: expected a string, got integer").
#pragma once

#include "measure/counter.hpp"
#include "trace/schema.hpp"
#include "util/error.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ptxbench::protocol {

struct CountedRange {
  std::string kernel;         // CUPTI's range name (a launch number under auto ranges)
  std::vector<double> values; // in Counts::metrics order; NaN when the passes disagreed
  bool operator==(const CountedRange&) const = default;
};

struct Counts {
  bool available = false;
  std::string reason; // why not available
  std::string arch;   // the counter table's architecture; "" when the metrics were given
  std::string chip;
  std::vector<std::string> metrics; // the accepted metrics
  std::vector<double> totals;       // per metric, over every range
  std::vector<CountedRange> ranges; // one per kernel launch, in launch order
  std::vector<std::string> rejected_metrics;
  std::size_t passes = 0;
  double pass_ms = 0.0;
  std::string replay; // "kernel" or "user"
  std::size_t calls = 0;
  std::string session;                               // how the profiler session was opened
  std::vector<std::pair<std::string, double>> steps; // wall time per step, ms, in order

  static Counts unavailable(std::string reason);
  // The index of `metric` in `metrics`; nullopt when it was not measured.
  std::optional<std::size_t> index_of(std::string_view metric) const;
  std::optional<double> total(std::string_view metric) const;
  std::vector<std::string> kernels() const;
  bool operator==(const Counts&) const; // NaN values compare equal to NaN
};

// The counter's result as the reply carries it.
Counts counts_of(const measure::InstructionCounts& counts, std::string chip,
                 std::vector<std::string> rejected_metrics, std::string session);

trace::Json to_json(const Counts& counts);
util::Expected<Counts> counts_from_json(const trace::Json& json);

} // namespace ptxbench::protocol
