// A/A candidate for mha_with_lse_d128 (bench/aa_speedup.cpp): the cuDNN SDPA forward baseline
// itself, reached through the hook that only ptxbench-candidate-aa exports
// (bench/aa_baseline_hook.cpp); an ordinary candidate in every other respect.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

extern "C" __attribute__((weak)) int
ptxbench_aa_baseline_run(const char* problem, void* const* buffers, unsigned num_buffers,
                         const int64_t* var_axes, unsigned num_var_axes, void* stream);

void run(const __nv_bfloat16* Q, const __nv_bfloat16* K, const __nv_bfloat16* V, __nv_bfloat16* O,
         float* LSE, int64_t S, cudaStream_t stream) {
  if (ptxbench_aa_baseline_run == nullptr) {
    std::fprintf(stderr, "A/A candidate: run it with ptxbench-candidate-aa\n");
    std::abort();
  }
  void* const buffers[] = {const_cast<__nv_bfloat16*>(Q), const_cast<__nv_bfloat16*>(K),
                           const_cast<__nv_bfloat16*>(V), O, LSE};
  if (ptxbench_aa_baseline_run("mha_with_lse_d128", buffers, 5, &S, 1, stream) != 0)
    std::abort();
}
