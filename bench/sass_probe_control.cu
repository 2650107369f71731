// The SASS Metrics probe's control kernel (bench/sass_metrics_probe.cpp): a plain loop with no
// tensor-core instruction, to tell "instrumentation counts nothing" from "instrumentation does
// not count the wgmma kernel".
#include <cuda_runtime.h>

namespace {

__global__ void sass_probe_control_kernel(int* out, int rounds) {
  int value = static_cast<int>(threadIdx.x);
  for (int i = 0; i < rounds; ++i)
    value = value * 3 + i;
  out[blockIdx.x * blockDim.x + threadIdx.x] = value;
}

} // namespace

// 132 blocks of 128 threads (4 warps each), `rounds` loop iterations per thread.
void sass_probe_control(int* out, int rounds, cudaStream_t stream) {
  sass_probe_control_kernel<<<132, 128, 0, stream>>>(out, rounds);
}
