// FlashInfer's FA3 (sm90) batch prefill as the GQA baseline for ragged and paged causal prefill:
//   O[t,h]   = Σ_j p_j · V[j, g(h)],  p = softmax_j(Q[t,h]·K[j, g(h)] · sm_scale + causal mask)
//   LSE[t,h] = log2 Σ_j exp(Q[t,h]·K[j, g(h)] · sm_scale)          (FlashInfer: base 2)
// g(h) = h / (Hq/Hkv); causal aligned bottom-right per sequence. bf16 in and out, f32 softmax
// and accumulation inside FlashInfer. Row-major FlashInfer-Trace tensors are FlashInfer's own
// NHD layout, so the strides below are the contiguous ones (elements):
//   q, output [tokens,Hq,D]        stride_n Hq·D, stride_h D
//   k, v ragged [kv_tokens,Hkv,D]  stride_n Hkv·D, stride_h D
//   k, v pages [P,1,Hkv,D]         page stride Hkv·D (page size 1), stride_n Hkv·D, stride_h D
//
// The parameters are FlashInfer's ahead-of-time ones (hopper/default_params.cuh) with the
// variant its JIT names for this case, DefaultAttention<false> (no logits soft cap), mask
// kCausal, no sliding window (window_left −1), no multi-item scoring (null item pointers).
// PrefillSM90Plan balances (head, query tile) work items over the SMs on the host and writes
// the schedule into the int workspace; the kernels read the sequence layout from it. Its
// "same schedule for all heads" variant (more than 4096 query tiles per head) is not
// instantiated, to halve the compile: such a plan is refused.
#include "reference/flashinfer_gqa_kernels.hpp"

#include <exception>
#include <flashinfer/attention/hopper/default_params.cuh>
#include <flashinfer/attention/hopper/prefill_sm90.cuh>
#include <flashinfer/attention/hopper/variants.cuh>
#include <flashinfer/attention/scheduler.cuh>
#include <flashinfer/cutlass_utils.cuh>

