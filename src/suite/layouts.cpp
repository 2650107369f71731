#include "suite/layouts.hpp"

#include "suite/philox.hpp"
#include "suite/safetensors.hpp"

#include <cmath>
#include <fmt/core.h>
#include <map>
#include <numeric>
#include <variant>

namespace ptxbench::suite {
namespace {

constexpr std::uint32_t kStepQueryLengths = 1;
constexpr std::uint32_t kStepExtraKv = 2;
constexpr std::uint32_t kStepDecodeKv = 3;
constexpr std::uint32_t kStepPages = 4;

std::uint64_t random_u64(std::uint64_t seed, std::uint32_t step, std::uint64_t index) {
  const PhiloxCounter bits = draw_block(seed, step, index, RandomStream::layout);
  return (static_cast<std::uint64_t>(bits.word[0]) << 32) | bits.word[1];
}

double random_unit(std::uint64_t seed, std::uint32_t step, std::uint64_t index) {
  return uniform_open(draw_block(seed, step, index, RandomStream::layout).word[0]);
}

bool has_input(const trace::Definition& definition, std::string_view name) {
  return definition.find_input(std::string(name)) != nullptr;
}

struct LayoutAxes {
  std::int64_t sequences = 0;
  std::int64_t total_q = 0;  // 0 for decode
  std::int64_t total_kv = 0; // tokens (ragged) or page indices (paged)
  std::int64_t num_pages = 0;
};

util::Expected<LayoutAxes> layout_axes(const trace::Definition& definition,
                                       const trace::Workload& workload) {
  auto axis = [&](const char* name) { return workload.axis_value(name).value_or(0); };
  LayoutAxes axes{axis("len_indptr") - 1, axis("total_q"), axis("total_kv"), axis("num_pages")};
  if (has_input(definition, "kv_indices"))
    axes.total_kv = axis("num_kv_indices");
  const bool prefill = has_input(definition, "qo_indptr");
  if (axes.sequences < 1 || axes.total_kv < axes.sequences ||
      (prefill && (axes.total_q < axes.sequences || axes.total_kv < axes.total_q)) ||
      (has_input(definition, "kv_indices") && axes.num_pages < axes.total_kv))
    return util::make_error(
        util::ErrorKind::invalid_input,
        fmt::format("{} workload {}: axes admit no index layout", definition.name, workload.uuid));
  return axes;
}

} // namespace

std::uint64_t layout_seed(std::string_view workload_uuid) {
  std::uint64_t hash = 0xcbf29ce484222325ull;
  for (char c : workload_uuid) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 0x100000001b3ull;
  }
  return hash;
}

std::vector<std::int32_t> split_total(std::int64_t total, std::int64_t parts, std::int64_t min_part,
                                      std::uint64_t seed, std::uint32_t step) {
  std::vector<double> weights(static_cast<std::size_t>(parts));
  for (std::size_t i = 0; i < weights.size(); ++i)
    weights[i] = 0.5 + random_unit(seed, step, i);
  const double weight_sum = std::accumulate(weights.begin(), weights.end(), 0.0);
  const std::int64_t spare = total - parts * min_part;
  std::vector<std::int32_t> lengths(weights.size());
  std::int64_t given = 0;
  for (std::size_t i = 0; i < weights.size(); ++i) {
    const auto share =
        static_cast<std::int64_t>(std::floor(static_cast<double>(spare) * weights[i] / weight_sum));
    lengths[i] = static_cast<std::int32_t>(min_part + share);
    given += min_part + share;
  }
  for (std::size_t i = 0; given < total; ++i, ++given)
    ++lengths[i % lengths.size()];
  return lengths;
}

std::vector<std::int32_t> offsets_from_lengths(const std::vector<std::int32_t>& lengths) {
  std::vector<std::int32_t> offsets(lengths.size() + 1, 0);
  std::partial_sum(lengths.begin(), lengths.end(), offsets.begin() + 1);
  return offsets;
}

std::vector<std::int32_t> distinct_pages(std::int64_t count, std::int64_t pool, std::uint64_t seed,
                                         std::uint32_t step) {
  std::vector<std::int32_t> pages(static_cast<std::size_t>(pool));
  std::iota(pages.begin(), pages.end(), 0);
  for (std::int64_t i = 0; i < count; ++i) {
    const auto remaining = static_cast<std::uint64_t>(pool - i);
    const auto j = static_cast<std::size_t>(i) + random_u64(seed, step, i) % remaining;
    std::swap(pages[static_cast<std::size_t>(i)], pages[j]);
  }
  pages.resize(static_cast<std::size_t>(count));
  return pages;
}

util::Expected<std::vector<NamedIndices>> build_index_layout(const trace::Definition& definition,
                                                             const trace::Workload& workload) {
  PTXBENCH_TRY_ASSIGN(auto axes, layout_axes(definition, workload));
  const std::uint64_t seed = layout_seed(workload.uuid);
  std::vector<NamedIndices> out;
  std::vector<std::int32_t> kv_lengths;
  if (has_input(definition, "qo_indptr")) {
    const auto q_lengths = split_total(axes.total_q, axes.sequences, 1, seed, kStepQueryLengths);
    kv_lengths = split_total(axes.total_kv - axes.total_q, axes.sequences, 0, seed, kStepExtraKv);
    for (std::size_t i = 0; i < kv_lengths.size(); ++i)
      kv_lengths[i] += q_lengths[i];
    out.push_back({"qo_indptr", offsets_from_lengths(q_lengths)});
  } else {
    kv_lengths = split_total(axes.total_kv, axes.sequences, 1, seed, kStepDecodeKv);
  }
  out.push_back({"kv_indptr", offsets_from_lengths(kv_lengths)});
  if (has_input(definition, "kv_indices"))
    out.push_back({"kv_indices", distinct_pages(axes.total_kv, axes.num_pages, seed, kStepPages)});
  return out;
}

util::Expected<std::vector<BlobFile>> build_blob_files(const trace::Definition& definition,
                                                       const trace::Workload& workload) {
  PTXBENCH_TRY_ASSIGN(auto layout, build_index_layout(definition, workload));
  std::map<std::string, std::vector<SafetensorsTensor>> files;
  for (const auto& [input, spec] : workload.inputs) {
    const auto* blob = std::get_if<trace::SafetensorsInput>(&spec);
    if (blob == nullptr)
      continue;
    const NamedIndices* found = nullptr;
    for (const NamedIndices& indices : layout)
      if (indices.name == input)
        found = &indices;
    if (found == nullptr)
      return util::make_error(
          util::ErrorKind::invalid_input,
          fmt::format("{}: no generated layout for blob input {}", definition.name, input));
    files[blob->path].push_back(make_i32_tensor(blob->tensor_key, found->values));
  }
  std::vector<BlobFile> out;
  out.reserve(files.size());
  for (const auto& [path, tensors] : files)
    out.push_back({path, encode_safetensors(tensors)});
  return out;
}

} // namespace ptxbench::suite
