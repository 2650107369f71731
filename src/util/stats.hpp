// Small statistics over measurements.
#pragma once

#include <algorithm>
#include <cstddef>
#include <vector>

namespace ptxbench::util {

// The median of `values`, the mean of the two middle ones for an even count; 0 when empty.
inline double median(std::vector<double> values) {
  if (values.empty())
    return 0.0;
  std::sort(values.begin(), values.end());
  const std::size_t mid = values.size() / 2;
  return values.size() % 2 ? values[mid] : (values[mid - 1] + values[mid]) / 2.0;
}

} // namespace ptxbench::util
