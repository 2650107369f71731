#include "cuda/check.hpp"
#include "exec/gpu_ops.hpp"
#include "suite/philox.hpp"
#include "trace/json_io.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <cuda_fp16.h>
#include <limits>

namespace ptxbench::exec {
namespace {

constexpr int kThreads = 256;

unsigned grid_for(std::size_t work_items) {
  const std::size_t blocks = (work_items + kThreads - 1) / kThreads;
  return static_cast<unsigned>(std::clamp<std::size_t>(blocks, 1, 132 * 32));
}

enum class OutKind : int { bf16 = 0, f16 = 1, f32 = 2 };

__device__ void store_value(void* out, OutKind kind, std::size_t i, float value) {
  if (kind == OutKind::bf16)
    static_cast<std::uint16_t*>(out)[i] = suite::bf16_bits(value);
  else if (kind == OutKind::f16)
    static_cast<__half*>(out)[i] = __float2half_rn(value);
  else
    static_cast<float*>(out)[i] = value;
}

__global__ void fill_random_kernel(void* out, OutKind kind, bool spiky, std::uint64_t seed,
                                   std::uint32_t tensor_index, std::size_t count) {
  const std::size_t blocks = (count + 3) / 4;
  for (std::size_t b = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; b < blocks;
       b += std::size_t(gridDim.x) * blockDim.x) {
    const suite::Normal4 values = spiky ? suite::spiky_block(seed, tensor_index, b)
                                        : suite::normal_block(seed, tensor_index, b);
    for (int lane = 0; lane < 4; ++lane)
      if (4 * b + lane < count)
        store_value(out, kind, 4 * b + lane, values.value[lane]);
  }
}

__device__ std::uint64_t mix64(std::uint64_t x) {
  x ^= x >> 30;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 27;
  x *= 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

__global__ void checksum_kernel(const unsigned char* data, std::size_t bytes,
                                unsigned long long* digest) {
  const std::size_t words = bytes / 8;
  std::uint64_t sum = 0;
  const std::size_t stride = std::size_t(gridDim.x) * blockDim.x;
  const std::size_t first = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x;
  for (std::size_t w = first; w < words; w += stride)
    sum += mix64(reinterpret_cast<const std::uint64_t*>(data)[w] ^ (w * 0x9E3779B97F4A7C15ull));
  for (std::size_t b = 8 * words + first; b < bytes; b += stride)
    sum += mix64(std::uint64_t(data[b]) ^ (b * 0xD6E8FEB86659FD93ull) ^ 0x5555ull);
  atomicAdd(digest, static_cast<unsigned long long>(sum));
}

struct DeviceStats {
  unsigned long long failed, nan, inf, reference_nonfinite;
  unsigned int max_abs_bits, max_rel_bits;
};

__device__ float load_value(const void* data, OutKind kind, std::size_t i) {
  if (kind == OutKind::bf16)
    return suite::bf16_to_float(static_cast<const std::uint16_t*>(data)[i]);
  if (kind == OutKind::f16)
    return __half2float(static_cast<const __half*>(data)[i]);
  return static_cast<const float*>(data)[i];
}

struct ThreadStats {
  unsigned long long failed = 0, nan = 0, inf = 0, reference_nonfinite = 0;
  float max_abs = 0.0f, max_rel = 0.0f;

  __device__ void add(const ElementVerdict& verdict) {
    failed += verdict.klass != ElementClass::pass;
    nan += verdict.klass == ElementClass::fail_candidate_nan;
    inf += verdict.klass == ElementClass::fail_candidate_inf;
    reference_nonfinite += verdict.klass == ElementClass::fail_reference_nonfinite;
    max_abs = fmaxf(max_abs, verdict.abs_error);
    max_rel = fmaxf(max_rel, verdict.rel_error);
  }
};

__device__ void publish(ThreadStats stats, DeviceStats* out) {
  for (int offset = 16; offset > 0; offset /= 2) {
    stats.failed += __shfl_down_sync(0xffffffffu, stats.failed, offset);
    stats.nan += __shfl_down_sync(0xffffffffu, stats.nan, offset);
    stats.inf += __shfl_down_sync(0xffffffffu, stats.inf, offset);
    stats.reference_nonfinite += __shfl_down_sync(0xffffffffu, stats.reference_nonfinite, offset);
    stats.max_abs = fmaxf(stats.max_abs, __shfl_down_sync(0xffffffffu, stats.max_abs, offset));
    stats.max_rel = fmaxf(stats.max_rel, __shfl_down_sync(0xffffffffu, stats.max_rel, offset));
  }
  if (threadIdx.x % 32 != 0)
    return;
  if (stats.failed)
    atomicAdd(&out->failed, stats.failed);
  if (stats.nan)
    atomicAdd(&out->nan, stats.nan);
  if (stats.inf)
    atomicAdd(&out->inf, stats.inf);
  if (stats.reference_nonfinite)
    atomicAdd(&out->reference_nonfinite, stats.reference_nonfinite);
  // Non-negative floats order like their bit patterns.
  atomicMax(&out->max_abs_bits, __float_as_uint(stats.max_abs));
  atomicMax(&out->max_rel_bits, __float_as_uint(stats.max_rel));
}

__global__ void compare_kernel(const void* candidate, const void* reference, OutKind kind,
                               std::size_t count, Tolerance tolerance, DeviceStats* out) {
  ThreadStats stats;
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < count;
       i += std::size_t(gridDim.x) * blockDim.x)
    stats.add(
        judge_element(load_value(candidate, kind, i), load_value(reference, kind, i), tolerance));
  publish(stats, out);
}

__global__ void compare_bytes_kernel(const unsigned char* candidate, const unsigned char* reference,
                                     std::size_t bytes, DeviceStats* out) {
  ThreadStats stats;
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < bytes;
       i += std::size_t(gridDim.x) * blockDim.x)
    stats.failed += candidate[i] != reference[i];
  publish(stats, out);
}

bool out_kind(trace::DType dtype, OutKind& kind) {
  switch (dtype) {
  case trace::DType::bfloat16:
    kind = OutKind::bf16;
    return true;
  case trace::DType::float16:
    kind = OutKind::f16;
    return true;
  case trace::DType::float32:
    kind = OutKind::f32;
    return true;
  default:
    return false;
  }
}

float from_bits(unsigned bits) {
  float value = 0.0f;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

} // namespace

util::Status fill_random(void* out, const RandomFill& fill, cudaStream_t stream) {
  OutKind kind{};
  const bool spiky = fill.distribution == suite::Distribution::spiky;
  if (!out_kind(fill.dtype, kind) || (!spiky && fill.distribution != suite::Distribution::normal))
    return util::make_error(util::ErrorKind::invalid_input,
                            "no GPU generator for " + std::string(to_string(fill.distribution)) +
                                " " + std::string(trace::to_string(fill.dtype)));
  fill_random_kernel<<<grid_for((fill.element_count + 3) / 4), kThreads, 0, stream>>>(
      out, kind, spiky, fill.seed, fill.tensor_index, fill.element_count);
  PTXBENCH_CUDA_CHECK(cudaGetLastError());
  return util::Ok{};
}

void fill_sentinel(void* out, std::size_t bytes, cudaStream_t stream) {
  PTXBENCH_CUDA_CHECK(cudaMemsetAsync(out, kSentinelByte, bytes, stream));
}

std::uint64_t checksum(const void* data, std::size_t bytes, cudaStream_t stream) {
  unsigned long long* digest = nullptr;
  PTXBENCH_CUDA_CHECK(cudaMallocAsync(&digest, sizeof *digest, stream));
  PTXBENCH_CUDA_CHECK(cudaMemsetAsync(digest, 0, sizeof *digest, stream));
  checksum_kernel<<<grid_for(bytes / 8 + 1), kThreads, 0, stream>>>(
      static_cast<const unsigned char*>(data), bytes, digest);
  PTXBENCH_CUDA_CHECK(cudaGetLastError());
  unsigned long long host = 0;
  PTXBENCH_CUDA_CHECK(cudaMemcpyAsync(&host, digest, sizeof host, cudaMemcpyDeviceToHost, stream));
  PTXBENCH_CUDA_CHECK(cudaFreeAsync(digest, stream));
  PTXBENCH_CUDA_CHECK(cudaStreamSynchronize(stream));
  return host;
}

CompareStats compare_outputs(const void* candidate, const void* reference, trace::DType dtype,
                             std::size_t count, Tolerance tolerance, cudaStream_t stream) {
  DeviceStats* device = nullptr;
  PTXBENCH_CUDA_CHECK(cudaMallocAsync(&device, sizeof *device, stream));
  PTXBENCH_CUDA_CHECK(cudaMemsetAsync(device, 0, sizeof *device, stream));
  OutKind kind{};
  if (out_kind(dtype, kind)) {
    compare_kernel<<<grid_for(count), kThreads, 0, stream>>>(candidate, reference, kind, count,
                                                             tolerance, device);
  } else {
    count = count * trace::dtype_bits(dtype) / 8;
    compare_bytes_kernel<<<grid_for(count), kThreads, 0, stream>>>(
        static_cast<const unsigned char*>(candidate), static_cast<const unsigned char*>(reference),
        count, device);
  }
  PTXBENCH_CUDA_CHECK(cudaGetLastError());
  DeviceStats host{};
  PTXBENCH_CUDA_CHECK(cudaMemcpyAsync(&host, device, sizeof host, cudaMemcpyDeviceToHost, stream));
  PTXBENCH_CUDA_CHECK(cudaFreeAsync(device, stream));
  PTXBENCH_CUDA_CHECK(cudaStreamSynchronize(stream));
  CompareStats stats;
  stats.elements = count;
  stats.failed = host.failed;
  stats.candidate_nan = host.nan;
  stats.candidate_inf = host.inf;
  stats.reference_nonfinite = host.reference_nonfinite;
  stats.max_abs_error = from_bits(host.max_abs_bits);
  stats.max_rel_error = from_bits(host.max_rel_bits);
  return stats;
}

} // namespace ptxbench::exec
