// L2 flush: a memset of exactly the L2 size (cudaDevAttrL2CacheSize) evicts every line a
// candidate could reuse; measured on an H200, it colds the cache as well as 2×L2 or 256 MiB
// (reference/measurement.md §11) at 22 µs. The scratch is allocated once. Persisting lines
// survive a memset, so strict windows release them first (peers-and-cheats.md §2 class 20).
#include "cuda/device.hpp"
#include "measure/check.hpp"
#include "measure/timing.hpp"

#include <fmt/format.h>

namespace ptxbench::measure {

util::Expected<L2Flusher> L2Flusher::create(int device) {
  PTXBENCH_TRY(cuda::require_device());
  int l2_bytes = 0;
  PTXBENCH_CUDA_CHECK(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, device));
  if (l2_bytes <= 0)
    return util::make_error(util::ErrorKind::unsupported,
                            fmt::format("device {} reports no L2 cache", device));
  void* buffer = nullptr;
  PTXBENCH_CUDA_CHECK(cudaMalloc(&buffer, static_cast<std::size_t>(l2_bytes)));
  L2Flusher flusher(cuda::DeviceMemory(buffer), static_cast<std::size_t>(l2_bytes));
  // A context starts with a carve-out of its own (11.25 MiB on the H200), which an access
  // policy window alone can fill; it goes to 0, so that any carve-out later is a call's.
  flusher.release_persisting();
  return flusher;
}

void L2Flusher::flush(cudaStream_t stream) {
  // The byte value alternates so that no flush is a repeat of the previous one.
  static int fill = 0;
  fill ^= 0x5a;
  PTXBENCH_CUDA_CHECK(cudaMemsetAsync(m_buffer.get(), fill, m_bytes, stream));
}

namespace {

// A device without persisting L2 (before sm_80) has nothing to release.
bool unsupported(cudaError_t status) {
  return status == cudaErrorUnsupportedLimit || status == cudaErrorNotSupported;
}

} // namespace

void L2Flusher::release_persisting() {
  if (persisting_bytes() != 0)
    PTXBENCH_CUDA_CHECK(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 0));
  if (const cudaError_t status = cudaCtxResetPersistingL2Cache(); !unsupported(status))
    PTXBENCH_CUDA_CHECK(status);
}

std::size_t L2Flusher::persisting_bytes() const {
  std::size_t bytes = 0;
  const cudaError_t status = cudaDeviceGetLimit(&bytes, cudaLimitPersistingL2CacheSize);
  if (unsupported(status))
    return 0;
  PTXBENCH_CUDA_CHECK(status);
  return bytes;
}

} // namespace ptxbench::measure
