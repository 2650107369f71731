#include "service/device_turn.hpp"

#include <atomic>
#include <cerrno>
#include <cstring>
#include <cuda_runtime.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <unistd.h>

namespace ptxbench::service {

namespace {

util::Expected<std::string> bus_id_of(int cuda_device) {
  char bus_id[32] = {};
  if (const cudaError_t error = cudaDeviceGetPCIBusId(bus_id, sizeof(bus_id), cuda_device);
      error != cudaSuccess)
    return util::make_error(
        util::ErrorKind::unsupported,
        fmt::format("cuda:{}: no PCI bus id ({})", cuda_device, cudaGetErrorString(error)));
  return std::string(bus_id);
}

} // namespace

util::Expected<std::filesystem::path> DeviceTurn::lock_file(int cuda_device) {
  PTXBENCH_TRY_ASSIGN(auto bus_id, bus_id_of(cuda_device));
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

util::Expected<DevicePresence> DevicePresence::announce(int cuda_device) {
  PTXBENCH_TRY_ASSIGN(auto bus_id, bus_id_of(cuda_device));
  return announce(std::filesystem::path("/tmp") / fmt::format("ptxbench-gpu-{}.d", bus_id));
}

util::Expected<DevicePresence> DevicePresence::announce(const std::filesystem::path& folder) {
  static std::atomic<int> counter{0};
  std::error_code error;
  std::filesystem::create_directories(folder, error);
  // Every user's workers announce themselves here.
  std::filesystem::permissions(folder, std::filesystem::perms::all, error);
  // Locked under a hidden name, then renamed: alone() never sees an unlocked holder's file.
  const std::string name = fmt::format("{}-{}", ::getpid(), counter++);
  auto file = folder / name;
  const auto hidden = folder / ("." + name);
  const int fd = ::open(hidden.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0666);
  if (fd < 0 || ::flock(fd, LOCK_EX | LOCK_NB) != 0 ||
      ::rename(hidden.c_str(), file.c_str()) != 0) {
    const int cause = errno;
    if (fd >= 0)
      ::close(fd);
    std::filesystem::remove(hidden, error);
    return util::make_error(util::ErrorKind::io, fmt::format("cannot announce {}: {}",
                                                             file.string(), std::strerror(cause)));
  }
  return DevicePresence(folder, std::move(file), fd);
}

DevicePresence::DevicePresence(DevicePresence&& other) noexcept
    : m_folder(std::move(other.m_folder)), m_file(std::move(other.m_file)), m_fd(other.m_fd) {
  other.m_fd = -1;
}

DevicePresence::~DevicePresence() {
  if (m_fd < 0)
    return;
  std::error_code ignored;
  std::filesystem::remove(m_file, ignored);
  ::close(m_fd);
}

bool DevicePresence::alone() const {
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(m_folder, error)) {
    if (entry.path() == m_file || entry.path().filename().string().starts_with("."))
      continue;
    const int fd = ::open(entry.path().c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
      continue;
    const bool live = ::flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
    if (!live) {
      std::error_code ignored;
      std::filesystem::remove(entry.path(), ignored); // a dead holder's
    }
    ::close(fd);
    if (live)
      return false;
  }
  return true;
}

} // namespace ptxbench::service
