// cuDNN SDPA references through the cuDNN frontend graph API (the path PyTorch's
// _scaled_dot_product_cudnn_attention and the cuDNN Python `sdpa_backward` take):
//   forward   O = softmax(Q·Kᵀ·scale [+ causal]) · V, Stats = LSE = ln Σ_j exp(Q_i·K_j·scale)
//   backward  dQ, dK, dV from Q, K, V, O, dO and the forward's Stats (the given L)
// scale = 1/√D. Q, K, V, O, dO, dQ, dK, dV are bf16 [B,H,S,D] contiguous (BHSD, row-major):
// dims {B,H,S,D}, strides {H·S·D, S·D, D, 1}. cuDNN's Stats tensor is f32 [B,H,S,1], which
// with strides {H·S, S, 1, 1} is exactly the problem's contiguous LSE [B,H,S]; cuDNN writes
// natural-log LSE unless stats_use_log2 is set (never here). Causal is the diagonal band with
// top-left alignment and right bound 0 (key j ≤ query i); with Sq = Sk it equals bottom-right.
// io bf16, intermediate and compute f32, heuristics A then FALLBACK.
//
// The graph is validated, lowered and its plan built once in the factory; the workspace is
// owned. Tensor uids are ABI buffer index + 1, so the frontend's sorted variant-pack order maps
// to call buffers through a table computed once, and run() only fills pointers and executes.
#include "reference/library_check.hpp"
#include "reference/library_factories.hpp"

#include <cmath>
#include <cudnn_frontend.h>
#include <fmt/format.h>
#include <vector>

namespace ptxbench::reference {
namespace {

namespace fe = cudnn_frontend;
using TensorPtr = std::shared_ptr<fe::graph::Tensor_attributes>;

static_assert(static_cast<int>(fe::error_code_t::OK) == 0 &&
                  static_cast<int>(fe::error_code_t::GRAPH_NOT_SUPPORTED) == 5 &&
                  static_cast<int>(fe::error_code_t::NVRTC_COMPILATION_FAILED) == 15,
              "library_check.cpp's frontend code names follow error_code_t's order");

enum class Direction : std::uint8_t { forward = 1, backward = 2 };

// ABI buffer order; uid = index + 1.
enum ForwardBuffer : std::int64_t { kFwdQ, kFwdK, kFwdV, kFwdO, kFwdLse, kFwdCount };
enum BackwardBuffer : std::int64_t {
  kBwdQ,
  kBwdK,
  kBwdV,
  kBwdO,
  kBwdDo,
  kBwdL,
  kBwdDq,
  kBwdDk,
  kBwdDv,
  kBwdCount
};

std::vector<std::int64_t> bhsd_dims(const MhaShape& s) {
  return {s.batch, s.heads, s.seq, s.head_dim};
}
std::vector<std::int64_t> bhsd_strides(const MhaShape& s) {
  return {s.heads * s.seq * s.head_dim, s.seq * s.head_dim, s.head_dim, 1};
}
// LSE [B,H,S] f32 contiguous, seen as cuDNN's Stats [B,H,S,1].
std::vector<std::int64_t> stats_dims(const MhaShape& s) {
  return {s.batch, s.heads, s.seq, 1};
}
std::vector<std::int64_t> stats_strides(const MhaShape& s) {
  return {s.heads * s.seq, s.seq, 1, 1};
}

void describe(fe::graph::Tensor_attributes& t, const char* name, std::int64_t buffer,
              const MhaShape& s, bool stats) {
  t.set_name(name)
      .set_uid(buffer + 1)
      .set_dim(stats ? stats_dims(s) : bhsd_dims(s))
      .set_stride(stats ? stats_strides(s) : bhsd_strides(s))
      .set_data_type(stats ? fe::DataType_t::FLOAT : fe::DataType_t::BFLOAT16);
}

TensorPtr input(fe::graph::Graph& graph, const char* name, std::int64_t buffer, const MhaShape& s,
                bool stats = false) {
  fe::graph::Tensor_attributes attributes;
  describe(attributes, name, buffer, s, stats);
  return graph.tensor(attributes);
}

void mark_output(const TensorPtr& t, const char* name, std::int64_t buffer, const MhaShape& s,
                 bool stats = false) {
  describe(*t, name, buffer, s, stats);
  t->set_output(true);
}

float softmax_scale(const MhaShape& s) {
  return 1.0f / std::sqrt(static_cast<float>(s.head_dim));
}

void add_forward(fe::graph::Graph& graph, const MhaShape& s) {
  auto q = input(graph, "Q", kFwdQ, s);
  auto k = input(graph, "K", kFwdK, s);
  auto v = input(graph, "V", kFwdV, s);
  auto attributes = fe::graph::SDPA_attributes()
                        .set_name("sdpa_forward")
                        .set_generate_stats(true) // Stats = natural-log LSE
                        .set_attn_scale(softmax_scale(s));
  if (s.mask == MaskKind::causal)
    attributes.set_causal_mask(true); // top-left, right bound 0
  auto [o, stats] = graph.sdpa(q, k, v, attributes);
  mark_output(o, "O", kFwdO, s);
  mark_output(stats, "LSE", kFwdLse, s, true);
}

void add_backward(fe::graph::Graph& graph, const MhaShape& s) {
  auto q = input(graph, "Q", kBwdQ, s);
  auto k = input(graph, "K", kBwdK, s);
  auto v = input(graph, "V", kBwdV, s);
  auto o = input(graph, "O", kBwdO, s);
  auto d_o = input(graph, "dO", kBwdDo, s);
  auto stats = input(graph, "L", kBwdL, s, true);
  auto attributes = fe::graph::SDPA_backward_attributes()
                        .set_name("sdpa_backward")
                        .set_attn_scale(softmax_scale(s));
  if (s.mask == MaskKind::causal)
    attributes.set_causal_mask(true);
  auto [dq, dk, dv] = graph.sdpa_backward(q, k, v, o, d_o, stats, attributes);
  mark_output(dq, "dQ", kBwdDq, s);
  mark_output(dk, "dK", kBwdDk, s);
  mark_output(dv, "dV", kBwdDv, s);
}

class CudnnSdpa final : public Reference {
public:
  CudnnSdpa(const MhaShape& shape, Direction direction)
      : m_shape(shape), m_direction(direction), m_handle(make_cudnn_handle()) {
    m_graph.set_io_data_type(fe::DataType_t::BFLOAT16)
        .set_intermediate_data_type(fe::DataType_t::FLOAT)
        .set_compute_data_type(fe::DataType_t::FLOAT);
    if (direction == Direction::forward)
      add_forward(m_graph, shape);
    else
      add_backward(m_graph, shape);
  }

