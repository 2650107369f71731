// Quick GPU driver for tuning examples/sm90a/gemm_n7168_k5120.cu outside `ptxbench eval`
// (final numbers come from ptxbench eval, see bench/results/expert_kernels_h200.md).
//
// Problem: does a variant of the expert GEMM compute C = A·Bᵀ correctly for several M (tile
// multiples and ragged ones), and how long does one call take with a cold L2?
// Approach: the candidate file is #included (KERNEL_FILE, default the example), so `run` is
// called exactly as the harness calls it. Inputs are bf16 N(0,1) from a fixed-seed device hash.
// Correctness: a naive fp32 GPU GEMM computes every 7th row (51st for M >= 2048) and the last
// row in full width;
// each output must be within 0.05 + 0.01·|ref| of it. Timing: per call, a 256 MiB memset flushes
// L2 outside the timed window, then CUDA events around one `run`; 10 warm-up + 30 timed calls,
// median reported with the mean and min, as TFLOP/s too.
//
// Build (no GPU needed):
//   nvcc -std=c++20 -O3 -gencode arch=compute_90a,code=sm_90a -I. \
//        [-DKERNEL_FILE='"path/to/variant.cu"'] bench/expert_gemm_driver.cu -o expert_gemm_driver
// Run: ./expert_gemm_driver [M ...]   (default: 8192 1000 129 1)
#ifndef KERNEL_FILE
#define KERNEL_FILE "examples/sm90a/gemm_n7168_k5120.cu"
#endif
#include KERNEL_FILE

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define DRIVER_CHECK(call)                                                                         \
  do {                                                                                             \
    const cudaError_t e_ = (call);                                                                 \
    if (e_ != cudaSuccess) {                                                                       \
      std::fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(e_));   \
      std::exit(2);                                                                                \
    }                                                                                              \
  } while (0)

namespace driver {

constexpr int kN = 7168;
constexpr int kK = 5120;

__device__ float hash_normal(uint64_t i, uint32_t seed) {
  uint64_t x = i * 0x9E3779B97F4A7C15ull + seed;
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdull;
  x ^= x >> 33;
  const float u1 = ((x & 0xffffff) + 1) / 16777217.0f, u2 = ((x >> 24) & 0xffffff) / 16777216.0f;
  return sqrtf(-2.0f * logf(u1)) * cospif(2.0f * u2);
}

__global__ void fill(__nv_bfloat16* p, size_t n, uint32_t seed) {
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n;
       i += size_t(gridDim.x) * blockDim.x)
    p[i] = __float2bfloat16(hash_normal(i, seed));
}

// ref[i][n] = row rows[i] of A·Bᵀ in fp32; one warp per output, lanes split K (coalesced).
__global__ void reference(const __nv_bfloat16* a, const __nv_bfloat16* b, const int* rows,
                          float* ref) {
  const int n = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32, lane = threadIdx.x % 32;
  const int r = rows[blockIdx.y];
  float acc = 0.0f;
  for (int k = lane; k < kK; k += 32)
    acc += __bfloat162float(a[size_t(r) * kK + k]) * __bfloat162float(b[size_t(n) * kK + k]);
  for (int off = 16; off > 0; off /= 2)
    acc += __shfl_xor_sync(0xffffffffu, acc, off);
  if (lane == 0)
    ref[size_t(blockIdx.y) * kN + n] = acc;
}