namespace ptxbench::reference {
namespace {

using Bf16 = cutlass::bfloat16_t;
using RaggedParams = flashinfer::BatchPrefillRaggedParams<Bf16, Bf16, Bf16, std::int32_t>;
using PagedParams = flashinfer::BatchPrefillPagedParams<Bf16, Bf16, Bf16, std::int32_t>;
using Variant = flashinfer::DefaultAttention</*use_logits_soft_cap=*/false>;
constexpr std::uint32_t kHeadDim = 128;
constexpr auto kMask = flashinfer::MaskMode::kCausal;

template <typename T> T* at(const FlashInferWorkspace& workspace, std::int64_t offset) {
  return flashinfer::GetPtrFromBaseOffset<T>(workspace.int_buffer, offset);
}

// The fields both parameter structs share: pointers, strides, heads, schedule and scale.
template <typename Params>
void fill_common(Params& p, const GqaShape& s, const flashinfer::PrefillPlanSM90Info& plan,
                 const FlashInferWorkspace& workspace, const FlashInferGqaArgs& args) {
  p.q_ptr = static_cast<Bf16*>(const_cast<void*>(args.q));
  p.k_ptr = static_cast<Bf16*>(const_cast<void*>(args.k));
  p.v_ptr = static_cast<Bf16*>(const_cast<void*>(args.v));
  p.o_ptr = static_cast<Bf16*>(args.output);
  p.lse_ptr = args.lse;
  p.q_stride_n = p.o_stride_n = s.qo_heads * s.head_dim;
  p.q_stride_h = p.o_stride_h = s.head_dim;
  p.k_stride_n = p.v_stride_n = s.kv_heads * s.head_dim;
  p.k_stride_h = p.v_stride_h = s.head_dim;
  p.nnz_qo = s.q_tokens;
  p.num_qo_heads = static_cast<int>(s.qo_heads);
  p.num_kv_heads = static_cast<int>(s.kv_heads);
  p.group_size = static_cast<int>(s.qo_heads / s.kv_heads);
  p.window_left = -1;
  p.causal = true;
  p.additional_params = {};
  p.additional_params.sm_scale = args.sm_scale;
  p.qo_tile_indices = at<std::int32_t>(workspace, plan.qo_tile_indices_offset);
  p.qo_indptr = at<std::int32_t>(workspace, plan.qo_indptr_offset);
  p.kv_indptr = at<std::int32_t>(workspace, plan.kv_indptr_offset);
  p.qo_lens = at<std::int32_t>(workspace, plan.qo_len_offset);
  p.kv_lens = at<std::int32_t>(workspace, plan.kv_len_offset);
  p.head_indices = at<std::int32_t>(workspace, plan.head_indices_offset);
  p.work_indptr = at<std::int32_t>(workspace, plan.work_indptr_offset);
  p.batch_indices = at<std::int32_t>(workspace, plan.batch_indices_offset);
}

cudaError_t run_ragged(const GqaShape& s, const flashinfer::PrefillPlanSM90Info& plan,
                       const FlashInferWorkspace& workspace, const FlashInferGqaArgs& args,
                       cudaStream_t stream) {
  RaggedParams p;
  fill_common(p, s, plan, workspace, args);
  p.nnz_kv = s.kv_rows;
  return flashinfer::BatchPrefillWithRaggedKVCacheDispatched<kHeadDim, kHeadDim, kMask, false,
                                                             false, Variant>(p, false, stream);
}

cudaError_t run_paged(const GqaShape& s, const flashinfer::PrefillPlanSM90Info& plan,
                      const FlashInferWorkspace& workspace, const FlashInferGqaArgs& args,
                      cudaStream_t stream) {
  PagedParams p;
  fill_common(p, s, plan, workspace, args);
  p.kv_indices = const_cast<std::int32_t*>(args.kv_indices);
  p.k_page_stride = p.v_page_stride = s.page_size * s.kv_heads * s.head_dim;
  p.page_size = static_cast<int>(s.page_size);
  return flashinfer::BatchPrefillWithPagedKVCacheDispatched<kHeadDim, kHeadDim, kMask, false, false,
                                                            Variant>(p, false, stream);
}

} // namespace

FlashInferPlanResult flashinfer_prefill_plan(const GqaShape& shape,
                                             std::vector<std::int32_t> qo_indptr,
                                             std::vector<std::int32_t> kv_indptr,
                                             const FlashInferWorkspace& workspace,
                                             cudaStream_t stream) {
  std::vector<std::int32_t> kv_len(kv_indptr.size() > 0 ? kv_indptr.size() - 1 : 0);
  for (std::size_t b = 0; b < kv_len.size(); ++b)
    kv_len[b] = static_cast<std::int32_t>(shape.page_size) * (kv_indptr[b + 1] - kv_indptr[b]);
  flashinfer::PrefillPlanSM90Info plan;
  try {
    const cudaError_t status = flashinfer::PrefillSM90Plan(
        workspace.float_buffer, workspace.float_bytes, workspace.int_buffer,
        workspace.pinned_int_buffer, workspace.int_bytes, plan, qo_indptr.data(), kv_indptr.data(),
        kv_len.data(), static_cast<std::uint32_t>(shape.q_tokens),
        static_cast<std::uint32_t>(shape.sequences), static_cast<std::uint32_t>(shape.qo_heads),
        static_cast<std::uint32_t>(shape.kv_heads), kHeadDim, kHeadDim,
        static_cast<std::uint32_t>(shape.page_size), shape.causal,
        /*enable_cuda_graph=*/false, /*sizeof_dtype_o=*/2, stream);
    if (status != cudaSuccess)
      return {{}, std::string("FlashInfer PrefillSM90Plan: ") + cudaGetErrorName(status)};
  } catch (const std::exception& error) {
    return {{}, std::string("FlashInfer PrefillSM90Plan: ") + error.what()};
  }
  if (plan.same_schedule_for_all_heads)
    return {{},
            "FlashInfer PrefillSM90Plan chose one schedule for all heads (over 4096 query "
            "tiles per head), which is not compiled in"};
  return {plan.ToVector(), {}};
}

cudaError_t flashinfer_prefill_run(const GqaShape& shape,
                                   const std::vector<std::int64_t>& plan_info,
                                   const FlashInferWorkspace& workspace,
                                   const FlashInferGqaArgs& args, cudaStream_t stream) {
  flashinfer::PrefillPlanSM90Info plan;
  plan.FromVector(plan_info);
  return shape.layout == GqaLayout::ragged_prefill
             ? run_ragged(shape, plan, workspace, args, stream)
             : run_paged(shape, plan, workspace, args, stream);
}

} // namespace ptxbench::reference
