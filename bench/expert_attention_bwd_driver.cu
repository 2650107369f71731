// Standalone check and timing of the expert attention backward kernels
// (examples/sm90a/mha_bwd_d128*.cu): the example is #included through FA3_EXAMPLE, so the code
// under test is the candidate byte for byte. Inputs: Q, K, V, dO ~ N(0, 1) bf16 (with --spiky,
// plus N(0, 100), standard deviation 10, on 0.1 % of the elements, as the problem's workload);
// O and L from a naive fp32 forward. A naive fp32 backward (P and dS materialised, S <= 512)
// is the reference; the rule is ptxbench's (fail iff |x - y| > 1e-2 and |x - y| > 1e-2 |y|;
// NaN fails). Timing: CUDA events, no L2 flush, median of 20 — a quick look; `ptxbench eval`
// (which compares with cuDNN, not with this naive backward) is the measurement of record.
//
// Build: nvcc -std=c++20 -O3 -gencode arch=compute_90a,code=sm_90a -I. \
//          -DFA3_EXAMPLE='"examples/sm90a/mha_bwd_d128.cu"' bench/expert_attention_bwd_driver.cu
// Run:   ./driver [--spiky] S [S ...]     (exit status 1 on any mismatch)
#include FA3_EXAMPLE

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
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

constexpr int kRows = sm90_fa3_bwd::kBatch * sm90_fa3_bwd::kHeads;
constexpr int kDim = sm90_fa3_bwd::kHeadDim;

__device__ uint32_t hash_u32(uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  x ^= x >> 16;
  return x;
}

__device__ float normal_at(int64_t i, uint32_t seed, uint32_t salt) {
  const uint32_t a = hash_u32(uint32_t(i) * 2654435761U ^ seed ^ salt);
  const uint32_t b = hash_u32(a ^ 0x9e3779b9U ^ uint32_t(i >> 32));
  const float u1 = (a + 1.0f) / 4294967297.0f, u2 = b / 4294967296.0f;
  return sqrtf(-2.0f * logf(u1)) * cospif(2.0f * u2);
}

__global__ void fill_inputs(__nv_bfloat16* x, int64_t n, uint32_t seed, bool spiky) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    float v = normal_at(i, seed, 0);
    if (spiky && hash_u32(uint32_t(i) ^ seed ^ 0x51ed27u) % 1000u == 0)
      v += 10.0f * normal_at(i, seed, 0xabcdefu);
    x[i] = __float2bfloat16(v);
  }
}

// Naive forward: O (bf16) and L for every (head, query); logits in dynamic shared memory.
__global__ void naive_forward(const __nv_bfloat16* Q, const __nv_bfloat16* K,
                              const __nv_bfloat16* V, __nv_bfloat16* O, float* L, int S,
                              bool causal) {
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
  O[(head * S + row) * kDim + threadIdx.x] = __float2bfloat16(acc / sum);
  if (threadIdx.x == 0)
    L[head * S + row] = mx + logf(sum);
}

// P and dS rows of one (head, query): P = exp(scale q.k - L), dS = P (dO.v - rowsum(dO o O)).
__global__ void naive_p_ds(const __nv_bfloat16* Q, const __nv_bfloat16* K, const __nv_bfloat16* V,
                           const __nv_bfloat16* O, const __nv_bfloat16* dO, const float* L,
                           float* P, float* dS, int S, bool causal) {
  __shared__ float red[kDim];
  const int64_t head = blockIdx.y, row = blockIdx.x, r = head * S + row;
  red[threadIdx.x] =
      __bfloat162float(dO[r * kDim + threadIdx.x]) * __bfloat162float(O[r * kDim + threadIdx.x]);
  __syncthreads();
  float delta = 0.0f;
  for (int i = 0; i < kDim; ++i)
    delta += red[i];
  for (int key = threadIdx.x; key < S; key += blockDim.x) {
    const int64_t kr = head * S + key;
    float dot = 0.0f, dp = 0.0f;
    for (int d = 0; d < kDim; ++d) {
      dot += __bfloat162float(Q[r * kDim + d]) * __bfloat162float(K[kr * kDim + d]);
      dp += __bfloat162float(dO[r * kDim + d]) * __bfloat162float(V[kr * kDim + d]);
    }
    const float p = causal && key > row ? 0.0f : expf(dot / sqrtf(float(kDim)) - L[r]);
    P[r * S + key] = p;
    dS[r * S + key] = p * (dp - delta);
  }
}

