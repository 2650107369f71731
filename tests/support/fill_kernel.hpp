// A candidate for the tests that run the real static check: it builds in seconds and passes the
// check, but would be wrong on a GPU.
#pragma once

#include <string>
#include <string_view>

namespace ptxbench::test_support {

// A kernel with the GEMM problem's exact signature that zero-fills C. `marker` makes the source,
// and so its compile, unique.
inline std::string fill_kernel(std::string_view marker) {
  return "#include <cuda_bf16.h>\n#include <cuda_runtime.h>\n#include <cstdint>\n// " +
         std::string(marker) +
         "\n__global__ void fill(__nv_bfloat16* C, int64_t n) {\n"
         "  int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;\n"
         "  if (i < n) C[i] = __float2bfloat16(0.0f);\n}\n"
         "void run(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int64_t M,\n"
         "         cudaStream_t stream) {\n"
         "  int64_t n = M * 7168;\n"
         "  fill<<<unsigned((n + 255) / 256), 256, 0, stream>>>(C, n);\n}\n";
}

} // namespace ptxbench::test_support
