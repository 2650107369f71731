#include "measure/check.hpp"

#include <fmt/format.h>

namespace ptxbench::measure::detail {

std::string describe_failure(std::string_view library, std::string_view error_name,
                             const char* call, const char* file, int line) {
  return fmt::format("{} error {} at {}:{} in `{}`", library, error_name, file, line, call);
}

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

util::Status require_cuda_device() {
  int count = 0;
  const cudaError_t error = cudaGetDeviceCount(&count);
  if (error != cudaSuccess)
    return util::make_error(util::ErrorKind::unsupported,
                            fmt::format("no usable CUDA device: cudaGetDeviceCount returned {} ({})",
                                        cudaGetErrorName(error), cudaGetErrorString(error)));
  if (count == 0)
    return util::make_error(util::ErrorKind::unsupported, "no CUDA device is visible");
  return util::Ok{};
}

} // namespace ptxbench::measure::detail
