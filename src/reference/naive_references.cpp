// Reference objects around the naive kernels (naive_kernels.hpp): they unpack the ABI call,
// launch, and report themselves as naive. The backward owns its fp32 delta scratch.
#include "reference/library_check.hpp"
#include "reference/library_factories.hpp"
#include "reference/naive_kernels.hpp"

#include <cmath>

namespace ptxbench::reference {
namespace {

cudaStream_t stream_of(const PtxbenchCall& call) {
  return static_cast<cudaStream_t>(call.stream);
}

float default_scale(std::int64_t head_dim) {
  return 1.0f / std::sqrt(static_cast<float>(head_dim));
}

class NaiveGemm final : public Reference {
public:
  explicit NaiveGemm(const GemmShape& shape) : m_shape(shape) {}
  std::string library() const override { return "naive GEMM (fp32 SIMT)"; }
  Kind kind() const override { return Kind::naive; }
  util::Status run(const PtxbenchCall& call) override {
    PTXBENCH_TRY(check_call(call, 3, 0));
    PTXBENCH_CUDA_CHECK(launch_naive_gemm(m_shape, call.buffers[0], call.buffers[1],
                                          call.buffers[2], stream_of(call)));
    return util::Ok{};
  }

private:
  GemmShape m_shape;
};

class NaiveMhaForward final : public Reference {
public:
  explicit NaiveMhaForward(const MhaShape& shape) : m_shape(shape) {}
  std::string library() const override { return "naive MHA forward (fp32 online softmax)"; }
  Kind kind() const override { return Kind::naive; }
  util::Status run(const PtxbenchCall& call) override {
    PTXBENCH_TRY(check_call(call, 5, 0));
    void* const* b = call.buffers; // Q, K, V, O, LSE
    const MhaForwardArgs args{b[0], b[1], b[2], b[3], static_cast<float*>(b[4])};
    PTXBENCH_CUDA_CHECK(
        launch_naive_mha_forward(m_shape, default_scale(m_shape.head_dim), args, stream_of(call)));
    return util::Ok{};
  }

private:
  MhaShape m_shape;
};

class NaiveMhaBackward final : public Reference {
public:
  explicit NaiveMhaBackward(const MhaShape& shape)
      : m_shape(shape), m_delta(static_cast<std::size_t>(shape.rows()) * sizeof(float)) {}
  std::string library() const override { return "naive MHA backward (fp32, P from L)"; }
  Kind kind() const override { return Kind::naive; }
  util::Status run(const PtxbenchCall& call) override {
    PTXBENCH_TRY(check_call(call, 9, 0));
    void* const* b = call.buffers; // Q, K, V, O, dO, L, dQ, dK, dV
    const MhaBackwardArgs args{b[0], b[1],
                               b[2], b[3],
                               b[4], static_cast<const float*>(b[5]),
                               b[6], b[7],
                               b[8], m_delta.as<float>()};
    PTXBENCH_CUDA_CHECK(
        launch_naive_mha_backward(m_shape, default_scale(m_shape.head_dim), args, stream_of(call)));
    return util::Ok{};
  }

private:
  MhaShape m_shape;
  DeviceBuffer m_delta;
};

class NaiveGqa final : public Reference {
public:
  NaiveGqa(const GqaShape& shape, std::string library, Kind kind)
      : m_shape(shape), m_library(std::move(library)), m_kind(kind) {}
  std::string library() const override { return m_library; }
  Kind kind() const override { return m_kind; }
  util::Status run(const PtxbenchCall& call) override;

private:
  GqaShape m_shape;
  std::string m_library;
  Kind m_kind;
};

// Buffers in ABI order — ragged: q, k, v, qo_indptr, kv_indptr, output, lse;
// paged prefill: q, k_cache, v_cache, qo_indptr, kv_indptr, kv_indices, output, lse;
// paged decode: q, k_cache, v_cache, kv_indptr, kv_indices, output, lse. Scalar: sm_scale.
util::Status NaiveGqa::run(const PtxbenchCall& call) {
  const unsigned buffers = m_shape.layout == GqaLayout::paged_prefill ? 8 : 7;
  PTXBENCH_TRY(check_call(call, buffers, 1));
  void* const* b = call.buffers;
  const auto index = [&](unsigned i) { return static_cast<const int*>(b[i]); };
  GqaArgs args{b[0],
               b[1],
               b[2],
               nullptr,
               nullptr,
               nullptr,
               call.scalars[0].f32,
               b[buffers - 2],
               static_cast<float*>(b[buffers - 1])};
  switch (m_shape.layout) {
  case GqaLayout::ragged_prefill:
    args.qo_indptr = index(3);
    args.kv_indptr = index(4);
    break;
  case GqaLayout::paged_prefill:
    args.qo_indptr = index(3);
    args.kv_indptr = index(4);
    args.kv_indices = index(5);
    break;
  case GqaLayout::paged_decode:
    args.kv_indptr = index(3);
    args.kv_indices = index(4);
    break;
  }
  PTXBENCH_CUDA_CHECK(launch_naive_gqa(m_shape, args, stream_of(call)));
  return util::Ok{};
}

} // namespace

ReferencePtr make_naive_gemm(const GemmShape& shape) {
  return std::unique_ptr<Reference>(std::make_unique<NaiveGemm>(shape));
}
ReferencePtr make_naive_mha_forward(const MhaShape& shape) {
  return std::unique_ptr<Reference>(std::make_unique<NaiveMhaForward>(shape));
}
ReferencePtr make_naive_mha_backward(const MhaShape& shape) {
  return std::unique_ptr<Reference>(std::make_unique<NaiveMhaBackward>(shape));
}
ReferencePtr make_naive_gqa(const GqaShape& shape, std::string library, Kind kind) {
  return std::unique_ptr<Reference>(std::make_unique<NaiveGqa>(shape, std::move(library), kind));
}

} // namespace ptxbench::reference
