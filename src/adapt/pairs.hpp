// The pairs stage: each selected failure joined with the correct kernels a teacher repaired it
// into (the original's collect_success_kernel_pairs.py).
//
// Inputs: DIR/fixit/repair/tasks.jsonl (which repair trajectory worked on which failure), the
// repair run store DIR/fixit/repair/run (an ordinary run store), and the failures themselves
// from DIR/fixit/balance/selected.jsonl (or DIR/fixit/collect/failures.jsonl when the data set
// was not balanced). A repaired kernel is a finished, counted turn of the task's trajectory
// whose category is correct; `best` keeps the fastest (earliest among equals, unknown speedup
// slowest), `latest` the last, `all` every one. --require-target keeps only kernels whose
// target instructions executed, --min-speedup only those at least that fast (an unknown
// speedup fails it). A repair trajectory still being written is skipped with a warning; a task
// naming a failure or trajectory that does not exist is an error.
#pragma once

#include "adapt/records.hpp"
#include "util/error.hpp"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace ptxbench::adapt {

enum class PairMode : std::uint8_t { best = 1, latest = 2, all = 3 };
std::string_view to_string(PairMode mode);
std::optional<PairMode> pair_mode_from_string(std::string_view name);

struct PairsOptions {
  PairMode mode = PairMode::best;
  bool require_target = false;
  std::optional<double> min_speedup;
};

struct PairsResult {
  std::int64_t tasks = 0;
  std::int64_t repaired = 0; // tasks with at least one pair
  std::int64_t pairs = 0;
  std::vector<std::string> warnings;
  std::filesystem::path pairs_file;
};

// → DIR/fixit/pairs/{pairs.jsonl,manifest.json}.
util::Expected<PairsResult> build_pairs(const std::filesystem::path& dir,
                                        const PairsOptions& options);

} // namespace ptxbench::adapt
