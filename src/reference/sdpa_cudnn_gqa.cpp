// cuDNN SDPA as the GQA reference (ragged prefill, paged prefill, paged decode), standing in
// for FlashInfer and saying so in library():
//   O[t,h]   = Σ_j p_j · V[j, g(h)],  p = softmax_j(Q[t,h]·K[j, g(h)] · sm_scale [+ mask])
//   LSE[t,h] = log2 Σ_j exp(Q[t,h]·K[j, g(h)] · sm_scale)      (FlashInfer: base 2)
// with g(h) = h / (Hq/Hkv) — cuDNN's grouping when K/V carry Hkv < Hq heads. bf16 in and out,
// f32 softmax and accumulation (graph intermediate/compute f32). Row-major FlashInfer-Trace
// tensors map onto cuDNN's [B, H, S, D] view with S = the plan's longest sequence:
//   q, output [tokens,Hq,D]  dims {B,Hq,S_q,D}, strides {S_q·Hq·D, D, Hq·D, 1} (packed BSHD);
//                            prefill: ragged offsets qo_indptr·Hq·D; decode: S_q = 1, token b is
//                            sequence b, no offsets
//   lse [tokens,Hq] f32      Stats dims {B,Hq,S_q,1}, strides {S_q·Hq, 1, Hq, 1}; prefill:
//                            ragged offsets qo_indptr·Hq
//   k, v [kv_tokens,Hkv,D]   dims {B,Hkv,S_kv,D}, strides {S_kv·Hkv·D, D, Hkv·D, 1}, ragged
//                            offsets kv_indptr·Hkv·D
//   k_cache, v_cache         container [pages, Hkv, page_size = 1, D] read through
//     [pages,1,Hkv,D]        dims {pages,Hkv,1,D}, strides {Hkv·D, D, Hkv·D, 1}; page table
//                            {B,1,S_kv,1} int32, row b = the sequence's kv_indices
// Masks: the padding mask with per-sequence seq_len_q / seq_len_kv (cuDNN requires it for
// ragged and paged tensors); prefill causal is the diagonal band with right bound 0 aligned
// bottom-right per sequence (query i of n_q sees keys j ≤ i + n_kv − n_q), decode has none.
// sm_scale is a pass-by-value scalar read from the call, so the graph honours the input.
//
// One call = three launches on the call's stream, all inside the timed window:
//   prepare (cudnn_gqa_kernels.cu)  seq lens, element offsets and the page table from the
//                                   index tensors (cuDNN 9.19 takes no cumulative lengths);
//   cuDNN SDPA forward;
//   finish                          LSE × log2(e) in place (cuDNN's Stats are natural log;
//                                   stats_use_log2 needs cuDNN 9.27), and output 0 / LSE −inf
//                                   for a query that sees no key, as FlashInfer's reference.
// Launch gaps. Under CUPTI activity tracing (how the evaluator times a reference) cuDNN's
// execute() takes ~0.35–0.45 ms of host time per call, and the GPU idles between `prepare` and
// the SDPA kernel that long: measured on an H200 with cuDNN 9.19, CUPTI latency 0.390 ms with
// direct launches against 0.049 ms as a graph for the paged prefill, 0.719 against 0.300 ms for
// the ragged one (bench/results/gqa_reference_h200.md; without tracing the host time hides
// behind the L2 flush and both measure the same). So by default run() replays a CUDA
// graph of the three launches, captured on a private stream the first time it sees a set of
// buffers and sm_scale (the evaluator rotates a few input sets; at most kMaxCaptured are
// kept): the same kernels, without host time between them. Capture failing makes the
// reference fall back to direct launches and say so in library().
//
// The graph is built for a GqaPlan (longest sequences) in the factory, like FlashInfer's plan();
// a call whose layout exceeds the plan traps in `prepare`. Anything cuDNN rejects while
// building is `unsupported` with cuDNN's reason, so the factory can fall back and record why.
#include "reference/cudnn_gqa_kernels.hpp"
#include "reference/library_check.hpp"
#include "reference/library_factories.hpp"

