// Test harness of the knowledge-pack GPU tests: a case registry, a CUDA check macro that throws,
// a device buffer that frees itself, and helpers shared by the cases. main.cu runs every case in
// a forked child so that a trap or a sticky CUDA error fails only that case.
#pragma once

#include "knowledge/sm90a/mbarrier.cuh"

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <cuda.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <stdexcept>
#include <string>
#include <vector>

namespace kp {

// A case returns an empty string on success, else what went wrong.
using CaseFn = std::string (*)();

struct Case {
  const char* name;
  CaseFn fn;
};

std::vector<Case>& registry();

struct Register {
  Register(const char* name, CaseFn fn) { registry().push_back({name, fn}); }
};

[[noreturn]] void fail_call(const char* lib, const char* file, int line, const char* call,
                            const char* error);

#define KP_CUDA(call)                                                                              \
  do {                                                                                             \
    const cudaError_t kp_err = (call);                                                             \
    if (kp_err != cudaSuccess)                                                                     \
      ::kp::fail_call("cudart", __FILE__, __LINE__, #call, cudaGetErrorName(kp_err));              \
  } while (0)

#define KP_CU(call)                                                                                \
  do {                                                                                             \
    const CUresult kp_res = (call);                                                                \
    if (kp_res != CUDA_SUCCESS)                                                                    \
      ::kp::fail_call("driver", __FILE__, __LINE__, #call, std::to_string(kp_res).c_str());        \
  } while (0)

// Move-only device allocation (cudaMalloc).
template <typename T> class DeviceBuffer {
public:
  explicit DeviceBuffer(size_t count) : m_count(count) {
    KP_CUDA(cudaMalloc(&m_ptr, count * sizeof(T)));
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() { cudaFree(m_ptr); }

  T* get() const { return m_ptr; }
  void upload(const std::vector<T>& host) {
    KP_CUDA(cudaMemcpy(m_ptr, host.data(), host.size() * sizeof(T), cudaMemcpyHostToDevice));
  }
  std::vector<T> download() const {
    std::vector<T> host(m_count);
    KP_CUDA(cudaMemcpy(host.data(), m_ptr, m_count * sizeof(T), cudaMemcpyDeviceToHost));
    return host;
  }

private:
  T* m_ptr = nullptr;
  size_t m_count;
};

// bf16 bits of a float (round to nearest even) and back.
uint16_t bf16_bits(float f);
float bf16_value(uint16_t bits);

// Small integers (exact in bf16, exact sums in f32) from a fixed LCG.
std::vector<float> small_ints(size_t count, uint32_t seed, int span);

// Synchronize and turn a kernel fault into a message.
std::string sync_kernel(const char* what);

constexpr uint64_t kWaitTimeoutNs = 2'000'000'000;

// Bounded mbarrier wait for tests: a timeout traps, which fails the case instead of hanging.
// No printf here: a call inside a wgmma loop makes ptxas serialize the wgmmas (C7510).
__device__ __forceinline__ void wait_or_trap(uint32_t bar, uint32_t parity) {
  if (!sm90::mbar_wait_bounded(bar, parity, kWaitTimeoutNs)) {
    __trap();
  }
}

// Same for barriers completed from other CTAs of the cluster (acquire at cluster scope).
__device__ __forceinline__ void wait_cluster_or_trap(uint32_t bar, uint32_t parity) {
  const uint64_t start = sm90::global_timer_ns();
  while (!sm90::mbar_try_wait_cluster(bar, parity)) {
    if (sm90::global_timer_ns() - start > kWaitTimeoutNs) {
      __trap();
    }
  }
}

} // namespace kp
