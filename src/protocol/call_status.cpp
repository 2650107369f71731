#include "protocol/call_status.hpp"

#include "cuda/check.hpp"

#include <fmt/format.h>

namespace ptxbench::protocol {

std::string call_status_text(int status) {
  if (status < 0)
    return fmt::format("ptxbench_invoke returned {}", status);
  return cuda::error_text(static_cast<cudaError_t>(status));
}

} // namespace ptxbench::protocol
