// Test candidate for gemm_n7168_k5120 with the wrong `run` signature (float instead of bf16):
// the ABI shim fails to link it, so the evaluator reports COMPILE_ERROR naming the expected
// signature.
#include <cuda_runtime.h>

#include <cstdint>

void run(const float* A, const float* B, float* C, int64_t M, cudaStream_t stream) {
  (void)A, (void)B, (void)C, (void)M, (void)stream;
}
