// Standalone check and timing of the expert attention forward kernels (examples/sm90a/mha_*):
// builds one binary per example (the example file is #included through FA3_EXAMPLE, so the
// kernel under test is byte-for-byte the candidate), runs it on seeded N(0, 1) bf16 inputs and
// compares O and LSE with a naive fp32 GPU reference using ptxbench's rule (an element fails iff
// |x - y| > 1e-2 and |x - y| > 1e-2 |y|; NaN fails). Small S values exercise the partial last
// K/V tile and the causal diagonal; the timing (CUDA events, no L2 flush, median of 20) is a
// quick look only: `ptxbench eval` is the measurement of record.
//
// Build: nvcc -std=c++20 -O3 -gencode arch=compute_90a,code=sm_90a -I. \
//          -DFA3_EXAMPLE='"examples/sm90a/mha_with_lse_d128.cu"' bench/expert_attention_driver.cu
// Run:   ./driver S [S ...]     (exit status 1 on any mismatch)
#include FA3_EXAMPLE

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define DRIVER_CUDA(call)                                                                          \
  do {                                                                                             \
    const cudaError_t err_ = (call);                                                               \
    if (err_ != cudaSuccess) {                                                                     \
      std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,                           \
                   cudaGetErrorString(err_));                                                      \
      std::exit(2);                                                                                \
    }                                                                                              \
  } while (0)

namespace {

constexpr int kRows = sm90_fa3::kBatch * sm90_fa3::kHeads;
constexpr int kDim = sm90_fa3::kHeadDim;

__device__ uint32_t hash_u32(uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  x ^= x >> 16;
  return x;
}

// Box-Muller normal from two hashed uniforms; `seed` separates Q, K and V.
__global__ void fill_normal(__nv_bfloat16* x, int64_t n, uint32_t seed) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    const uint32_t a = hash_u32(uint32_t(i) * 2654435761U ^ seed);
    const uint32_t b = hash_u32(a ^ 0x9e3779b9U ^ uint32_t(i >> 32));
    const float u1 = (a + 1.0f) / 4294967297.0f, u2 = b / 4294967296.0f;
    x[i] = __float2bfloat16(sqrtf(-2.0f * logf(u1)) * cospif(2.0f * u2));
  }
}

// One block of kDim threads per (b*h, query row); logits in dynamic shared memory.
__global__ void naive_attention(const __nv_bfloat16* Q, const __nv_bfloat16* K,
                                const __nv_bfloat16* V, float* O, float* lse, int S, bool causal) {
  extern __shared__ float logits[];
  __shared__ float red[kDim];
  const int64_t head = blockIdx.y, row = blockIdx.x;
  const __nv_bfloat16* q = Q + (head * S + row) * kDim;
  for (int key = threadIdx.x; key < S; key += blockDim.x) {
    const __nv_bfloat16* k = K + (head * S + key) * kDim;
    float dot = 0.0f;
    for (int d = 0; d < kDim; ++d)
      dot += __bfloat162float(q[d]) * __bfloat162float(k[d]);
    logits[key] = causal && key > row ? -INFINITY : dot / sqrtf(float(kDim));
  }
  __syncthreads();
  float mx = -INFINITY;
  for (int key = threadIdx.x; key < S; key += blockDim.x)
    mx = fmaxf(mx, logits[key]);
  red[threadIdx.x] = mx;
  __syncthreads();
  mx = -INFINITY;
  for (int i = 0; i < kDim; ++i)
    mx = fmaxf(mx, red[i]);
  float sum = 0.0f, acc = 0.0f;
  for (int key = 0; key < S; ++key) {
    const float p = expf(logits[key] - mx);
    sum += p;
    acc += p * __bfloat162float(V[(head * S + key) * kDim + threadIdx.x]);
  }
  O[(head * S + row) * kDim + threadIdx.x] = acc / sum;
  if (threadIdx.x == 0)
    lse[head * S + row] = mx + logf(sum);
}

struct Mismatch {
  int64_t bad = 0;
  double max_abs = 0.0;
};

Mismatch compare(const std::vector<float>& got, const std::vector<float>& want) {
  Mismatch m;
  for (size_t i = 0; i < got.size(); ++i) {
    const double diff = std::fabs(double(got[i]) - double(want[i]));
    if (!(diff <= 1e-2 || diff <= 1e-2 * std::fabs(double(want[i]))))
      ++m.bad;
    if (diff > m.max_abs || std::isnan(diff))
      m.max_abs = diff;
  }
  return m;
}

