#include "measure/live_device.hpp"

#include "cuda/device.hpp"
#include "measure/nvml_monitor.hpp"

#include <cuda_runtime.h>
#include <fmt/core.h>

namespace ptxbench::measure {
namespace {

// Dense bf16 tensor-core FLOP per clock per SM (arch-facts: 4096 on Hopper, 8192 on Blackwell).
int bf16_flop_per_clock_per_sm(int cc_major) {
  if (cc_major == 9)
    return 4096;
  if (cc_major == 10)
    return 8192;
  return 0;
}

util::Expected<int> attribute(cudaDeviceAttr which, int device, const char* name) {
  int value = 0;
  if (cudaError_t error = cudaDeviceGetAttribute(&value, which, device); error != cudaSuccess)
    return util::make_error(
        util::ErrorKind::unsupported,
        fmt::format("cudaDeviceGetAttribute({}): {}", name, cudaGetErrorString(error)));
  return value;
}

} // namespace

double LiveDevice::peak_memory_tb_s() const {
  return 2.0 * memory_clock_mhz * 1e6 * (memory_bus_bits / 8.0) / 1e12;
}

double LiveDevice::peak_bf16_tflop_s() const {
  return static_cast<double>(sms) * bf16_flop_per_clock_per_sm(cc_major) * max_sm_clock_mhz * 1e6 /
         1e12;
}

std::string LiveDevice::arch() const {
  if (cc_major == 9 && cc_minor == 0)
    return "sm_90a";
  if (cc_major == 10 && cc_minor == 0)
    return "sm_100a";
  return fmt::format("sm_{}{}", cc_major, cc_minor);
}

util::Expected<LiveDevice> read_live_device(int cuda_device) {
  if (cuda::device_count() <= cuda_device)
    return util::make_error(util::ErrorKind::unsupported, "no CUDA device is visible");
  cudaDeviceProp prop{};
  if (cudaError_t error = cudaGetDeviceProperties(&prop, cuda_device); error != cudaSuccess)
    return util::make_error(util::ErrorKind::unsupported,
                            std::string("cudaGetDeviceProperties: ") + cudaGetErrorString(error));
  LiveDevice d;
  d.name = prop.name;
  d.cc_major = prop.major;
  d.cc_minor = prop.minor;
  d.sms = prop.multiProcessorCount;
  d.max_threads_per_sm = prop.maxThreadsPerMultiProcessor;
  d.registers_per_sm = prop.regsPerMultiprocessor;
  d.smem_per_sm_bytes = static_cast<std::int64_t>(prop.sharedMemPerMultiprocessor);
  d.smem_per_block_optin_bytes = static_cast<std::int64_t>(prop.sharedMemPerBlockOptin);
  d.l2_bytes = prop.l2CacheSize;
  d.global_memory_bytes = static_cast<std::int64_t>(prop.totalGlobalMem);
  d.memory_bus_bits = prop.memoryBusWidth;
  PTXBENCH_TRY_ASSIGN(auto memory_khz,
                      attribute(cudaDevAttrMemoryClockRate, cuda_device, "MemoryClockRate"));
  d.memory_clock_mhz = memory_khz / 1000;
  d.clock_source = "cuda";
  PTXBENCH_TRY_ASSIGN(auto clock_khz, attribute(cudaDevAttrClockRate, cuda_device, "ClockRate"));
  d.max_sm_clock_mhz = clock_khz / 1000;
  if (auto monitor = GpuMonitor::create(cuda_device))
    if (auto snapshot = monitor->snapshot(); snapshot && snapshot->max_sm_clock_mhz > 0) {
      d.max_sm_clock_mhz = static_cast<int>(snapshot->max_sm_clock_mhz);
      d.clock_source = "nvml";
    }
  return d;
}

std::string render_live_device(const LiveDevice& d) {
  constexpr double kMiB = 1024.0 * 1024.0;
  std::string out = fmt::format(
      "# Live device (read from the GPU that evaluates your kernel)\n\n"
      "These values come from the device at run time; where they differ from the tables "
      "above, they win.\n\n| Parameter | Value |\n|---|---|\n"
      "| GPU | {} (compute capability {}.{}, build target {}) |\n"
      "| SMs | {} |\n| Threads per SM | {} |\n| 32-bit registers per SM | {} |\n"
      "| Shared memory per SM | {} B |\n| Shared memory per block (opt-in) | {} B |\n"
      "| L2 cache | {} B ({:.0f} MiB) |\n| Global memory | {:.1f} GiB |\n"
      "| Max SM clock | {} MHz ({}) |\n"
      "| Memory | {} MHz × {}-bit bus = {:.2f} TB/s theoretical |\n",
      d.name, d.cc_major, d.cc_minor, d.arch(), d.sms, d.max_threads_per_sm, d.registers_per_sm,
      d.smem_per_sm_bytes, d.smem_per_block_optin_bytes, d.l2_bytes,
      static_cast<double>(d.l2_bytes) / kMiB,
      static_cast<double>(d.global_memory_bytes) / (kMiB * 1024.0), d.max_sm_clock_mhz,
      d.clock_source == "nvml" ? "NVML" : "CUDA attribute", d.memory_clock_mhz, d.memory_bus_bits,
      d.peak_memory_tb_s());
  if (double peak = d.peak_bf16_tflop_s(); peak > 0)
    out += fmt::format("| Dense bf16 tensor peak | {:.0f} TFLOP/s (SMs × {} FLOP/clk/SM × max "
                       "clock) |\n",
                       peak, bf16_flop_per_clock_per_sm(d.cc_major));
  return out;
}

} // namespace ptxbench::measure
