#include "reference/shapes.hpp"

#include "suite/layouts.hpp"
#include "trace/schema.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <string_view>
#include <vector>

namespace ptxbench::reference {
namespace {

using trace::DType;
using util::ErrorKind;

util::Error unsupported(const suite::Problem& problem, std::string_view why) {
  return util::make_error(ErrorKind::unsupported,
                          fmt::format("reference for {}: {}", problem.name(), why));
}

// The tensors' dtypes and ranks, in ABI order (inputs then outputs).
bool tensors_are(const std::vector<suite::ResolvedTensor>& tensors,
                 const std::vector<std::pair<DType, std::size_t>>& expected) {
  if (tensors.size() != expected.size())
    return false;
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const auto& [dtype, rank] = expected[i];
    if (tensors[i].dtype != dtype)
      return false;
    if (rank == 0 ? !tensors[i].scalar : tensors[i].dims.size() != rank)
      return false;
  }
  return true;
}

constexpr std::pair<DType, std::size_t> kBf16_3{DType::bfloat16, 3};
constexpr std::pair<DType, std::size_t> kBf16_4{DType::bfloat16, 4};
constexpr std::pair<DType, std::size_t> kF32_2{DType::float32, 2};
constexpr std::pair<DType, std::size_t> kF32_3{DType::float32, 3};
constexpr std::pair<DType, std::size_t> kI32_1{DType::int32, 1};
constexpr std::pair<DType, std::size_t> kF32Scalar{DType::float32, 0};

bool supported_head_dim(std::int64_t d) {
  return d > 0 && d <= 256 && d % 8 == 0;
}

} // namespace

util::Expected<GemmShape> gemm_shape(const suite::Problem& problem) {
  if (problem.kind != suite::OpKind::gemm)
    return unsupported(problem, "not a GEMM");
  const std::pair<DType, std::size_t> bf16_2{DType::bfloat16, 2};
  if (!tensors_are(problem.inputs, {bf16_2, bf16_2}) || !tensors_are(problem.outputs, {bf16_2}))
    return unsupported(problem, "expects A[M,K], B[N,K] -> C[M,N], all bfloat16");
  const GemmShape shape{problem.inputs[0].dims[0], problem.inputs[1].dims[0],
                        problem.inputs[0].dims[1]};
  if (problem.inputs[1].dims[1] != shape.k || problem.outputs[0].dims[0] != shape.m ||
      problem.outputs[0].dims[1] != shape.n)
    return unsupported(problem, "inconsistent GEMM dims");
  if (shape.m <= 0 || shape.n <= 0 || shape.k <= 0 || shape.k % 8 != 0 || shape.n % 8 != 0)
    return unsupported(problem, "M, N, K must be positive and N, K multiples of 8");
  return shape;
}

util::Expected<MhaShape> mha_shape(const suite::Problem& problem) {
  const bool forward = problem.kind == suite::OpKind::mha_forward;
  if (!forward && problem.kind != suite::OpKind::mha_backward)
    return unsupported(problem, "not an MHA forward/backward problem");
  const bool layout_ok =
      forward
          ? tensors_are(problem.inputs, {kBf16_4, kBf16_4, kBf16_4}) &&
                tensors_are(problem.outputs, {kBf16_4, kF32_3})
          : tensors_are(problem.inputs, {kBf16_4, kBf16_4, kBf16_4, kBf16_4, kBf16_4, kF32_3}) &&
                tensors_are(problem.outputs, {kBf16_4, kBf16_4, kBf16_4});
  if (!layout_ok)
    return unsupported(problem, "expects BHSD bfloat16 tensors and f32 LSE");
  const auto& q = problem.inputs[0].dims;
  const MhaShape shape{q[0], q[1], q[2], q[3],
                       problem.mask == suite::Mask::causal ? MaskKind::causal : MaskKind::none};
  for (const auto* list : {&problem.inputs, &problem.outputs})
    for (const auto& tensor : *list) {
      const std::size_t rank = tensor.dims.size();
      if (!std::equal(tensor.dims.begin(), tensor.dims.end(), q.begin(),
                      q.begin() + static_cast<std::ptrdiff_t>(rank)))
        return unsupported(problem, fmt::format("{} does not match Q's [B,H,S,D]", tensor.name));
    }
  if (shape.rows() <= 0 || !supported_head_dim(shape.head_dim))
    return unsupported(problem, "B, H, S must be positive and D a multiple of 8 up to 256");
  return shape;
}

