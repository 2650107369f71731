#include "suite/problem.hpp"

#include "trace/json_io.hpp"

namespace ptxbench::suite {

std::int64_t ResolvedTensor::element_count() const {
  std::int64_t count = 1;
  for (std::int64_t dim : dims)
    count *= dim;
  return count;
}

std::int64_t ResolvedTensor::size_bytes() const {
  if (scalar)
    return 0;
  return (element_count() * static_cast<std::int64_t>(trace::dtype_bits(dtype)) + 7) / 8;
}

} // namespace ptxbench::suite
