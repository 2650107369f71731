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

// That this process evaluates on a GPU, for the other processes of the host: one file per
// holder in a folder named by the GPU's PCI bus id (/tmp/ptxbench-gpu-<bus id>.d/<pid>-<n>),
// locked for the holder's life. alone() tells whether any other live holder exists (a file
// whose lock can be taken is a dead holder's and is removed). Two fleet workers on one GPU
// must not keep its counter session between evaluations (exec::Evaluator::
// allow_counter_sessions_ahead); this is how each learns that the other is there.
class DevicePresence {
public:
  static util::Expected<DevicePresence> announce(int cuda_device);
  static util::Expected<DevicePresence> announce(const std::filesystem::path& folder);
  DevicePresence(DevicePresence&& other) noexcept;
  DevicePresence& operator=(DevicePresence&&) = delete;
  DevicePresence(const DevicePresence&) = delete;
  DevicePresence& operator=(const DevicePresence&) = delete;
  ~DevicePresence();

  // No other live holder announced itself for this GPU.
  bool alone() const;

private:
  DevicePresence(std::filesystem::path folder, std::filesystem::path file, int fd)
      : m_folder(std::move(folder)), m_file(std::move(file)), m_fd(fd) {}
  std::filesystem::path m_folder, m_file;
  int m_fd;
};

} // namespace ptxbench::service
