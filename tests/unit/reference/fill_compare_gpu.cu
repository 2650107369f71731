#include "device_support.hpp"
#include "suite/philox.hpp"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <cuda_bf16.h>

namespace ptxbench::reference::testing {
namespace {

__global__ void fill_bf16_kernel(std::uint16_t* data, std::int64_t count, std::uint64_t seed,
                                 std::uint32_t tensor_index, bool spiky) {
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= count)
    return;
  const auto element = static_cast<std::uint64_t>(i);
  const float value = spiky ? suite::spiky_value(seed, tensor_index, element)
                            : suite::normal_value(seed, tensor_index, element);
  data[i] = suite::bf16_bits(value);
}

struct Totals {
  unsigned long long failures;
  unsigned int max_abs_bits; // non-negative float bits order like the floats
};

__device__ void judge(float x, float y, double atol, double rtol, Totals* totals) {
  const float diff = fabsf(x - y);
  bool fail = false;
  if (!isfinite(x) || !isfinite(y))
    fail = !(x == y);
  else
    fail = diff > atol && diff > rtol * fabsf(y);
  if (fail)
    atomicAdd(&totals->failures, 1ull);
  if (isfinite(diff))
    atomicMax(&totals->max_abs_bits, __float_as_uint(diff));
}

template <typename T>
__global__ void compare_kernel(const T* x, const T* y, std::int64_t count, double atol, double rtol,
                               Totals* totals) {
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= count)
    return;
  if constexpr (sizeof(T) == 2)
    judge(__bfloat162float(x[i]), __bfloat162float(y[i]), atol, rtol, totals);
  else
    judge(x[i], y[i], atol, rtol, totals);
}

unsigned blocks_for(std::int64_t count) {
  return static_cast<unsigned>((count + 255) / 256);
}

template <typename T>
Comparison compare(const T* x, const T* y, std::int64_t count, double atol, double rtol) {
  DeviceBuffer totals(sizeof(Totals));
  PTXBENCH_CUDA_CHECK(cudaMemset(totals.get(), 0, sizeof(Totals)));
  compare_kernel<<<blocks_for(count), 256>>>(x, y, count, atol, rtol, totals.as<Totals>());
  PTXBENCH_CUDA_CHECK(cudaGetLastError());
  const Totals host = to_host<Totals>(totals.get(), 1)[0];
  float max_abs = 0.0f;
  std::memcpy(&max_abs, &host.max_abs_bits, sizeof max_abs);
  return Comparison{count, static_cast<std::int64_t>(host.failures), max_abs};
}

} // namespace

void fill_bf16(void* data, std::int64_t count, std::uint64_t seed, std::uint32_t tensor_index,
               Values values) {
  fill_bf16_kernel<<<blocks_for(count), 256>>>(static_cast<std::uint16_t*>(data), count, seed,
                                               tensor_index, values == Values::spiky);
  PTXBENCH_CUDA_CHECK(cudaGetLastError());
}

Comparison compare_bf16(const void* x, const void* y, std::int64_t count, double atol,
                        double rtol) {
  return compare(static_cast<const __nv_bfloat16*>(x), static_cast<const __nv_bfloat16*>(y), count,
                 atol, rtol);
}

Comparison compare_f32(const float* x, const float* y, std::int64_t count, double atol,
                       double rtol) {
  return compare(x, y, count, atol, rtol);
}

std::string Comparison::describe() const {
  char text[160];
  std::snprintf(text, sizeof text, "%lld of %lld elements outside atol=rtol=1e-2, max |x-y| = %.4g",
                static_cast<long long>(failures), static_cast<long long>(count), max_abs);
  return text;
}

float bf16_to_float(std::uint16_t bits) {
  const std::uint32_t widened = static_cast<std::uint32_t>(bits) << 16;
  float value = 0.0f;
  std::memcpy(&value, &widened, sizeof value);
  return value;
}

} // namespace ptxbench::reference::testing
