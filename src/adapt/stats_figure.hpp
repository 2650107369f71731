// The composition figure of a built data set (the paper's Figure 4), beside the stats tables:
// rows per problem, per error category and per turn as three panels of horizontal bars, the
// problem and turn bars stacked by category. Drawn with report/'s cairo canvas (PNG and SVG);
// the SVG's <desc> lists every bar's label and count, since cairo draws text as outlines.
#pragma once

#include "adapt/dataset.hpp"
#include "report/plot_figures.hpp"
#include "util/error.hpp"

#include <filesystem>
#include <string>

namespace ptxbench::adapt {

// "composition"; an error when cairo cannot be loaded.
util::Expected<report::Figure> draw_composition(const Composition& counts, DatasetKind kind);

// The counts of DIR/<kind>/build/manifest.json, drawn into DIR/<kind>/stats/composition.{png,
// svg}; returns the two paths.
util::Expected<std::vector<std::filesystem::path>>
write_composition_figure(const std::filesystem::path& dir, DatasetKind kind);

} // namespace ptxbench::adapt