#include <cudnn_frontend.h>
#include <fmt/format.h>
#include <limits>
#include <vector>

namespace ptxbench::reference {
namespace {

namespace fe = cudnn_frontend;
using TensorPtr = std::shared_ptr<fe::graph::Tensor_attributes>;
using Dims = std::vector<std::int64_t>;

// Graph tensors; uid = slot + 1. The K and V (and Q and O) offsets and page tables are
// separate graph tensors over the same device array.
enum Slot : std::int64_t {
  kQ,
  kK,
  kV,
  kO,
  kStats,
  kScale,
  kSeqLenQ,
  kSeqLenKv,
  kQOffsets,
  kOOffsets,
  kStatsOffsets,
  kKOffsets,
  kVOffsets,
  kPageTableK,
  kPageTableV,
  kSlotCount
};

constexpr std::string_view layout_name(GqaLayout layout) {
  switch (layout) {
  case GqaLayout::ragged_prefill:
    return "ragged prefill";
  case GqaLayout::paged_prefill:
    return "paged prefill";
  case GqaLayout::paged_decode:
    return "paged decode";
  }
  return "?";
}

TensorPtr tensor(fe::graph::Graph& graph, Slot slot, const char* name, const Dims& dims,
                 const Dims& strides, fe::DataType_t type) {
  return graph.tensor(fe::graph::Tensor_attributes()
                          .set_name(name)
                          .set_uid(slot + 1)
                          .set_dim(dims)
                          .set_stride(strides)
                          .set_data_type(type));
}

// [n,1,1,1] int32: per-sequence lengths (n = B) and ragged offsets (n = B + 1).
TensorPtr index_tensor(fe::graph::Graph& graph, Slot slot, const char* name, std::int64_t n) {
  return tensor(graph, slot, name, {n, 1, 1, 1}, {1, 1, 1, 1}, fe::DataType_t::INT32);
}

void mark_output(const TensorPtr& t, Slot slot, const char* name, const Dims& dims,
                 const Dims& strides, fe::DataType_t type) {
  t->set_name(name).set_uid(slot + 1).set_dim(dims).set_stride(strides);
  t->set_data_type(type).set_output(true);
}

// A call captured as a CUDA graph, for the buffers and sm_scale it was captured with.
struct CapturedCall {
  std::vector<void*> buffers;
  float scale = 0.0f;
  CudaGraphExec exec;
};
constexpr std::size_t kMaxCaptured = 8;

class CudnnGqa final : public Reference {
public:
  CudnnGqa(const GqaShape& shape, const GqaPlan& plan, fe::AttentionImplementation_t implementation,
           GqaLaunch launch);

  util::Status build();
  std::string library() const override;
  Kind kind() const override { return Kind::library; }
  util::Status run(const PtxbenchCall& call) override;

private:
  bool paged() const { return m_shape.layout != GqaLayout::ragged_prefill; }
  bool decode() const { return m_shape.layout == GqaLayout::paged_decode; }
  void allocate_metadata();
  void add_sdpa();
  std::pair<TensorPtr, TensorPtr> add_kv(fe::graph::SDPA_attributes& attributes);
  GqaIndexArgs index_args(const PtxbenchCall& call) const;
  void* pointer(Slot slot, const PtxbenchCall& call);
  void enqueue(const PtxbenchCall& call, cudaStream_t stream);
  util::Expected<cudaGraphExec_t> captured(const PtxbenchCall& call);
  util::Expected<cudaGraphExec_t> capture(const PtxbenchCall& call);

