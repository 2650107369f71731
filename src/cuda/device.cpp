#include "cuda/device.hpp"

#include "cuda/check.hpp"

#include <fmt/format.h>

namespace ptxbench::cuda {

int device_count() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess ? count : 0;
}

util::Status require_device() {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) {
    static_cast<void>(cudaGetLastError()); // not sticky; clear it for later callers
    return util::make_error(
        util::ErrorKind::unsupported,
        fmt::format("no CUDA device: cudaGetDeviceCount returned {}", error_text(status)));
  }
  if (count == 0)
    return util::make_error(util::ErrorKind::unsupported, "no CUDA device is visible");
  return util::Ok{};
}

util::Expected<Stream> create_stream(unsigned flags) {
  cudaStream_t stream = nullptr;
  PTXBENCH_CUDA_TRY(cudaStreamCreateWithFlags(&stream, flags), util::ErrorKind::unsupported);
  return Stream(stream);
}

Stream make_stream(unsigned flags) {
  cudaStream_t stream = nullptr;
  PTXBENCH_CUDA_CHECK(cudaStreamCreateWithFlags(&stream, flags));
  return Stream(stream);
}

Event make_event() {
  cudaEvent_t event = nullptr;
  PTXBENCH_CUDA_CHECK(cudaEventCreate(&event));
  return Event(event);
}

} // namespace ptxbench::cuda
