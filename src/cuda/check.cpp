#include "cuda/check.hpp"

#include <fmt/format.h>

namespace ptxbench::cuda {

std::string error_text(cudaError_t status) {
  return fmt::format("{}: {}", cudaGetErrorName(status), cudaGetErrorString(status));
}

namespace detail {

std::string describe_failure(std::string_view library, std::string_view error_name,
                             std::string_view detail, std::string_view file, int line,
                             std::string_view call) {
  if (detail.empty())
    return fmt::format("{} error {} at {}:{}: {}", library, error_name, file, line, call);
  return fmt::format("{} error {}: {} at {}:{}: {}", library, error_name, detail, file, line, call);
}

void throw_library_error(std::string_view library, std::string_view error_name,
                         std::string_view detail, const char* file, int line, const char* call) {
  throw LibraryError(std::string(library), std::string(error_name),
                     describe_failure(library, error_name, detail, file, line, call));
}

void check_runtime(cudaError_t status, const char* file, int line, const char* call) {
  if (status == cudaSuccess)
    return;
  throw_library_error("CUDA", cudaGetErrorName(status), cudaGetErrorString(status), file, line,
                      call);
}

util::Error runtime_failure(cudaError_t status, util::ErrorKind kind, const char* file, int line,
                            const char* call) {
  return util::Error{kind, describe_failure("CUDA", cudaGetErrorName(status),
                                            cudaGetErrorString(status), file, line, call)};
}

} // namespace detail
} // namespace ptxbench::cuda