bool check_and_time(int S) {
  const int64_t n = int64_t(kRows) * S * kDim;
  __nv_bfloat16 *q, *k, *v, *o;
  float *lse, *o_ref, *lse_ref;
  DRIVER_CUDA(cudaMalloc(&q, n * 2));
  DRIVER_CUDA(cudaMalloc(&k, n * 2));
  DRIVER_CUDA(cudaMalloc(&v, n * 2));
  DRIVER_CUDA(cudaMalloc(&o, n * 2));
  DRIVER_CUDA(cudaMalloc(&lse, int64_t(kRows) * S * 4));
  DRIVER_CUDA(cudaMalloc(&o_ref, n * 4));
  DRIVER_CUDA(cudaMalloc(&lse_ref, int64_t(kRows) * S * 4));
  fill_normal<<<1024, 256>>>(q, n, 0x1234u);
  fill_normal<<<1024, 256>>>(k, n, 0x5678u);
  fill_normal<<<1024, 256>>>(v, n, 0x9abcu);
  DRIVER_CUDA(cudaMemset(o, 0xff, n * 2));
  DRIVER_CUDA(cudaMemset(lse, 0xff, int64_t(kRows) * S * 4));
  run(q, k, v, o, lse, S, nullptr);
  DRIVER_CUDA(cudaGetLastError());
  DRIVER_CUDA(cudaDeviceSynchronize());
  bool ok = true;
  if (S <= 2048) {
    DRIVER_CUDA(
        cudaFuncSetAttribute(naive_attention, cudaFuncAttributeMaxDynamicSharedMemorySize, S * 4));
    naive_attention<<<dim3(S, kRows), kDim, S * 4>>>(q, k, v, o_ref, lse_ref, S, kCausal);
    DRIVER_CUDA(cudaGetLastError());
    DRIVER_CUDA(cudaDeviceSynchronize());
    std::vector<__nv_bfloat16> o_bits(n);
    std::vector<float> o_got(n), o_want(n), lse_got(int64_t(kRows) * S), lse_want(lse_got.size());
    DRIVER_CUDA(cudaMemcpy(o_bits.data(), o, n * 2, cudaMemcpyDeviceToHost));
    DRIVER_CUDA(cudaMemcpy(o_want.data(), o_ref, n * 4, cudaMemcpyDeviceToHost));
    DRIVER_CUDA(cudaMemcpy(lse_got.data(), lse, lse_got.size() * 4, cudaMemcpyDeviceToHost));
    DRIVER_CUDA(cudaMemcpy(lse_want.data(), lse_ref, lse_got.size() * 4, cudaMemcpyDeviceToHost));
    for (int64_t i = 0; i < n; ++i)
      o_got[i] = __bfloat162float(o_bits[i]);
    const Mismatch mo = compare(o_got, o_want), ml = compare(lse_got, lse_want);
    ok = mo.bad == 0 && ml.bad == 0;
    std::printf("S=%d causal=%d  O: %lld bad, max |err| %.3g   LSE: %lld bad, max |err| %.3g  %s\n",
                S, int(kCausal), static_cast<long long>(mo.bad), mo.max_abs,
                static_cast<long long>(ml.bad), ml.max_abs, ok ? "OK" : "FAIL");
  }
  cudaEvent_t start, stop;
  DRIVER_CUDA(cudaEventCreate(&start));
  DRIVER_CUDA(cudaEventCreate(&stop));
  std::vector<float> ms;
  for (int it = 0; it < 25; ++it) {
    DRIVER_CUDA(cudaEventRecord(start));
    run(q, k, v, o, lse, S, nullptr);
    DRIVER_CUDA(cudaEventRecord(stop));
    DRIVER_CUDA(cudaEventSynchronize(stop));
    float t = 0.0f;
    DRIVER_CUDA(cudaEventElapsedTime(&t, start, stop));
    if (it >= 5)
      ms.push_back(t);
  }
  std::sort(ms.begin(), ms.end());
  const double flops = 4.0 * kRows * double(S) * S * kDim * (kCausal ? 0.5 : 1.0);
  std::printf("S=%d causal=%d  median %.4f ms  %.0f TFLOP/s\n", S, int(kCausal), ms[ms.size() / 2],
              flops / (ms[ms.size() / 2] * 1e-3) / 1e12);
  for (void* p :
       {static_cast<void*>(q), static_cast<void*>(k), static_cast<void*>(v), static_cast<void*>(o),
        static_cast<void*>(lse), static_cast<void*>(o_ref), static_cast<void*>(lse_ref)})
    DRIVER_CUDA(cudaFree(p));
  return ok;
}

} // namespace

int main(int argc, char** argv) {
  bool ok = true;
  for (int i = 1; i < argc; ++i)
    ok = check_and_time(std::atoi(argv[i])) && ok;
  return ok ? 0 : 1;
}
