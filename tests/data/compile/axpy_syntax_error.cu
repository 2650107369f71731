// Like axpy_candidate.cu with the semicolon missing at the end of line 6 (nvcc reports line 7).
#include <cuda_runtime.h>
#include <cstdint>

__global__ void axpy_kernel(const float* x, float alpha, float* y, int64_t n) {
  int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x
  if (i < n) y[i] = alpha * x[i] + y[i];
}

void run(const float* x, float alpha, float* y, int64_t N, cudaStream_t stream) {
  axpy_kernel<<<static_cast<unsigned>((N + 127) / 128), 128, 0, stream>>>(x, alpha, y, N);
}
