#include "exec/gpu_ops.hpp"

#include <algorithm>
#include <limits>

namespace ptxbench::exec {

void CompareStats::merge(const CompareStats& other) {
  elements += other.elements;
  failed += other.failed;
  candidate_nan += other.candidate_nan;
  candidate_inf += other.candidate_inf;
  reference_nonfinite += other.reference_nonfinite;
  max_abs_error = std::max(max_abs_error, other.max_abs_error);
  max_rel_error = std::max(max_rel_error, other.max_rel_error);
}

double CompareStats::reported_abs_error() const {
  if (candidate_inf > 0)
    return std::numeric_limits<double>::infinity();
  if (candidate_nan > 0)
    return std::numeric_limits<double>::quiet_NaN();
  return max_abs_error;
}

double CompareStats::reported_rel_error() const {
  if (candidate_inf > 0)
    return std::numeric_limits<double>::infinity();
  if (candidate_nan > 0)
    return std::numeric_limits<double>::quiet_NaN();
  return max_rel_error;
}

} // namespace ptxbench::exec