  GqaShape m_shape;
  GqaPlan m_plan;
  fe::AttentionImplementation_t m_implementation;
  GqaLaunch m_launch;
  std::string m_capture_failure; // why graph capture failed, when it did
  CudnnHandle m_handle;
  CudaStream m_capture_stream;
  std::vector<CapturedCall> m_captured;
  fe::graph::Graph m_graph;
  DeviceBuffer m_workspace;
  DeviceBuffer m_metadata_memory;
  CudnnGqaMetadata m_metadata;
  float m_scale = 0.0f;             // pass-by-value: cuDNN reads it from the host at execute
  std::vector<Slot> m_sorted_slots; // variant-pack order
  std::vector<void*> m_pointers;
};

CudnnGqa::CudnnGqa(const GqaShape& shape, const GqaPlan& plan,
                   fe::AttentionImplementation_t implementation, GqaLaunch launch)
    : m_shape(shape), m_plan(plan), m_implementation(implementation), m_launch(launch),
      m_handle(make_cudnn_handle()), m_capture_stream(make_stream()) {
  allocate_metadata();
  m_graph.set_io_data_type(fe::DataType_t::BFLOAT16)
      .set_intermediate_data_type(fe::DataType_t::FLOAT)
      .set_compute_data_type(fe::DataType_t::FLOAT);
  add_sdpa();
}

// One zeroed int32 array holding every metadata tensor. The page table gets 128 spare zero
// entries so a tile that reads past the last row still names page 0.
void CudnnGqa::allocate_metadata() {
  const std::int64_t b = m_shape.sequences;
  const std::int64_t offsets = decode() ? 0 : b + 1;
  const std::int64_t kv_offsets = paged() ? 0 : b + 1;
  const std::int64_t table = paged() ? b * m_plan.max_kv_len + 128 : 0;
  const std::int64_t count = 2 * b + 2 * offsets + kv_offsets + table;
  m_metadata_memory = DeviceBuffer(static_cast<std::size_t>(count) * sizeof(int));
  PTXBENCH_CUDA_CHECK(cudaMemset(m_metadata_memory.get(), 0, m_metadata_memory.size_bytes()));
  int* next = m_metadata_memory.as<int>();
  const auto take = [&next](std::int64_t n) {
    int* p = n > 0 ? next : nullptr;
    next += n;
    return p;
  };
  m_metadata.seq_len_q = take(b);
  m_metadata.seq_len_kv = take(b);
  m_metadata.q_offsets = take(offsets);
  m_metadata.stats_offsets = take(offsets);
  m_metadata.kv_offsets = take(kv_offsets);
  m_metadata.page_table = take(table);
}

std::pair<TensorPtr, TensorPtr> CudnnGqa::add_kv(fe::graph::SDPA_attributes& attributes) {
  const auto& s = m_shape;
  const std::int64_t s_kv = m_plan.max_kv_len;
  const auto bf16 = fe::DataType_t::BFLOAT16;
  if (!paged()) {
    const Dims dims{s.sequences, s.kv_heads, s_kv, s.head_dim};
    const Dims strides{s_kv * s.kv_heads * s.head_dim, s.head_dim, s.kv_heads * s.head_dim, 1};
    auto k = tensor(m_graph, kK, "k", dims, strides, bf16);
    auto v = tensor(m_graph, kV, "v", dims, strides, bf16);
    k->set_ragged_offset(index_tensor(m_graph, kKOffsets, "k_offsets", s.sequences + 1));
    v->set_ragged_offset(index_tensor(m_graph, kVOffsets, "v_offsets", s.sequences + 1));
    return {k, v};
  }
  const Dims dims{s.kv_rows, s.kv_heads, 1, s.head_dim};
  const Dims strides{s.kv_heads * s.head_dim, s.head_dim, s.kv_heads * s.head_dim, 1};
  auto k = tensor(m_graph, kK, "k_cache", dims, strides, bf16);
  auto v = tensor(m_graph, kV, "v_cache", dims, strides, bf16);
  const Dims table{s.sequences, 1, s_kv, 1};
  const Dims table_strides{s_kv, s_kv, 1, 1};
  attributes
      .set_paged_attention_k_table(
          tensor(m_graph, kPageTableK, "page_table_k", table, table_strides, fe::DataType_t::INT32))
      .set_paged_attention_v_table(
          tensor(m_graph, kPageTableV, "page_table_v", table, table_strides, fe::DataType_t::INT32))
      .set_paged_attention_max_seq_len_kv(static_cast<int>(s_kv));
  return {k, v};
}

void CudnnGqa::add_sdpa() {
  const auto& s = m_shape;
  const std::int64_t s_q = m_plan.max_q_len;
  const Dims q_dims{s.sequences, s.qo_heads, s_q, s.head_dim};
  const Dims q_strides{s_q * s.qo_heads * s.head_dim, s.head_dim, s.qo_heads * s.head_dim, 1};
  auto q = tensor(m_graph, kQ, "q", q_dims, q_strides, fe::DataType_t::BFLOAT16);
  auto scale = m_graph.tensor(fe::graph::Tensor_attributes()
                                  .set_name("sm_scale")
                                  .set_uid(kScale + 1)
                                  .set_dim({1, 1, 1, 1})
                                  .set_stride({1, 1, 1, 1})
                                  .set_is_pass_by_value(true)
                                  .set_data_type(fe::DataType_t::FLOAT));
  auto attributes =
      fe::graph::SDPA_attributes()
          .set_name("gqa")
          .set_implementation(m_implementation)
          .set_generate_stats(true) // natural-log LSE; `finish` makes it base 2
          .set_attn_scale(scale)
          .set_padding_mask(true)
          .set_seq_len_q(index_tensor(m_graph, kSeqLenQ, "seq_len_q", s.sequences))
          .set_seq_len_kv(index_tensor(m_graph, kSeqLenKv, "seq_len_kv", s.sequences));
  if (s.causal)
    attributes.set_causal_mask_bottom_right(true); // right bound 0, per sequence
  if (!decode())
    q->set_ragged_offset(index_tensor(m_graph, kQOffsets, "q_offsets", s.sequences + 1));
  auto [k, v] = add_kv(attributes);
  auto [o, stats] = m_graph.sdpa(q, k, v, attributes);
  mark_output(o, kO, "output", q_dims, q_strides, fe::DataType_t::BFLOAT16);
  mark_output(stats, kStats, "lse", {s.sequences, s.qo_heads, s_q, 1},
              {s_q * s.qo_heads, 1, s.qo_heads, 1}, fe::DataType_t::FLOAT);
  if (decode())
    return;
  o->set_ragged_offset(index_tensor(m_graph, kOOffsets, "o_offsets", s.sequences + 1));
  stats->set_ragged_offset(index_tensor(m_graph, kStatsOffsets, "lse_offsets", s.sequences + 1));
}

// Any step cuDNN refuses makes the reference unsupported on this machine, with its reason.
template <typename Status> util::Status accepted(std::string_view step, const Status& status) {
  if (status.is_good())
    return util::Ok{};
  return util::make_error(
      util::ErrorKind::unsupported,
      fmt::format("cuDNN SDPA GQA: {} refused ({}): {}", step,
                  detail::cudnn_frontend_code_name(static_cast<int>(status.code)), status.err_msg));
}

util::Status CudnnGqa::build() {
  PTXBENCH_TRY(accepted("validate", m_graph.validate()));
  PTXBENCH_TRY(accepted("build_operation_graph", m_graph.build_operation_graph(m_handle.get())));
  PTXBENCH_TRY(
      accepted("create_execution_plans",
               m_graph.create_execution_plans({fe::HeurMode_t::A, fe::HeurMode_t::FALLBACK})));
  PTXBENCH_TRY(accepted("check_support", m_graph.check_support(m_handle.get())));
  PTXBENCH_TRY(
      accepted("build_plans", m_graph.build_plans(fe::BuildPlanPolicy_t::HEURISTICS_CHOICE)));
  std::int64_t workspace_bytes = 0;
  PTXBENCH_CUDNN_FE_CHECK(m_graph.get_workspace_size(workspace_bytes));
  m_workspace = DeviceBuffer(static_cast<std::size_t>(workspace_bytes));
  for (const std::int64_t uid : m_graph.get_variant_pack_uids_sorted())
    m_sorted_slots.push_back(static_cast<Slot>(uid - 1));
  m_pointers.resize(m_sorted_slots.size());
  return util::Ok{};
}

std::string CudnnGqa::library() const {
  const bool composite = m_implementation == fe::AttentionImplementation_t::COMPOSITE;
  const std::string launch = m_launch == GqaLaunch::graph ? ""
                             : m_capture_failure.empty()
                                 ? ", direct launches"
                                 : ", direct launches: graph capture failed: " + m_capture_failure;
  return fmt::format("cuDNN {} SDPA (stand-in for FlashInfer; {}{}{}, frontend {}.{}.{})",
                     cudnn_version(), layout_name(m_shape.layout),
                     composite ? ", composite node" : "", launch, CUDNN_FRONTEND_MAJOR_VERSION,
                     CUDNN_FRONTEND_MINOR_VERSION, CUDNN_FRONTEND_PATCH_VERSION);
}

// Buffers in ABI order — ragged: q, k, v, qo_indptr, kv_indptr, output, lse;
// paged prefill: q, k_cache, v_cache, qo_indptr, kv_indptr, kv_indices, output, lse;
// paged decode: q, k_cache, v_cache, kv_indptr, kv_indices, output, lse. Scalar: sm_scale.
GqaIndexArgs CudnnGqa::index_args(const PtxbenchCall& call) const {
  const auto index = [&](unsigned i) { return static_cast<const int*>(call.buffers[i]); };
  switch (m_shape.layout) {
  case GqaLayout::ragged_prefill:
    return GqaIndexArgs{index(3), index(4), nullptr};
  case GqaLayout::paged_prefill:
    return GqaIndexArgs{index(3), index(4), index(5)};
  case GqaLayout::paged_decode:
    return GqaIndexArgs{nullptr, index(3), index(4)};
  }
  return {};
}

void* CudnnGqa::pointer(Slot slot, const PtxbenchCall& call) {
  const unsigned n = call.num_buffers;
  switch (slot) {
  case kQ:
    return call.buffers[0];
  case kK:
    return call.buffers[1];
  case kV:
    return call.buffers[2];
  case kO:
    return call.buffers[n - 2];
  case kStats:
    return call.buffers[n - 1];
  case kScale:
    return &m_scale;
  case kSeqLenQ:
    return m_metadata.seq_len_q;
  case kSeqLenKv:
    return m_metadata.seq_len_kv;
  case kQOffsets:
  case kOOffsets:
    return m_metadata.q_offsets;
  case kStatsOffsets:
    return m_metadata.stats_offsets;
  case kKOffsets:
  case kVOffsets:
    return m_metadata.kv_offsets;
  case kPageTableK:
  case kPageTableV:
    return m_metadata.page_table;
  case kSlotCount:
    break;
  }
  throw util::Fatal(fmt::format("cuDNN GQA: unknown variant-pack uid {}", slot + 1));
}

// The three launches of one call on `stream` (m_scale already set).
void CudnnGqa::enqueue(const PtxbenchCall& call, cudaStream_t stream) {
  const GqaIndexArgs index = index_args(call);
  for (std::size_t i = 0; i < m_sorted_slots.size(); ++i)
    m_pointers[i] = pointer(m_sorted_slots[i], call);
  PTXBENCH_CUDA_CHECK(launch_cudnn_gqa_prepare(m_shape, m_plan, index, m_metadata, stream));
  PTXBENCH_CUDNN_CHECK(cudnnSetStream(m_handle.get(), stream));
  PTXBENCH_CUDNN_FE_CHECK(m_graph.execute(m_handle.get(), m_pointers.data(),
                                          static_cast<int>(m_pointers.size()), m_workspace.get()));
  PTXBENCH_CUDA_CHECK(
      launch_cudnn_gqa_finish(m_shape, m_plan, index, call.buffers[call.num_buffers - 2],
                              static_cast<float*>(call.buffers[call.num_buffers - 1]), stream));
}

// Captures one call on the private stream. A failure ends the capture and comes back as
// `unsupported` (cudaGetLastError clears the capture's error state).
util::Expected<cudaGraphExec_t> CudnnGqa::capture(const PtxbenchCall& call) {
  const cudaStream_t stream = m_capture_stream.get();
  const auto failed = [](std::string why) {
    static_cast<void>(cudaGetLastError());
    return util::make_error(util::ErrorKind::unsupported, std::move(why));
  };
  if (const cudaError_t begun = cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal);
      begun != cudaSuccess)
    return failed(cudaGetErrorName(begun));
  std::string enqueue_error;
  try {
    enqueue(call, stream);
  } catch (const LibraryError& error) { // the capture must be ended before anything else
    enqueue_error = error.what();
  }
  cudaGraph_t raw = nullptr;
  const cudaError_t ended = cudaStreamEndCapture(stream, &raw);
  const CudaGraph graph(raw);
  if (!enqueue_error.empty())
    return failed(enqueue_error);
  if (ended != cudaSuccess)
    return failed(cudaGetErrorName(ended));
  cudaGraphExec_t exec = nullptr;
  if (const cudaError_t made = cudaGraphInstantiate(&exec, graph.get(), 0); made != cudaSuccess)
    return failed(cudaGetErrorName(made));
  return exec;
}

util::Expected<cudaGraphExec_t> CudnnGqa::captured(const PtxbenchCall& call) {
  std::vector<void*> buffers(call.buffers, call.buffers + call.num_buffers);
  for (const CapturedCall& known : m_captured)
    if (known.buffers == buffers && known.scale == m_scale)
      return known.exec.get();
  PTXBENCH_TRY_ASSIGN(auto exec, capture(call));
  if (m_captured.size() == kMaxCaptured)
    m_captured.erase(m_captured.begin());
  m_captured.push_back(CapturedCall{std::move(buffers), m_scale, CudaGraphExec(exec)});
  return exec;
}

util::Status CudnnGqa::run(const PtxbenchCall& call) {
  PTXBENCH_TRY(check_call(call, m_shape.layout == GqaLayout::paged_prefill ? 8 : 7, 1));
  const auto stream = static_cast<cudaStream_t>(call.stream);
  m_scale = call.scalars[0].f32;
  if (m_launch == GqaLaunch::graph) {
    auto exec = captured(call);
    if (exec) {
      PTXBENCH_CUDA_CHECK(cudaGraphLaunch(*exec, stream));
      return util::Ok{};
    }
    m_launch = GqaLaunch::direct;
    m_capture_failure = exec.error().message;
  }
  enqueue(call, stream);
  return util::Ok{};
}

// Element offsets are int32 tensors: every offset cuDNN may see must fit.
bool offsets_fit(const GqaShape& s) {
  constexpr std::int64_t kMax = std::numeric_limits<std::int32_t>::max();
  return s.q_tokens * s.qo_heads * s.head_dim <= kMax &&
         s.kv_rows * s.kv_heads * s.head_dim <= kMax;
}

} // namespace

