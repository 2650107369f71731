// The stats stage: the composition of a built data set (the paper's Figure 4: rows per
// problem, per error category, per turn) and the length of its rationales (Figure 15: min,
// median, p90, max characters), as Markdown. Counts come from the build manifest; lengths
// from the done rationales of the rows that made it into sft.jsonl. Percentiles are
// nearest-rank (the value at rank ceil(p * n)). The composition is also drawn as a figure
// (stats_figure.hpp).
#pragma once

#include "adapt/dataset.hpp"
#include "util/error.hpp"

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace ptxbench::adapt {

struct LengthStats {
  std::int64_t count = 0;
  std::int64_t min = 0;
  std::int64_t median = 0;
  std::int64_t p90 = 0;
  std::int64_t max = 0;
};

// Nearest-rank statistics of `values` (all zero when empty).
LengthStats length_stats(std::vector<std::int64_t> values);

// The composition counts of DIR/<kind>/build/manifest.json; invalid_input for a file that is
// not a build manifest.
util::Expected<Composition> build_composition(const std::filesystem::path& dir, DatasetKind kind);

// Markdown for DIR/<kind>/build/ (manifest.json, sft.jsonl) and DIR/<kind>/synthesize/.
util::Expected<std::string> render_stats(const std::filesystem::path& dir, DatasetKind kind);

} // namespace ptxbench::adapt
