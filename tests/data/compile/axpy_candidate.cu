// A minimal correct candidate for the test definition `axpy`:
// inputs x float32 [N], alpha float32 scalar; output y float32 [N]; var axis N.
#include <cuda_runtime.h>
#include <cstdint>

namespace {
template <int kBlock> __global__ void axpy_kernel(const float* x, float alpha, float* y, int64_t n) {
  __shared__ float tile[kBlock];
  int64_t i = static_cast<int64_t>(blockIdx.x) * kBlock + threadIdx.x;
  tile[threadIdx.x] = i < n ? x[i] : 0.0f;
  __syncthreads();
  if (i < n) y[i] = alpha * tile[threadIdx.x] + y[i];
}
} // namespace

void run(const float* x, float alpha, float* y, int64_t N, cudaStream_t stream) {
  constexpr int kBlock = 128;
  unsigned blocks = static_cast<unsigned>((N + kBlock - 1) / kBlock);
  axpy_kernel<kBlock><<<blocks, kBlock, 0, stream>>>(x, alpha, y, N);
}
