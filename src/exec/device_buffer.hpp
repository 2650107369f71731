// Move-only owners of device memory: a cudaMalloc'd buffer the supervisor shares with the
// candidate child (CUDA IPC), and the child's mapping of such a buffer.
#pragma once

#include "util/error.hpp"

#include <cuda_runtime.h>

#include <cstddef>
#include <string>

namespace ptxbench::exec {

// One cudaMalloc allocation (never a sub-range: an IPC handle names a whole allocation).
class DeviceBuffer {
public:
  DeviceBuffer() = default;
  static util::Expected<DeviceBuffer> allocate(std::size_t bytes);
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer();

  void* data() const { return m_data; }
  std::size_t bytes() const { return m_bytes; }
  // The cudaIpcMemHandle_t of this allocation as lower-case hex (128 characters).
  std::string ipc_handle_hex() const;

private:
  void release() noexcept;
  void* m_data = nullptr;
  std::size_t m_bytes = 0;
};

// A buffer of another process opened with cudaIpcOpenMemHandle (closed on destruction).
class IpcMapping {
public:
  IpcMapping() = default;
  static util::Expected<IpcMapping> open(const std::string& handle_hex, std::size_t bytes);
  IpcMapping(IpcMapping&& other) noexcept;
  IpcMapping& operator=(IpcMapping&& other) noexcept;
  IpcMapping(const IpcMapping&) = delete;
  IpcMapping& operator=(const IpcMapping&) = delete;
  ~IpcMapping();

  void* data() const { return m_data; }
  std::size_t bytes() const { return m_bytes; }

private:
  void release() noexcept;
  void* m_data = nullptr;
  std::size_t m_bytes = 0;
};

// A CUDA stream owned by the supervisor.
class Stream {
public:
  static util::Expected<Stream> create();
  Stream(Stream&& other) noexcept;
  Stream& operator=(Stream&& other) noexcept;
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  ~Stream();

  cudaStream_t get() const { return m_stream; }

private:
  Stream() = default;
  cudaStream_t m_stream = nullptr;
};

} // namespace ptxbench::exec
