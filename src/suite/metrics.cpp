#include "suite/metrics.hpp"

#include "suite/safetensors.hpp"

#include <algorithm>
#include <fmt/core.h>
#include <variant>

namespace ptxbench::suite {
namespace {

std::int64_t axis_or_zero(const Problem& problem, const std::string& name) {
  if (auto value = problem.workload.axis_value(name))
    return *value;
  const trace::Axis* axis = problem.definition.find_axis(name);
  return axis != nullptr ? axis->value : 0;
}

std::int64_t sequence_pairs(std::int64_t n_q, std::int64_t n_kv, Mask mask) {
  if (mask == Mask::none)
    return n_q * n_kv;
  std::int64_t pairs = 0;
  for (std::int64_t i = 0; i < n_q; ++i)
    pairs += std::clamp<std::int64_t>(i + 1 + n_kv - n_q, 0, n_kv);
  return pairs;
}

util::Expected<std::vector<std::int32_t>>
load_indices(const Problem& problem, const std::filesystem::path& root, std::string_view input) {
  for (const auto& [name, spec] : problem.workload.inputs) {
    const auto* blob = std::get_if<trace::SafetensorsInput>(&spec);
    if (name != input || blob == nullptr)
      continue;
    const std::filesystem::path path = std::filesystem::path(blob->path).is_absolute()
                                           ? std::filesystem::path(blob->path)
                                           : root / blob->path;
    PTXBENCH_TRY_ASSIGN(auto tensor,
                        read_safetensors_tensor(path.lexically_normal(), blob->tensor_key));
    return as_i32(tensor);
  }
  return std::vector<std::int32_t>{};
}

util::Expected<std::int64_t> gqa_flops(const Problem& problem, const std::filesystem::path& root) {
  PTXBENCH_TRY_ASSIGN(auto qo_indptr, load_indices(problem, root, "qo_indptr"));
  PTXBENCH_TRY_ASSIGN(auto kv_indptr, load_indices(problem, root, "kv_indptr"));
  if (kv_indptr.empty())
    return util::make_error(util::ErrorKind::invalid_input,
                            fmt::format("{}: workload has no kv_indptr blob", problem.name()));
  const std::int64_t pairs = attended_pairs(qo_indptr, kv_indptr, problem.mask);
  return 4 * axis_or_zero(problem, "num_qo_heads") * axis_or_zero(problem, "head_dim") * pairs;
}

std::int64_t dense_flops(const Problem& problem) {
  auto axis = [&](const char* name) { return axis_or_zero(problem, name); };
  if (problem.kind == OpKind::gemm)
    return 2 * axis("M") * axis("N") * axis("K");
  const std::int64_t forward = 4 * axis("B") * axis("H") * axis("S") * axis("S") * axis("D");
  const std::int64_t full = problem.kind == OpKind::mha_backward ? forward * 5 / 2 : forward;
  return problem.mask == Mask::causal ? full / 2 : full;
}

} // namespace

std::int64_t attended_pairs(const std::vector<std::int32_t>& qo_indptr,
                            const std::vector<std::int32_t>& kv_indptr, Mask mask) {
  std::int64_t pairs = 0;
  for (std::size_t b = 0; b + 1 < kv_indptr.size(); ++b) {
    const std::int64_t n_kv = kv_indptr[b + 1] - kv_indptr[b];
    const std::int64_t n_q = qo_indptr.empty() ? 1 : qo_indptr[b + 1] - qo_indptr[b];
    pairs += sequence_pairs(n_q, n_kv, mask);
  }
  return pairs;
}

util::Status compute_metrics(Problem& problem, const std::filesystem::path& root) {
  problem.io_bytes = 0;
  for (const auto* tensors : {&problem.inputs, &problem.outputs})
    for (const ResolvedTensor& tensor : *tensors)
      problem.io_bytes += tensor.size_bytes();
  if (problem.kind == OpKind::gemm || problem.kind == OpKind::mha_forward ||
      problem.kind == OpKind::mha_backward) {
    problem.flops = dense_flops(problem);
    return util::Ok{};
  }
  PTXBENCH_TRY_ASSIGN(auto flops, gqa_flops(problem, root));
  problem.flops = flops;
  return util::Ok{};
}

} // namespace ptxbench::suite
