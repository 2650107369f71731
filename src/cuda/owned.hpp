// Move-only owners of GPU resources: a handle and the function that releases it.
//
// `Owned<Handle, Release>` is the one RAII template for every CUDA runtime, driver and library
// handle (the library modules add their own release functors, e.g. cuBLASLt in reference/).
// Copying is deleted, moving leaves the source empty, and release happens once, in the
// destructor or on move-assignment, never throwing: a release failure while unwinding is
// ignored on purpose.
#pragma once

#include <cuda_runtime_api.h>
#include <utility>

namespace ptxbench::cuda {

// `Release` is a function object type, so the owner stays one handle wide.
template <typename Handle, typename Release> class Owned {
public:
  Owned() = default;
  explicit Owned(Handle handle) : m_handle(handle) {}
  Owned(Owned&& other) noexcept : m_handle(std::exchange(other.m_handle, Handle{})) {}
  Owned& operator=(Owned&& other) noexcept {
    if (this != &other) {
      reset();
      m_handle = std::exchange(other.m_handle, Handle{});
    }
    return *this;
  }
  Owned(const Owned&) = delete;
  Owned& operator=(const Owned&) = delete;
  ~Owned() { reset(); }

  Handle get() const { return m_handle; }
  explicit operator bool() const { return m_handle != Handle{}; }
  // Releases what is owned now (if anything) and owns nothing.
  void reset() noexcept {
    if (m_handle != Handle{})
      Release{}(m_handle);
    m_handle = Handle{};
  }

private:
  Handle m_handle{};
};

struct DeviceFree {
  void operator()(void* p) const noexcept { static_cast<void>(cudaFree(p)); }
};
struct EventRelease {
  void operator()(cudaEvent_t e) const noexcept { static_cast<void>(cudaEventDestroy(e)); }
};
struct StreamRelease {
  void operator()(cudaStream_t s) const noexcept { static_cast<void>(cudaStreamDestroy(s)); }
};
struct GraphRelease {
  void operator()(cudaGraph_t g) const noexcept { static_cast<void>(cudaGraphDestroy(g)); }
};
struct GraphExecRelease {
  void operator()(cudaGraphExec_t g) const noexcept { static_cast<void>(cudaGraphExecDestroy(g)); }
};

using DeviceMemory = Owned<void*, DeviceFree>;
using Event = Owned<cudaEvent_t, EventRelease>;
using Stream = Owned<cudaStream_t, StreamRelease>;
using Graph = Owned<cudaGraph_t, GraphRelease>;
using GraphExec = Owned<cudaGraphExec_t, GraphExecRelease>;

} // namespace ptxbench::cuda
