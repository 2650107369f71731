#include "exec/cuda_check.hpp"

#include <fmt/format.h>

namespace ptxbench::exec::detail {

std::string cuda_error_text(int status) {
  if (status < 0) return fmt::format("ptxbench_invoke returned {}", status);
  const auto error = static_cast<cudaError_t>(status);
  return fmt::format("{}: {}", cudaGetErrorName(error), cudaGetErrorString(error));
}

std::string describe_cuda_failure(cudaError_t status, const char* call, const char* file,
                                  int line) {
  return fmt::format("CUDA error {} at {}:{} in {}", cuda_error_text(status), file, line, call);
}

} // namespace ptxbench::exec::detail