// dQ[i] = scale sum_k dS[i,k] K[k]   (blockIdx.x = query)
// dK[k] = scale sum_i dS[i,k] Q[i], dV[k] = sum_i P[i,k] dO[i]   (blockIdx.x = key)
__global__ void naive_grads(const __nv_bfloat16* Q, const __nv_bfloat16* K, const __nv_bfloat16* dO,
                            const float* P, const float* dS, float* dQ, float* dK, float* dV,
                            int S) {
  const int64_t head = blockIdx.y, x = blockIdx.x, d = threadIdx.x;
  const float scale = 1.0f / sqrtf(float(kDim));
  float dq = 0.0f, dk = 0.0f, dv = 0.0f;
  for (int y = 0; y < S; ++y) {
    dq += dS[(head * S + x) * S + y] * __bfloat162float(K[(head * S + y) * kDim + d]);
    dk += dS[(head * S + y) * S + x] * __bfloat162float(Q[(head * S + y) * kDim + d]);
    dv += P[(head * S + y) * S + x] * __bfloat162float(dO[(head * S + y) * kDim + d]);
  }
  const int64_t out = (head * S + x) * kDim + d;
  dQ[out] = dq * scale;
  dK[out] = dk * scale;
  dV[out] = dv;
}

struct Mismatch {
  int64_t bad = 0;
  double max_abs = 0.0;
};

Mismatch compare(const __nv_bfloat16* got_dev, const float* want_dev, int64_t n) {
  std::vector<__nv_bfloat16> got(n);
  std::vector<float> want(n);
  DRIVER_CUDA(cudaMemcpy(got.data(), got_dev, n * 2, cudaMemcpyDeviceToHost));
  DRIVER_CUDA(cudaMemcpy(want.data(), want_dev, n * 4, cudaMemcpyDeviceToHost));
  Mismatch m;
  for (int64_t i = 0; i < n; ++i) {
    const double x = __bfloat162float(got[i]), y = want[i];
    const double diff = std::fabs(x - y);
    if (!(diff <= 1e-2 || diff <= 1e-2 * std::fabs(y)))
      ++m.bad;
    if (diff > m.max_abs || std::isnan(diff))
      m.max_abs = diff;
  }
  return m;
}

template <typename T> T* device_alloc(int64_t count) {
  T* p = nullptr;
  DRIVER_CUDA(cudaMalloc(&p, count * sizeof(T)));
  return p;
}

