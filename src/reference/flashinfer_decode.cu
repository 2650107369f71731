// FlashInfer's batch decode over a paged KV cache as the GQA baseline for paged decode:
//   O[b,h]   = Σ_j p_j · V[page_j, g(h)],  p = softmax_j(Q[b,h]·K[page_j, g(h)] · sm_scale)
//   LSE[b,h] = log2 Σ_j exp(Q[b,h]·K[page_j, g(h)] · sm_scale)       (FlashInfer: base 2)
// over the pages j of sequence b (kv_indices[kv_indptr[b] .. kv_indptr[b+1])), g(h) = h /
// (Hq/Hkv). bf16 in and out, f32 softmax inside FlashInfer. The FlashInfer-Trace tensors are
// FlashInfer's NHD layout:
//   q, output [B,Hq,D]          stride_n Hq·D, stride_h D
//   k_cache, v_cache [P,1,Hkv,D]  paged_kv_t NHD, page size 1: stride_page Hkv·D, stride_n Hkv·D,
//                               stride_h D; last_page_len all 1 (a workspace array)
//
// This is the kernel BatchDecodeWithPagedKVCacheWrapper runs by default on every architecture
// (use_tensor_cores=False, the CUDA-core decode kernel), with the parameters of FlashInfer's
// ahead-of-time build (default_decode_params.cuh) and the variant its JIT names for this case,
// DefaultAttention<false, false, false, false> (no custom mask, window, soft cap or ALiBi),
// no positional encoding. DecodePlan decides on the host whether to split long sequences over
// several blocks (then run() also launches FlashInfer's merge kernel) and writes the split
// into the int workspace; the kernel reads kv_indptr and kv_indices from the call.
#include "reference/flashinfer_gqa_kernels.hpp"

#include <exception>
#include <flashinfer/attention/decode.cuh>
#include <flashinfer/attention/default_decode_params.cuh>
#include <flashinfer/attention/scheduler.cuh>
#include <flashinfer/attention/variants.cuh>

namespace ptxbench::reference {
namespace {

using DecodeParams =
    flashinfer::BatchDecodeParams<nv_bfloat16, nv_bfloat16, nv_bfloat16, std::int32_t>;
using DecodeVariant = flashinfer::DefaultAttention<false, false, false, false>;
constexpr std::uint32_t kDecodeHeadDim = 128;
constexpr auto kNoRope = flashinfer::PosEncodingMode::kNone;

cudaError_t plan_decode(const GqaShape& s, std::vector<std::int32_t>& kv_indptr,
                        const FlashInferWorkspace& workspace, flashinfer::DecodePlanInfo& plan,
                        cudaStream_t stream) {
  const auto group = static_cast<std::uint32_t>(s.qo_heads / s.kv_heads);
  DISPATCH_GQA_GROUP_SIZE(group, GROUP_SIZE, {
    auto estimate = flashinfer::BatchDecodeWithPagedKVCacheWorkEstimationDispatched<
        GROUP_SIZE, kDecodeHeadDim, kNoRope, DecodeVariant, DecodeParams>;
    return flashinfer::DecodePlan<kDecodeHeadDim, kNoRope, DecodeVariant, DecodeParams>(
        workspace.float_buffer, workspace.float_bytes, workspace.int_buffer,
        workspace.pinned_int_buffer, workspace.int_bytes, plan, kv_indptr.data(),
        static_cast<std::uint32_t>(s.sequences), static_cast<std::uint32_t>(s.qo_heads),
        static_cast<std::uint32_t>(s.page_size), /*enable_cuda_graph=*/false, stream, estimate);
  });
  return cudaErrorInvalidValue; // unreachable: DISPATCH_GQA_GROUP_SIZE throws otherwise
}

template <typename T> T* at(void* base, std::int64_t offset) {
  return flashinfer::GetPtrFromBaseOffset<T>(base, offset);
}

} // namespace

FlashInferPlanResult flashinfer_decode_plan(const GqaShape& shape,
                                            std::vector<std::int32_t> kv_indptr,
                                            const FlashInferWorkspace& workspace,
                                            cudaStream_t stream) {
  flashinfer::DecodePlanInfo plan;
  try {
    const cudaError_t status = plan_decode(shape, kv_indptr, workspace, plan, stream);
    if (status != cudaSuccess)
      return {{}, std::string("FlashInfer DecodePlan: ") + cudaGetErrorName(status)};
  } catch (const std::exception& error) {
    return {{}, std::string("FlashInfer DecodePlan: ") + error.what()};
  }
  return {plan.ToVector(), {}};
}

cudaError_t flashinfer_decode_run(const GqaShape& shape, const std::vector<std::int64_t>& plan_info,
                                  const FlashInferWorkspace& workspace,
                                  const FlashInferGqaArgs& args, cudaStream_t stream) {
  flashinfer::DecodePlanInfo plan;
  plan.FromVector(plan_info);
  using Bf16 = nv_bfloat16;
  DecodeParams p;
  p.paged_kv = flashinfer::paged_kv_t<Bf16, std::int32_t>(
      static_cast<std::uint32_t>(shape.kv_heads), static_cast<std::uint32_t>(shape.page_size),
      kDecodeHeadDim, static_cast<std::uint32_t>(shape.sequences), flashinfer::QKVLayout::kNHD,
      static_cast<Bf16*>(const_cast<void*>(args.k)), static_cast<Bf16*>(const_cast<void*>(args.v)),
      const_cast<std::int32_t*>(args.kv_indices), const_cast<std::int32_t*>(args.kv_indptr),
      workspace.kv_last_page_len);
  p.q = static_cast<Bf16*>(const_cast<void*>(args.q));
  p.o = static_cast<Bf16*>(args.output);
  p.lse = args.lse;
  p.num_qo_heads = static_cast<std::uint32_t>(shape.qo_heads);
  p.q_stride_n = static_cast<std::int32_t>(shape.qo_heads * shape.head_dim);
  p.q_stride_h = static_cast<std::int32_t>(shape.head_dim);
  p.window_left = -1;
  p.sm_scale = args.sm_scale;
  p.rope_rcp_scale = p.rope_rcp_theta = 1.0f;
  p.request_indices = at<std::int32_t>(workspace.int_buffer, plan.request_indices_offset);
  p.kv_tile_indices = at<std::int32_t>(workspace.int_buffer, plan.kv_tile_indices_offset);
  p.o_indptr = at<std::int32_t>(workspace.int_buffer, plan.o_indptr_offset);
  p.kv_chunk_size_ptr = at<std::int32_t>(workspace.int_buffer, plan.kv_chunk_size_ptr_offset);
  p.padded_batch_size = static_cast<std::uint32_t>(plan.padded_batch_size);
  Bf16* tmp_v = nullptr;
  float* tmp_s = nullptr;
  if (plan.split_kv) {
    tmp_v = at<Bf16>(workspace.float_buffer, plan.v_offset);
    tmp_s = at<float>(workspace.float_buffer, plan.s_offset);
  }
  return flashinfer::BatchDecodeWithPagedKVCacheDispatched<kDecodeHeadDim, kNoRope, DecodeVariant>(
      p, tmp_v, tmp_s, /*enable_pdl=*/false, stream);
}

} // namespace ptxbench::reference