bool check(int64_t m, const __nv_bfloat16* a, const __nv_bfloat16* b, __nv_bfloat16* c) {
  std::vector<int> rows;
  const int64_t stride = m < 2048 ? 7 : 51; // every 128-row tile gets at least two rows
  for (int64_t r = 0; r < m; r += stride)
    rows.push_back(int(r));
  if (rows.back() != m - 1)
    rows.push_back(int(m - 1));
  int* d_rows;
  float* d_ref;
  DRIVER_CHECK(cudaMalloc(&d_rows, rows.size() * sizeof(int)));
  DRIVER_CHECK(cudaMalloc(&d_ref, rows.size() * kN * sizeof(float)));
  DRIVER_CHECK(cudaMemcpy(d_rows, rows.data(), rows.size() * sizeof(int), cudaMemcpyHostToDevice));
  DRIVER_CHECK(cudaMemset(c, 0xff, size_t(m) * kN * 2)); // NaN sentinel, as the harness does
  run(a, b, c, m, nullptr);
  DRIVER_CHECK(cudaGetLastError());
  reference<<<dim3(kN / 8, unsigned(rows.size())), 256>>>(a, b, d_rows, d_ref);
  DRIVER_CHECK(cudaDeviceSynchronize());
  std::vector<float> ref(rows.size() * kN);
  std::vector<__nv_bfloat16> got(size_t(m) * kN);
  DRIVER_CHECK(cudaMemcpy(ref.data(), d_ref, ref.size() * 4, cudaMemcpyDeviceToHost));
  DRIVER_CHECK(cudaMemcpy(got.data(), c, got.size() * 2, cudaMemcpyDeviceToHost));
  size_t bad = 0;
  double max_err = 0;
  for (size_t i = 0; i < rows.size(); ++i)
    for (int n = 0; n < kN; ++n) {
      const float want = ref[i * kN + n];
      const float have = __bfloat162float(got[size_t(rows[i]) * kN + n]);
      const double err = std::fabs(double(have) - want);
      max_err = std::max(max_err, std::isnan(err) ? 1e30 : err);
      if (!(err <= 0.05 + 0.01 * std::fabs(want)) && bad++ < 3)
        std::printf("  mismatch C(%d,%d) = %g, want %g\n", rows[i], n, have, want);
    }
  std::printf("M=%-6lld check %zu rows: %s (bad %zu, max abs err %.4g)\n", (long long)m,
              rows.size(), bad == 0 ? "PASS" : "FAIL", bad, max_err);
  DRIVER_CHECK(cudaFree(d_rows));
  DRIVER_CHECK(cudaFree(d_ref));
  return bad == 0;
}

void time_calls(int64_t m, const __nv_bfloat16* a, const __nv_bfloat16* b, __nv_bfloat16* c) {
  constexpr size_t kFlushBytes = size_t(256) << 20;
  void* flush;
  DRIVER_CHECK(cudaMalloc(&flush, kFlushBytes));
  cudaEvent_t start, stop;
  DRIVER_CHECK(cudaEventCreate(&start));
  DRIVER_CHECK(cudaEventCreate(&stop));
  std::vector<float> ms;
  for (int i = 0; i < 40; ++i) {
    DRIVER_CHECK(cudaMemsetAsync(flush, i, kFlushBytes));
    DRIVER_CHECK(cudaEventRecord(start));
    run(a, b, c, m, nullptr);
    DRIVER_CHECK(cudaEventRecord(stop));
    DRIVER_CHECK(cudaEventSynchronize(stop));
    float t;
    DRIVER_CHECK(cudaEventElapsedTime(&t, start, stop));
    if (i >= 10)
      ms.push_back(t);
  }
  std::sort(ms.begin(), ms.end());
  double mean = 0;
  for (float t : ms)
    mean += t / ms.size();
  const double median = (ms[ms.size() / 2 - 1] + ms[ms.size() / 2]) / 2;
  const double flop = 2.0 * double(m) * kN * kK;
  std::printf("M=%-6lld time median %.4f ms  mean %.4f  min %.4f  -> %.0f TFLOP/s\n", (long long)m,
              median, mean, ms.front(), flop / median / 1e9);
  DRIVER_CHECK(cudaFree(flush));
}

} // namespace driver

int main(int argc, char** argv) {
  std::vector<int64_t> ms;
  for (int i = 1; i < argc; ++i)
    ms.push_back(std::atoll(argv[i]));
  if (ms.empty())
    ms = {8192, 1000, 129, 1};
  const int64_t max_m = *std::max_element(ms.begin(), ms.end());
  __nv_bfloat16 *a, *b, *c;
  DRIVER_CHECK(cudaMalloc(&a, size_t(max_m) * driver::kK * 2));
  DRIVER_CHECK(cudaMalloc(&b, size_t(driver::kN) * driver::kK * 2));
  DRIVER_CHECK(cudaMalloc(&c, size_t(max_m) * driver::kN * 2));
  driver::fill<<<1024, 256>>>(a, size_t(max_m) * driver::kK, 1);
  driver::fill<<<1024, 256>>>(b, size_t(driver::kN) * driver::kK, 2);
  bool ok = true;
  for (int64_t m : ms)
    ok = driver::check(m, a, b, c) && ok;
  for (int64_t m : ms)
    if (m >= 1024)
      driver::time_calls(m, a, b, c);
  return ok ? 0 : 1;
}
