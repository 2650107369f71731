// Timed phases or steps as one line of text, "name 1.2, name 3.4" (milliseconds), for the
// benchmarks' reports.
#pragma once

#include "util/phases.hpp"

#include <fmt/format.h>
#include <string>
#include <vector>

namespace ptxbench::bench {

inline std::string phases_text(const std::vector<util::Phase>& phases, int decimals = 1) {
  std::string out;
  for (const util::Phase& phase : phases)
    out += fmt::format("{}{} {:.{}f}", out.empty() ? "" : ", ", phase.name,
                       static_cast<double>(phase.elapsed.count()) / 1000.0, decimals);
  return out;
}

} // namespace ptxbench::bench