  // unsupported when cuDNN has no engine for this graph on this device; throws on anything
  // else (a malformed graph is our bug).
  util::Status build() {
    PTXBENCH_CUDNN_FE_CHECK(m_graph.validate());
    PTXBENCH_CUDNN_FE_CHECK(m_graph.build_operation_graph(m_handle.get()));
    PTXBENCH_CUDNN_FE_CHECK(
        m_graph.create_execution_plans({fe::HeurMode_t::A, fe::HeurMode_t::FALLBACK}));
    if (auto support = m_graph.check_support(m_handle.get()); support.is_bad())
      return util::make_error(util::ErrorKind::unsupported,
                              "cuDNN SDPA: no engine supports this graph: " + support.err_msg);
    PTXBENCH_CUDNN_FE_CHECK(m_graph.build_plans(fe::BuildPlanPolicy_t::HEURISTICS_CHOICE));
    std::int64_t workspace_bytes = 0;
    PTXBENCH_CUDNN_FE_CHECK(m_graph.get_workspace_size(workspace_bytes));
    m_workspace = DeviceBuffer(static_cast<std::size_t>(workspace_bytes));
    for (const std::int64_t uid : m_graph.get_variant_pack_uids_sorted())
      m_slot_buffer.push_back(static_cast<unsigned>(uid - 1));
    m_pointers.resize(m_slot_buffer.size());
    return util::Ok{};
  }

  std::string library() const override {
    return fmt::format("cuDNN {} SDPA {} (frontend {}.{}.{})", cudnn_version(),
                       m_direction == Direction::forward ? "forward" : "backward",
                       CUDNN_FRONTEND_MAJOR_VERSION, CUDNN_FRONTEND_MINOR_VERSION,
                       CUDNN_FRONTEND_PATCH_VERSION);
  }
  Kind kind() const override { return Kind::library; }

  util::Status run(const PtxbenchCall& call) override {
    const std::int64_t count =
        m_direction == Direction::forward ? std::int64_t{kFwdCount} : std::int64_t{kBwdCount};
    PTXBENCH_TRY(check_call(call, static_cast<unsigned>(count), 0));
    for (std::size_t slot = 0; slot < m_slot_buffer.size(); ++slot)
      m_pointers[slot] = call.buffers[m_slot_buffer[slot]];
    PTXBENCH_CUDNN_CHECK(cudnnSetStream(m_handle.get(), static_cast<cudaStream_t>(call.stream)));
    PTXBENCH_CUDNN_FE_CHECK(m_graph.execute(
        m_handle.get(), m_pointers.data(), static_cast<int>(m_pointers.size()), m_workspace.get()));
    return util::Ok{};
  }

private:
  MhaShape m_shape;
  Direction m_direction;
  CudnnHandle m_handle;
  fe::graph::Graph m_graph;
  DeviceBuffer m_workspace;
  std::vector<unsigned> m_slot_buffer; // sorted variant-pack slot → ABI buffer index
  std::vector<void*> m_pointers;
};

ReferencePtr make_sdpa(const MhaShape& shape, Direction direction) {
  auto sdpa = std::make_unique<CudnnSdpa>(shape, direction);
  PTXBENCH_TRY(sdpa->build());
  return std::unique_ptr<Reference>(std::move(sdpa));
}

} // namespace

ReferencePtr make_cudnn_sdpa_forward(const MhaShape& shape) {
  return make_sdpa(shape, Direction::forward);
}

ReferencePtr make_cudnn_sdpa_backward(const MhaShape& shape) {
  return make_sdpa(shape, Direction::backward);
}

} // namespace ptxbench::reference
