// A/A candidate for gqa_paged_prefill_causal_h24_kv8_d128_ps1 (bench/aa_speedup.cpp): the GQA
// baseline itself (FlashInfer's FA3 paged prefill, planned for the workload), reached through
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

void run(const __nv_bfloat16* q, const __nv_bfloat16* k_cache, const __nv_bfloat16* v_cache,
         const int32_t* qo_indptr, const int32_t* kv_indptr, const int32_t* kv_indices,
         float sm_scale, __nv_bfloat16* output, float* lse, int64_t total_q, int64_t num_pages,
         int64_t len_indptr, int64_t num_kv_indices, cudaStream_t stream) {
  if (ptxbench_aa_baseline_run_f32 == nullptr) {
    std::fprintf(stderr, "A/A candidate: run it with ptxbench-candidate-aa\n");
    std::abort();
  }
  void* const buffers[] = {const_cast<__nv_bfloat16*>(q),
                           const_cast<__nv_bfloat16*>(k_cache),
                           const_cast<__nv_bfloat16*>(v_cache),
                           const_cast<int32_t*>(qo_indptr),
                           const_cast<int32_t*>(kv_indptr),
                           const_cast<int32_t*>(kv_indices),
                           output,
                           lse};
  const int64_t axes[] = {total_q, num_pages, len_indptr, num_kv_indices};
  if (ptxbench_aa_baseline_run_f32("gqa_paged_prefill_causal_h24_kv8_d128_ps1", buffers, 8,
                                   &sm_scale, 1, axes, 4, stream) != 0)
    std::abort();
}
