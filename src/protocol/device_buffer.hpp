// Move-only owners of device memory: a cudaMalloc'd buffer the supervisor shares with the
// candidate child (CUDA IPC), and the child's mapping of such a buffer.
#pragma once

#include "cuda/owned.hpp"
#include "util/error.hpp"

#include <cstddef>
#include <cuda_runtime.h>
#include <string>

namespace ptxbench::protocol {

// One cudaMalloc allocation (never a sub-range: an IPC handle names a whole allocation).
class DeviceBuffer {
public:
  DeviceBuffer() = default;
  static util::Expected<DeviceBuffer> allocate(std::size_t bytes);

  void* data() const { return m_memory.get(); }
  std::size_t bytes() const { return m_bytes; }
  // The cudaIpcMemHandle_t of this allocation as lower-case hex (128 characters).
  std::string ipc_handle_hex() const;

private:
  cuda::DeviceMemory m_memory;
  std::size_t m_bytes = 0;
};

struct IpcClose {
  void operator()(void* p) const noexcept { static_cast<void>(cudaIpcCloseMemHandle(p)); }
};

// A buffer of another process opened with cudaIpcOpenMemHandle (closed on destruction).
class IpcMapping {
public:
  IpcMapping() = default;
  static util::Expected<IpcMapping> open(const std::string& handle_hex, std::size_t bytes);

  void* data() const { return m_mapping.get(); }
  std::size_t bytes() const { return m_bytes; }

private:
  cuda::Owned<void*, IpcClose> m_mapping;
  std::size_t m_bytes = 0;
};

} // namespace ptxbench::protocol
