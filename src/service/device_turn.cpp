#include "service/device_turn.hpp"

#include <cerrno>
#include <cstring>
#include <cuda_runtime.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <unistd.h>

namespace ptxbench::service {

util::Expected<std::filesystem::path> DeviceTurn::lock_file(int cuda_device) {
  char bus_id[32] = {};
  if (const cudaError_t error = cudaDeviceGetPCIBusId(bus_id, sizeof(bus_id), cuda_device);
      error != cudaSuccess)
    return util::make_error(
        util::ErrorKind::unsupported,
        fmt::format("cuda:{}: no PCI bus id ({})", cuda_device, cudaGetErrorString(error)));
  return std::filesystem::path("/tmp") / fmt::format("ptxbench-gpu-{}.lock", bus_id);
}

util::Expected<DeviceTurn> DeviceTurn::take(int cuda_device) {
  PTXBENCH_TRY_ASSIGN(auto path, lock_file(cuda_device));
  return take(path);
}

util::Expected<DeviceTurn> DeviceTurn::take(const std::filesystem::path& path) {
  // Readable and writable by every user: workers of different users share a GPU too.
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  if (fd < 0)
    return util::make_error(util::ErrorKind::io,
                            fmt::format("cannot open {}: {}", path.string(), std::strerror(errno)));
  int locked = 0;
  while ((locked = ::flock(fd, LOCK_EX)) != 0 && errno == EINTR) {
  }
  if (locked != 0) {
    const int error = errno;
    ::close(fd);
    return util::make_error(util::ErrorKind::io,
                            fmt::format("cannot lock {}: {}", path.string(), std::strerror(error)));
  }
  return DeviceTurn(fd);
}

DeviceTurn::~DeviceTurn() {
  if (m_fd >= 0)
    ::close(m_fd); // releases the flock
}

} // namespace ptxbench::service