util::Expected<GqaShape> gqa_shape(const suite::Problem& problem) {
  GqaShape shape;
  const auto& in = problem.inputs;
  bool ok = false;
  switch (problem.kind) {
  case suite::OpKind::gqa_ragged_prefill:
    shape.layout = GqaLayout::ragged_prefill;
    ok = tensors_are(in, {kBf16_3, kBf16_3, kBf16_3, kI32_1, kI32_1, kF32Scalar});
    break;
  case suite::OpKind::gqa_paged_prefill:
    shape.layout = GqaLayout::paged_prefill;
    ok = tensors_are(in, {kBf16_3, kBf16_4, kBf16_4, kI32_1, kI32_1, kI32_1, kF32Scalar});
    break;
  case suite::OpKind::gqa_paged_decode:
    shape.layout = GqaLayout::paged_decode;
    ok = tensors_are(in, {kBf16_3, kBf16_4, kBf16_4, kI32_1, kI32_1, kF32Scalar});
    break;
  default:
    return unsupported(problem, "not a GQA problem");
  }
  if (!ok || !tensors_are(problem.outputs, {kBf16_3, kF32_2}))
    return unsupported(problem, "unexpected GQA inputs (page_size > 1 needs kv_last_page_len)");
  const auto& q = in[0].dims;
  const auto& k = in[1].dims;
  shape.q_tokens = q[0];
  shape.qo_heads = q[1];
  shape.head_dim = q[2];
  const bool paged = shape.layout != GqaLayout::ragged_prefill;
  shape.kv_heads = paged ? k[2] : k[1];
  shape.page_size = paged ? k[1] : 1;
  shape.kv_rows = paged ? k[0] * k[1] : k[0];
  shape.sequences = in[3].dims[0] - 1;
  shape.page_indices = paged ? in[shape.layout == GqaLayout::paged_decode ? 4 : 5].dims[0] : 0;
  shape.causal = shape.layout != GqaLayout::paged_decode && problem.mask == suite::Mask::causal;
  if (paged && shape.page_size != 1)
    return unsupported(problem, "only page_size 1 is supported");
  if (shape.sequences < 1 ||
      (shape.layout == GqaLayout::paged_decode && shape.q_tokens != shape.sequences))
    return unsupported(problem, "needs at least one sequence (decode: one query per sequence)");
  if (shape.kv_heads <= 0 || shape.qo_heads % shape.kv_heads != 0 ||
      !supported_head_dim(shape.head_dim) || (paged ? k[3] : k[2]) != shape.head_dim)
    return unsupported(problem, "Hq must be a multiple of Hkv and D a multiple of 8 up to 256");
  return shape;
}

namespace {

util::Error bad_indptr(std::string_view name, std::string_view why) {
  return util::make_error(ErrorKind::invalid_input, fmt::format("GQA {}: {}", name, why));
}

// The longest sequence of a well-formed indptr over `total` rows.
util::Expected<std::int64_t> longest(std::string_view name, const std::vector<std::int32_t>& indptr,
                                     std::int64_t sequences, std::int64_t total) {
  if (static_cast<std::int64_t>(indptr.size()) != sequences + 1)
    return bad_indptr(name, fmt::format("has {} entries, expected {} (sequences + 1)",
                                        indptr.size(), sequences + 1));
  if (indptr.front() != 0)
    return bad_indptr(name, fmt::format("starts at {}, not 0", indptr[0]));
  std::int64_t max = 0;
  for (std::size_t b = 1; b < indptr.size(); ++b) {
    if (indptr[b] < indptr[b - 1])
      return bad_indptr(
          name, fmt::format("decreases at entry {} ({} after {})", b, indptr[b], indptr[b - 1]));
    max = std::max<std::int64_t>(max, indptr[b] - indptr[b - 1]);
  }
  if (indptr.back() != total)
    return bad_indptr(name,
                      fmt::format("ends at {}, but its tensor has {} rows", indptr.back(), total));
  return max;
}

const std::vector<std::int32_t>* named(const std::vector<suite::NamedIndices>& layout,
                                       std::string_view name) {
  for (const auto& indices : layout)
    if (indices.name == name)
      return &indices.values;
  return nullptr;
}

} // namespace

util::Expected<GqaPlan> gqa_plan(const GqaShape& shape, const std::vector<std::int32_t>& qo_indptr,
                                 const std::vector<std::int32_t>& kv_indptr) {
  const bool decode = shape.layout == GqaLayout::paged_decode;
  if (decode != qo_indptr.empty())
    return bad_indptr("qo_indptr", decode ? "must be absent for decode" : "is missing");
  GqaPlan plan{1, 0};
  if (!decode) {
    PTXBENCH_TRY_ASSIGN(auto q, longest("qo_indptr", qo_indptr, shape.sequences, shape.q_tokens));
    plan.max_q_len = q;
  }
  const std::int64_t kv_total =
      shape.layout == GqaLayout::ragged_prefill ? shape.kv_rows : shape.page_indices;
  PTXBENCH_TRY_ASSIGN(auto kv, longest("kv_indptr", kv_indptr, shape.sequences, kv_total));
  plan.max_kv_len = kv;
  return plan;
}

util::Expected<GqaIndptrs> gqa_indptrs(const suite::Problem& problem) {
  PTXBENCH_TRY_ASSIGN(auto layout, suite::build_index_layout(problem.definition, problem.workload));
  const auto* kv = named(layout, "kv_indptr");
  if (kv == nullptr)
    return bad_indptr("kv_indptr", "the workload layout has none");
  const auto* qo = named(layout, "qo_indptr");
  return GqaIndptrs{qo != nullptr ? *qo : std::vector<std::int32_t>{}, *kv};
}

util::Expected<GqaPlan> gqa_plan(const suite::Problem& problem, const GqaShape& shape) {
  PTXBENCH_TRY_ASSIGN(auto indptrs, gqa_indptrs(problem));
  return gqa_plan(shape, indptrs.qo_indptr, indptrs.kv_indptr);
}

} // namespace ptxbench::reference
