// GPU health and clock state from NVML, recorded with every measurement: SM and memory
// clocks, power, temperature and the current clock-event ("throttle") reasons; for the fleet's
// health check (gpu_health.hpp) also the volatile uncorrected ECC count, the slowdown
// temperature and Xid critical-error events, each "where available": a GPU or driver that
// answers NOT_SUPPORTED (or lacks the function) leaves that reading unset, never an error. NVML
// ships with the driver, so it is loaded at run time (dlopen of libnvidia-ml.so.1); a machine
// without it gets an `unsupported` error, not a link failure.
#pragma once

#include "util/error.hpp"

#include <cstdint>
#include <memory>
#include <optional>
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
  // Unset where this GPU or driver does not offer the reading.
  std::optional<std::uint64_t> ecc_uncorrected_volatile; // since the driver loaded
  std::optional<unsigned> slowdown_temperature_c;        // NVML_TEMPERATURE_THRESHOLD_SLOWDOWN
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
  // Starts collecting Xid critical-error events for this device; false where the GPU or driver
  // does not offer them.
  util::Expected<bool> watch_xid_errors();
  // The Xid numbers of the critical errors since watching began or the last call, oldest first;
  // empty when not watching.
  util::Expected<std::vector<std::uint64_t>> take_xid_errors();

  GpuMonitor(GpuMonitor&&) noexcept;
  GpuMonitor& operator=(GpuMonitor&&) noexcept;
  ~GpuMonitor();

  struct Library; // the loaded NVML: handle and resolved functions

private:
  explicit GpuMonitor(std::unique_ptr<Library> library);
  std::unique_ptr<Library> m_library;
};

} // namespace ptxbench::measure
