// Shared pieces of the measure GPU tests: the two GEMM candidates (N=7168, K=5120), device
// buffers, and a place to save raw tool outputs as parser fixtures.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <fstream>
#include <string>

void sm90_wgmma_tma_gemm_run(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C,
                             int64_t M, cudaStream_t stream);
void simt_gemm_run(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int64_t M,
                   cudaStream_t stream);

namespace ptxbench::measure::testing {

inline constexpr std::int64_t kGemmN = 7168;
inline constexpr std::int64_t kGemmK = 5120;

// Move-only device allocation filled with one byte value (0x3c3c = bf16 0.0115).
class DeviceBuffer {
public:
  explicit DeviceBuffer(std::size_t bytes, int fill = 0x3c) : m_bytes(bytes) {
    if (cudaMalloc(&m_data, bytes) != cudaSuccess || cudaMemset(m_data, fill, bytes) != cudaSuccess)
      std::abort();
  }
  DeviceBuffer(DeviceBuffer&& other) noexcept : m_data(other.m_data), m_bytes(other.m_bytes) {
    other.m_data = nullptr;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  ~DeviceBuffer() { cudaFree(m_data); }
  template <typename T> T* as() const { return static_cast<T*>(m_data); }
  std::size_t bytes() const { return m_bytes; }

private:
  void* m_data = nullptr;
  std::size_t m_bytes = 0;
};

struct GemmBuffers {
  explicit GemmBuffers(std::int64_t m)
      : M(m), a(std::size_t(m * kGemmK) * 2), b(std::size_t(kGemmN * kGemmK) * 2),
        c(std::size_t(m * kGemmN) * 2) {}
  std::int64_t M;
  DeviceBuffer a, b, c;
};

// Saves `text` as `name` under $PTXBENCH_MEASURE_FIXTURE_OUT when it is set.
inline void save_fixture(const std::string& name, const std::string& text) {
  const char* dir = std::getenv("PTXBENCH_MEASURE_FIXTURE_OUT");
  if (dir == nullptr)
    return;
  std::ofstream(std::string(dir) + "/" + name) << text;
}

} // namespace ptxbench::measure::testing
