#include "exec/device_buffer.hpp"

#include "exec/cuda_check.hpp"

#include <cstring>
#include <utility>

namespace ptxbench::exec {
namespace {

constexpr char kHexDigits[] = "0123456789abcdef";

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

} // namespace

util::Expected<DeviceBuffer> DeviceBuffer::allocate(std::size_t bytes) {
  DeviceBuffer buffer;
  // Zero-sized tensors still get a distinct, valid allocation.
  PTXBENCH_EXEC_CUDA_TRY(cudaMalloc(&buffer.m_data, bytes == 0 ? 256 : bytes),
                         util::ErrorKind::unsupported);
  buffer.m_bytes = bytes;
  return buffer;
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : m_data(std::exchange(other.m_data, nullptr)), m_bytes(std::exchange(other.m_bytes, 0)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    release();
    m_data = std::exchange(other.m_data, nullptr);
    m_bytes = std::exchange(other.m_bytes, 0);
  }
  return *this;
}

DeviceBuffer::~DeviceBuffer() { release(); }

void DeviceBuffer::release() noexcept {
  if (m_data != nullptr) cudaFree(m_data);
  m_data = nullptr;
  m_bytes = 0;
}

std::string DeviceBuffer::ipc_handle_hex() const {
  cudaIpcMemHandle_t handle{};
  PTXBENCH_EXEC_CUDA_CHECK(cudaIpcGetMemHandle(&handle, m_data));
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
  IpcMapping mapping;
  PTXBENCH_EXEC_CUDA_TRY(
      cudaIpcOpenMemHandle(&mapping.m_data, handle, cudaIpcMemLazyEnablePeerAccess),
      util::ErrorKind::subprocess);
  mapping.m_bytes = bytes;
  return mapping;
}

IpcMapping::IpcMapping(IpcMapping&& other) noexcept
    : m_data(std::exchange(other.m_data, nullptr)), m_bytes(std::exchange(other.m_bytes, 0)) {}

IpcMapping& IpcMapping::operator=(IpcMapping&& other) noexcept {
  if (this != &other) {
    release();
    m_data = std::exchange(other.m_data, nullptr);
    m_bytes = std::exchange(other.m_bytes, 0);
  }
  return *this;
}

IpcMapping::~IpcMapping() { release(); }

void IpcMapping::release() noexcept {
  if (m_data != nullptr) cudaIpcCloseMemHandle(m_data);
  m_data = nullptr;
  m_bytes = 0;
}

util::Expected<Stream> Stream::create() {
  Stream stream;
  PTXBENCH_EXEC_CUDA_TRY(cudaStreamCreateWithFlags(&stream.m_stream, cudaStreamNonBlocking),
                         util::ErrorKind::unsupported);
  return stream;
}

Stream::Stream(Stream&& other) noexcept : m_stream(std::exchange(other.m_stream, nullptr)) {}

Stream& Stream::operator=(Stream&& other) noexcept {
  if (this != &other) {
    if (m_stream != nullptr) cudaStreamDestroy(m_stream);
    m_stream = std::exchange(other.m_stream, nullptr);
  }
  return *this;
}

Stream::~Stream() {
  if (m_stream != nullptr) cudaStreamDestroy(m_stream);
}

} // namespace ptxbench::exec
