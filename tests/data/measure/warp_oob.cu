// The program behind sanitizer_memcheck_warp_oob.txt (compute-sanitizer memcheck on an H200):
// one warp writes one element each past the end of a 32-element buffer, then the host calls
// the runtime a few times, each call returning the launch failure the sanitizer also reports.
#include <cuda_runtime.h>
#include <cstdio>

__global__ void warp_oob(int* data) { data[32 + threadIdx.x] = 1; }

int main() {
  int* data = nullptr;
  cudaMalloc(&data, 32 * sizeof(int));
  warp_oob<<<1, 32>>>(data);
  int host[32];
  std::printf("sync: %d\n", cudaDeviceSynchronize());
  std::printf("copy: %d\n", cudaMemcpy(host, data, sizeof host, cudaMemcpyDeviceToHost));
  std::printf("free: %d\n", cudaFree(data));
  return 0;
}
