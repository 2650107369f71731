#include "protocol/device_buffer.hpp"

#include "cuda/check.hpp"

#include <cstring>
#include <utility>

namespace ptxbench::protocol {
namespace {

constexpr char kHexDigits[] = "0123456789abcdef";

int hex_value(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  return -1;
}

} // namespace

util::Expected<DeviceBuffer> DeviceBuffer::allocate(std::size_t bytes) {
  void* memory = nullptr;
  // Zero-sized tensors still get a distinct, valid allocation.
  PTXBENCH_CUDA_TRY(cudaMalloc(&memory, bytes == 0 ? 256 : bytes), util::ErrorKind::unsupported);
  DeviceBuffer buffer;
  buffer.m_memory = cuda::DeviceMemory(memory);
  buffer.m_bytes = bytes;
  return buffer;
}

std::string DeviceBuffer::ipc_handle_hex() const {
  cudaIpcMemHandle_t handle{};
  PTXBENCH_CUDA_CHECK(cudaIpcGetMemHandle(&handle, m_memory.get()));
  std::string hex;
  hex.reserve(2 * sizeof handle.reserved);
  for (char byte : handle.reserved) {
    const auto value = static_cast<unsigned char>(byte);
    hex.push_back(kHexDigits[value >> 4]);
    hex.push_back(kHexDigits[value & 15]);
  }
  return hex;
}

util::Expected<IpcMapping> IpcMapping::open(const std::string& handle_hex, std::size_t bytes) {
  cudaIpcMemHandle_t handle{};
  if (handle_hex.size() != 2 * sizeof handle.reserved)
    return util::make_error(util::ErrorKind::invalid_input, "IPC handle of the wrong length");
  for (std::size_t i = 0; i < sizeof handle.reserved; ++i) {
    const int hi = hex_value(handle_hex[2 * i]), lo = hex_value(handle_hex[2 * i + 1]);
    if (hi < 0 || lo < 0)
      return util::make_error(util::ErrorKind::invalid_input, "IPC handle is not hex");
    handle.reserved[i] = static_cast<char>(hi * 16 + lo);
  }
  void* data = nullptr;
  PTXBENCH_CUDA_TRY(cudaIpcOpenMemHandle(&data, handle, cudaIpcMemLazyEnablePeerAccess),
                    util::ErrorKind::subprocess);
  IpcMapping mapping;
  mapping.m_mapping = cuda::Owned<void*, IpcClose>(data);
  mapping.m_bytes = bytes;
  return mapping;
}

} // namespace ptxbench::protocol
