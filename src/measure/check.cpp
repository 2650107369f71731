#include "measure/check.hpp"

#include <fmt/format.h>

namespace ptxbench::measure::detail {

std::string cupti_error_name(CUptiResult result) {
  const char* text = nullptr;
  if (cuptiGetResultString(result, &text) != CUPTI_SUCCESS || text == nullptr)
    return fmt::format("CUPTI_ERROR({})", static_cast<int>(result));
  return text;
}

util::ErrorKind cupti_error_kind(CUptiResult result, util::ErrorKind otherwise) {
  switch (result) {
  case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
  case CUPTI_ERROR_NOT_SUPPORTED:
  case CUPTI_ERROR_NOT_COMPATIBLE:
  case CUPTI_ERROR_LEGACY_PROFILER_NOT_SUPPORTED:
  case CUPTI_ERROR_CMP_DEVICE_NOT_SUPPORTED:
  case CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED:
  case CUPTI_ERROR_CONFIDENTIAL_COMPUTING_NOT_SUPPORTED:
    return util::ErrorKind::unsupported;
  default:
    return otherwise;
  }
}

} // namespace ptxbench::measure::detail
