// The factories of reference.hpp: classify the problem, check the shape this module supports
// (shapes.hpp), make sure a CUDA device exists, then build the reference for its kind.
#include "reference/reference.hpp"

#include "reference/library_check.hpp"
#include "reference/library_factories.hpp"
#include "reference/shapes.hpp"

#include <fmt/format.h>

namespace ptxbench::reference {
namespace {

// Shape first (so CPU-only hosts still get a precise answer for unsupported problems), then
// the device, then the constructor.
template <typename Shape, typename Make>
ReferencePtr build(util::Expected<Shape> shape, Make&& make) {
  PTXBENCH_TRY(shape);
  PTXBENCH_TRY(cuda::require_device());
  return make(*shape);
}

// A stand-in whose library() also says why the baseline asked for is not the one running.
class StandIn final : public Reference {
public:
  StandIn(std::unique_ptr<Reference> inner, std::string why)
      : m_inner(std::move(inner)), m_why(std::move(why)) {}
  std::string library() const override { return m_inner->library() + "; " + m_why; }
  Kind kind() const override { return m_inner->kind(); }
  util::Status run(const PtxbenchCall& call) override { return m_inner->run(call); }

private:
  std::unique_ptr<Reference> m_inner;
  std::string m_why;
};

// cuDNN SDPA planned for the workload's longest sequences; where cuDNN refuses the layout on
// this device the naive kernel stands in, and library() says so and why.
ReferencePtr make_cudnn_gqa_baseline(const GqaShape& shape, const GqaIndptrs& indptrs) {
  PTXBENCH_TRY_ASSIGN(auto plan, gqa_plan(shape, indptrs.qo_indptr, indptrs.kv_indptr));
  auto cudnn = make_cudnn_gqa(shape, plan);
  if (cudnn || cudnn.error().kind != util::ErrorKind::unsupported)
    return cudnn;
  return make_naive_gqa(shape, fmt::format("{}{})", kGqaNaiveStandIn, cudnn.error().message),
                        Kind::naive);
}

// FlashInfer (the paper's baseline), planned for the workload's index layout, unless cuDNN is
// asked for. Where FlashInfer cannot serve the problem on this device (not an sm_90 GPU, a
// shape not compiled in), cuDNN stands in and library() ends with FlashInfer's reason.
ReferencePtr make_gqa_baseline(const suite::Problem& problem, const GqaShape& shape,
                               GqaBaseline baseline) {
  PTXBENCH_TRY_ASSIGN(auto indptrs, gqa_indptrs(problem));
  if (baseline == GqaBaseline::cudnn)
    return make_cudnn_gqa_baseline(shape, indptrs);
  auto flashinfer = make_flashinfer_gqa(shape, indptrs);
  if (flashinfer || flashinfer.error().kind != util::ErrorKind::unsupported)
    return flashinfer;
  PTXBENCH_TRY_ASSIGN(auto stand_in, make_cudnn_gqa_baseline(shape, indptrs));
  return std::unique_ptr<Reference>(std::make_unique<StandIn>(
      std::move(stand_in), "FlashInfer unavailable: " + flashinfer.error().message));
}

} // namespace

util::Status check_call(const PtxbenchCall& call, unsigned buffers, unsigned scalars) {
  if (call.version != PTXBENCH_CALL_VERSION || call.num_buffers != buffers ||
      call.num_scalars < scalars || (scalars > 0 && call.scalars == nullptr) ||
      call.buffers == nullptr)
    return util::make_error(util::ErrorKind::invalid_input,
                            fmt::format("reference call: expected version {} with {} buffers and "
                                        "{} scalars, got version {} with {} and {}",
                                        PTXBENCH_CALL_VERSION, buffers, scalars, call.version,
                                        call.num_buffers, call.num_scalars));
  return util::Ok{};
}

util::Expected<std::unique_ptr<Reference>> make_library_reference(const suite::Problem& problem,
                                                                  GqaBaseline gqa) {
  switch (problem.kind) {
  case suite::OpKind::gemm:
    return build(gemm_shape(problem),
                 [](const GemmShape& shape) { return make_cublaslt_gemm(shape); });
  case suite::OpKind::mha_forward:
    return build(mha_shape(problem), make_cudnn_sdpa_forward);
  case suite::OpKind::mha_backward:
    return build(mha_shape(problem), make_cudnn_sdpa_backward);
  case suite::OpKind::gqa_ragged_prefill:
  case suite::OpKind::gqa_paged_prefill:
  case suite::OpKind::gqa_paged_decode:
    return build(gqa_shape(problem), [&problem, gqa](const GqaShape& shape) {
      return make_gqa_baseline(problem, shape, gqa);
    });
  }
  return util::make_error(util::ErrorKind::unsupported,
                          fmt::format("no library reference for {}", problem.name()));
}

util::Expected<std::unique_ptr<Reference>> make_naive_reference(const suite::Problem& problem) {
  switch (problem.kind) {
  case suite::OpKind::gemm:
    return build(gemm_shape(problem), make_naive_gemm);
  case suite::OpKind::mha_forward:
    return build(mha_shape(problem), make_naive_mha_forward);
  case suite::OpKind::mha_backward:
    return build(mha_shape(problem), make_naive_mha_backward);
  case suite::OpKind::gqa_ragged_prefill:
  case suite::OpKind::gqa_paged_prefill:
  case suite::OpKind::gqa_paged_decode:
    return build(gqa_shape(problem), [](const GqaShape& shape) {
      return make_naive_gqa(shape, "naive GQA (fp32, base-2 LSE)", Kind::naive);
    });
  }
  return util::make_error(util::ErrorKind::unsupported,
                          fmt::format("no naive reference for {}", problem.name()));
}

} // namespace ptxbench::reference