bool check_and_time(int S, bool spiky) {
  const int64_t n = int64_t(kRows) * S * kDim, rows = int64_t(kRows) * S;
  auto* q = device_alloc<__nv_bfloat16>(n);
  auto* k = device_alloc<__nv_bfloat16>(n);
  auto* v = device_alloc<__nv_bfloat16>(n);
  auto* o = device_alloc<__nv_bfloat16>(n);
  auto* dout = device_alloc<__nv_bfloat16>(n);
  auto* dq = device_alloc<__nv_bfloat16>(n);
  auto* dk = device_alloc<__nv_bfloat16>(n);
  auto* dv = device_alloc<__nv_bfloat16>(n);
  auto* lse = device_alloc<float>(rows);
  fill_inputs<<<1024, 256>>>(q, n, 0x1234u, spiky);
  fill_inputs<<<1024, 256>>>(k, n, 0x5678u, spiky);
  fill_inputs<<<1024, 256>>>(v, n, 0x9abcu, spiky);
  fill_inputs<<<1024, 256>>>(dout, n, 0xdef0u, spiky);
  DRIVER_CUDA(
      cudaFuncSetAttribute(naive_forward, cudaFuncAttributeMaxDynamicSharedMemorySize, S * 4));
  naive_forward<<<dim3(S, kRows), kDim, S * 4>>>(q, k, v, o, lse, S, kCausal);
  DRIVER_CUDA(cudaGetLastError());
  for (auto* p : {dq, dk, dv})
    DRIVER_CUDA(cudaMemset(p, 0xff, n * 2));
  run(q, k, v, o, dout, lse, dq, dk, dv, S, nullptr);
  DRIVER_CUDA(cudaGetLastError());
  DRIVER_CUDA(cudaDeviceSynchronize());
  bool ok = true;
  if (S <= 512) {
    auto* p = device_alloc<float>(rows * S);
    auto* ds = device_alloc<float>(rows * S);
    auto* rq = device_alloc<float>(n);
    auto* rk = device_alloc<float>(n);
    auto* rv = device_alloc<float>(n);
    naive_p_ds<<<dim3(S, kRows), kDim>>>(q, k, v, o, dout, lse, p, ds, S, kCausal);
    naive_grads<<<dim3(S, kRows), kDim>>>(q, k, dout, p, ds, rq, rk, rv, S);
    DRIVER_CUDA(cudaGetLastError());
    DRIVER_CUDA(cudaDeviceSynchronize());
    const Mismatch mq = compare(dq, rq, n), mk = compare(dk, rk, n), mv = compare(dv, rv, n);
    ok = mq.bad == 0 && mk.bad == 0 && mv.bad == 0;
    std::printf("S=%d causal=%d spiky=%d  dQ %lld bad (max %.3g)  dK %lld bad (max %.3g)  "
                "dV %lld bad (max %.3g)  %s\n",
                S, int(kCausal), int(spiky), static_cast<long long>(mq.bad), mq.max_abs,
                static_cast<long long>(mk.bad), mk.max_abs, static_cast<long long>(mv.bad),
                mv.max_abs, ok ? "OK" : "FAIL");
    for (void* ptr : {static_cast<void*>(p), static_cast<void*>(ds), static_cast<void*>(rq),
                      static_cast<void*>(rk), static_cast<void*>(rv)})
      DRIVER_CUDA(cudaFree(ptr));
  }
  cudaEvent_t start, stop;
  DRIVER_CUDA(cudaEventCreate(&start));
  DRIVER_CUDA(cudaEventCreate(&stop));
  std::vector<float> ms;
  for (int it = 0; it < 25; ++it) {
    DRIVER_CUDA(cudaEventRecord(start));
    run(q, k, v, o, dout, lse, dq, dk, dv, S, nullptr);
    DRIVER_CUDA(cudaEventRecord(stop));
    DRIVER_CUDA(cudaEventSynchronize(stop));
    float t = 0.0f;
    DRIVER_CUDA(cudaEventElapsedTime(&t, start, stop));
    if (it >= 5)
      ms.push_back(t);
  }
  DRIVER_CUDA(cudaGetLastError());
  std::sort(ms.begin(), ms.end());
  const double flops = 10.0 * kRows * double(S) * S * kDim * (kCausal ? 0.5 : 1.0);
  std::printf("S=%d causal=%d  median %.4f ms  %.0f TFLOP/s\n", S, int(kCausal), ms[ms.size() / 2],
              flops / (ms[ms.size() / 2] * 1e-3) / 1e12);
  for (void* ptr : {static_cast<void*>(q), static_cast<void*>(k), static_cast<void*>(v),
                    static_cast<void*>(o), static_cast<void*>(dout), static_cast<void*>(dq),
                    static_cast<void*>(dk), static_cast<void*>(dv), static_cast<void*>(lse)})
    DRIVER_CUDA(cudaFree(ptr));
  return ok;
}

} // namespace

int main(int argc, char** argv) {
  bool ok = true, spiky = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--spiky") == 0)
      spiky = true;
    else
      ok = check_and_time(std::atoi(argv[i]), spiky) && ok;
  }
  return ok ? 0 : 1;
}
