// The architecture parameters of the GPU this process sees, read at run time: what the
// knowledge pack's params.md marks **live** (SM count, shared memory, L2, clocks, memory) and
// must not be hard-coded, because partitioned or differently clocked parts differ. The agent
// appends the rendered table to the system prompt when it evaluates on that GPU.
#pragma once

#include "util/error.hpp"

#include <cstdint>
#include <string>

namespace ptxbench::measure {

struct LiveDevice {
  std::string name;
  int cc_major = 0;
  int cc_minor = 0;
  int sms = 0;
  int max_threads_per_sm = 0;
  int registers_per_sm = 0;
  std::int64_t smem_per_sm_bytes = 0;
  std::int64_t smem_per_block_optin_bytes = 0;
  std::int64_t l2_bytes = 0;
  std::int64_t global_memory_bytes = 0;
  int max_sm_clock_mhz = 0; // NVML's max SM clock, else the CUDA attribute
  int memory_clock_mhz = 0; // peak memory clock (CUDA attribute)
  int memory_bus_bits = 0;
  std::string clock_source; // "nvml" or "cuda"

  // 2 transfers per clock × bus width: the theoretical DRAM bandwidth.
  double peak_memory_tb_s() const;
  // SMs × dense bf16 FLOP per clock per SM × max SM clock (4096 on sm_90, 8192 on sm_100).
  double peak_bf16_tflop_s() const;
  // "sm_90a" for 9.0, "sm_100a" for 10.0, else "sm_<major><minor>".
  std::string arch() const;
};

// unsupported when no CUDA device is visible.
util::Expected<LiveDevice> read_live_device(int cuda_device = 0);

// A Markdown section: one row per parameter with its live value.
std::string render_live_device(const LiveDevice& device);

} // namespace ptxbench::measure
