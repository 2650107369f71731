// Turns on one GPU between processes: two `ptxbench serve --broker` on one host (or any two
// fleet workers whose processes share a device) must not time each other's kernels.
//
// Problem. Within one process the evaluator's GpuLock (exec/gpu_lock.hpp) keeps timing and
// counting exclusive; a second process knows nothing of it, so its correctness calls, compiles
// that load the GPU, or its own timing would land inside the first one's trials.
//
// Approach. An exclusive flock on a file named by the GPU's PCI bus id, in /tmp (every process
// of the host sees it; CUDA_VISIBLE_DEVICES renumbering does not change the name), held for a
// whole evaluation. The kernel releases it when its holder dies, so a killed worker never
// leaves the GPU locked. Coarse by design: workers of one process share a device through the
// GpuLock and never take this lock twice at once (one turn per worker thread).
#pragma once

#include "util/error.hpp"

#include <filesystem>

namespace ptxbench::service {

class DeviceTurn {
public:
  // Waits for the turn on `cuda_device`; io when the lock file cannot be opened.
  static util::Expected<DeviceTurn> take(int cuda_device);
  // Waits for the turn that `lock_file` stands for.
  static util::Expected<DeviceTurn> take(const std::filesystem::path& lock_file);
  // The lock file of `cuda_device` ("/tmp/ptxbench-gpu-0000:19:00.0.lock").
  static util::Expected<std::filesystem::path> lock_file(int cuda_device);

  DeviceTurn(DeviceTurn&& other) noexcept : m_fd(other.m_fd) { other.m_fd = -1; }
  DeviceTurn& operator=(DeviceTurn&&) = delete;
  DeviceTurn(const DeviceTurn&) = delete;
  DeviceTurn& operator=(const DeviceTurn&) = delete;
  ~DeviceTurn();

private:
  explicit DeviceTurn(int fd) : m_fd(fd) {}
  int m_fd;
};

} // namespace ptxbench::service
