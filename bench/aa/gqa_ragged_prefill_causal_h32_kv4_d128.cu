// A/A candidate for gqa_ragged_prefill_causal_h32_kv4_d128 (bench/aa_speedup.cpp): the GQA
// baseline itself (FlashInfer's FA3 ragged prefill, planned for the workload), reached through
// the hook that only ptxbench-candidate-aa exports (bench/aa_baseline_hook.cpp).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

extern "C" __attribute__((weak)) int
ptxbench_aa_baseline_run_f32(const char* problem, void* const* buffers, unsigned num_buffers,
                             const float* scalars, unsigned num_scalars, const int64_t* var_axes,
                             unsigned num_var_axes, void* stream);

void run(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v,
         const int32_t* qo_indptr, const int32_t* kv_indptr, float sm_scale, __nv_bfloat16* output,
         float* lse, int64_t len_indptr, int64_t total_q, int64_t total_kv, cudaStream_t stream) {
  if (ptxbench_aa_baseline_run_f32 == nullptr) {
    std::fprintf(stderr, "A/A candidate: run it with ptxbench-candidate-aa\n");
    std::abort();
  }
  void* const buffers[] = {const_cast<__nv_bfloat16*>(q),
                           const_cast<__nv_bfloat16*>(k),
                           const_cast<__nv_bfloat16*>(v),
                           const_cast<int32_t*>(qo_indptr),
                           const_cast<int32_t*>(kv_indptr),
                           output,
                           lse};
  const int64_t axes[] = {len_indptr, total_q, total_kv};
  if (ptxbench_aa_baseline_run_f32("gqa_ragged_prefill_causal_h32_kv4_d128", buffers, 7, &sm_scale,
                                   1, axes, 3, stream) != 0)
    std::abort();
}