ReferencePtr make_cudnn_gqa(const GqaShape& shape, const GqaPlan& plan, GqaLaunch launch) {
  if (!offsets_fit(shape))
    return util::make_error(util::ErrorKind::unsupported,
                            "cuDNN SDPA GQA: element offsets exceed int32");
  if (plan.max_q_len < 1 || plan.max_kv_len < 1 || plan.max_q_len > shape.q_tokens)
    return util::make_error(util::ErrorKind::unsupported,
                            fmt::format("cuDNN SDPA GQA: the plan needs a query and a key "
                                        "(longest sequences {} and {})",
                                        plan.max_q_len, plan.max_kv_len));
  // AUTO lets the frontend pick cuDNN's unified SDPA node where it claims support; when the
  // backend then has no engine for it, the composite node (the graph PyTorch builds) is tried.
  std::string refused;
  for (const auto implementation :
       {fe::AttentionImplementation_t::AUTO, fe::AttentionImplementation_t::COMPOSITE}) {
    auto gqa = std::make_unique<CudnnGqa>(shape, plan, implementation, launch);
    auto built = gqa->build();
    if (built)
      return std::unique_ptr<Reference>(std::move(gqa));
    refused += (refused.empty() ? "" : "; then ") + built.error().message;
  }
  return util::make_error(util::ErrorKind::unsupported, refused);
}

} // namespace ptxbench::reference
