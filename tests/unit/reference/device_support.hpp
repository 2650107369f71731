// Device helpers of the reference GPU tests: seeded inputs and on-device comparison with the
// FlashInfer-Trace tolerance (an element fails iff |x−y| > atol and |x−y| > rtol·|y|; NaN/Inf in
// x fails unless it equals y). No suite headers, so nvcc compiles it cheaply.
#pragma once

#include "reference/library_check.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace ptxbench::reference::testing {

enum class Values : std::uint8_t { normal = 1, spiky = 2 };

// bf16 tensor element i = bf16(normal or spiky value(seed, tensor_index, i)).
void fill_bf16(void* data, std::int64_t count, std::uint64_t seed, std::uint32_t tensor_index,
               Values values);

struct Comparison {
  std::int64_t count = 0;
  std::int64_t failures = 0;
  double max_abs = 0.0;
  std::string describe() const;
};

// x is the tested output, y the expected one.
Comparison compare_bf16(const void* x, const void* y, std::int64_t count, double atol = 1e-2,
                        double rtol = 1e-2);
Comparison compare_f32(const float* x, const float* y, std::int64_t count, double atol = 1e-2,
                       double rtol = 1e-2);

template <typename T> std::vector<T> to_host(const void* data, std::int64_t count) {
  std::vector<T> host(static_cast<std::size_t>(count));
  PTXBENCH_CUDA_CHECK(
      cudaMemcpy(host.data(), data, host.size() * sizeof(T), cudaMemcpyDeviceToHost));
  return host;
}

float bf16_to_float(std::uint16_t bits);

} // namespace ptxbench::reference::testing
