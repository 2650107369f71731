// A/A candidate for gemm_n7168_k5120 (bench/aa_speedup.cpp): the library baseline itself,
// reached through the hook that only the benchmark's child binary, ptxbench-candidate-aa,
// exports (bench/aa_baseline_hook.cpp). Everything else is an ordinary candidate: compiled
// with the shim, run in the child, timed there by CUPTI, interleaved with the reference.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

extern "C" __attribute__((weak)) int
ptxbench_aa_baseline_run(const char* problem, void* const* buffers, unsigned num_buffers,
                         const int64_t* var_axes, unsigned num_var_axes, void* stream);

void run(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int64_t M,
         cudaStream_t stream) {
  if (ptxbench_aa_baseline_run == nullptr) {
    std::fprintf(stderr, "A/A candidate: run it with ptxbench-candidate-aa\n");
    std::abort();
  }
  void* const buffers[] = {const_cast<__nv_bfloat16*>(A), const_cast<__nv_bfloat16*>(B), C};
  if (ptxbench_aa_baseline_run("gemm_n7168_k5120", buffers, 3, &M, 1, stream) != 0)
    std::abort();
}
