// The collect stages: turning benchmark run stores into adaptation records.
//
// Fixit collect keeps the failed COUNTED turns of one or more runs (by default the categories
// compile, runtime, timeout and numerical, as the original's select_failed_kernels.py; the
// options add banned_library and extraction), each as a FailureRecord carrying the kernel, the
// exact feedback the model got, and the trajectory's two opening prompts. KernelGen collect
// keeps the correct counted turns as CorrectRecords, optionally only those whose target
// instructions executed, or only the fastest per trajectory.
//
// Records are identified by the sha256 of their kernel source: a kernel that failed (or
// passed) several times is one record, the first occurrence in walk order (run directories as
// given, trajectories in store order, turns by index), and `occurrences` counts them.
//
// A run store is read without being changed. One written by another schema version is refused
// with a message naming both versions (opening it would migrate it). A run still being written
// — a trajectory whose status is running, or with a turn still open — has its unfinished
// trajectories skipped with a warning, because their last turns may yet change; `strict`
// refuses the whole collection instead. An empty selection is an error and writes nothing.
#pragma once

#include "adapt/records.hpp"
#include "util/error.hpp"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace ptxbench::adapt {

enum class Unfinished : std::uint8_t { skip = 1, refuse = 2 };

struct SourceFilter {
  std::vector<std::filesystem::path> run_dirs;
  std::vector<std::string> variants;    // empty: every prompt variant
  std::vector<std::string> problems;    // empty: every problem
  std::optional<std::int64_t> max_turn; // keep turns with index < max_turn
  Unfinished unfinished = Unfinished::skip;
};

struct FixitCollectOptions {
  SourceFilter source;
  std::vector<std::string> categories{"compile", "runtime", "timeout", "numerical"};
};

enum class TargetFilter : std::uint8_t { any = 1, executed_only = 2 };
enum class PerTrajectory : std::uint8_t { every_turn = 1, best = 2 };

struct KernelGenCollectOptions {
  SourceFilter source;
  TargetFilter target = TargetFilter::any;
  PerTrajectory per_trajectory = PerTrajectory::every_turn;
};

struct CollectResult {
  std::int64_t records = 0;     // distinct kernels written
  std::int64_t occurrences = 0; // turns they came from
  std::vector<std::string> warnings;
  std::filesystem::path records_file;
};

// The categories `--include` may add to the default four.
inline constexpr std::string_view kOptionalFailureCategories[] = {"banned_library", "extraction"};

// DIR/fixit/collect/{failures.jsonl,manifest.json}.
util::Expected<CollectResult> collect_failures(const FixitCollectOptions& options,
                                               const std::filesystem::path& dir);
// DIR/kernelgen/collect/{correct.jsonl,manifest.json}.
util::Expected<CollectResult> collect_correct(const KernelGenCollectOptions& options,
                                              const std::filesystem::path& dir);

// true / false from a stored evaluation's verdicts when known (report's TargetState), else
// nullopt.
std::optional<bool> target_executed(const std::optional<std::string>& static_verdict,
                                    const std::optional<std::string>& dynamic_verdict);

} // namespace ptxbench::adapt
