// GPU health and clock state from NVML, recorded with every measurement: SM and memory
// clocks, power, temperature and the current clock-event ("throttle") reasons. NVML ships
// with the driver, so it is loaded at run time (dlopen of libnvidia-ml.so.1); a machine
// without it gets an `unsupported` error, not a link failure.
#pragma once

#include "util/error.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace ptxbench::measure {

struct GpuSnapshot {
  std::string device_name;
  unsigned sm_clock_mhz = 0;
  unsigned memory_clock_mhz = 0;
  unsigned max_sm_clock_mhz = 0;
  double power_w = 0.0;
  unsigned temperature_c = 0;
  std::uint64_t clock_event_reasons = 0;      // NVML bitmask (0x1 idle, 0x4 SW power cap, …)
  std::vector<std::string> clock_event_names; // decoded, in bit order
};

// Names of the set bits of an NVML clock-event-reason mask ("gpu_idle", "sw_power_cap", …);
// unknown bits come out as "bit_0x…".
std::vector<std::string> decode_clock_event_reasons(std::uint64_t mask);

// True for reasons that lower clocks during a measurement (power cap, thermal or hardware
// slowdown, power brake); idle, application-clock and sync-boost bits are not.
bool reasons_slow_the_gpu(std::uint64_t mask);

class GpuMonitor {
public:
  // `cuda_device` is a CUDA runtime ordinal; NVML's device is found by PCI bus id, so
  // CUDA_VISIBLE_DEVICES renumbering does not matter.
  static util::Expected<GpuMonitor> create(int cuda_device);
  util::Expected<GpuSnapshot> snapshot() const;

  GpuMonitor(GpuMonitor&&) noexcept;
  GpuMonitor& operator=(GpuMonitor&&) noexcept;
  ~GpuMonitor();

  struct Library; // the loaded NVML: handle and resolved functions

private:
  explicit GpuMonitor(std::unique_ptr<Library> library);
  std::unique_ptr<Library> m_library;
};

} // namespace ptxbench::measure
