// Deterministic index layouts for the GQA workloads: sequence lengths and KV page assignments
// that match a workload's axes exactly.
//
// Problem. FlashInfer-Trace ships indptr/indices captured from a serving engine as safetensors
// blobs; random integers would be meaningless there. We need layouts with exactly the captured
// totals (sequence count, query tokens, page indices, pool size), reproducible byte for byte.
//
// Approach. Everything is drawn from Philox (philox.hpp, stream `layout`) keyed by a seed
// derived from the workload uuid (FNV-1a 64), so a layout is a function of the workload alone.
// Lengths: `parts` weights in [0.5, 1.5), each part gets min_part plus its floor share of the
// rest; the few tokens lost to flooring go one each to the first parts. Query lengths split
// total_q (at least 1 per sequence). KV lengths are q_len + an extra split of
// (total_kv - total_q) with zero allowed, so kv_len >= q_len and the bottom-right causal mask
// lets every query see at least itself; a decode layout (no qo_indptr) splits num_kv_indices
// with at least one page per request. Pages: a partial Fisher-Yates shuffle of [0, num_pages)
// takes the first num_kv_indices entries, so indices are distinct and in range, scattered
// over the pool as in a long-running server.
//
// Invariants. indptr[0] == 0, indptr non-decreasing, indptr.back() == the total axis;
// kv_indices distinct, each in [0, num_pages); equal (definition, workload) give equal bytes.
#pragma once

#include "trace/schema.hpp"
#include "util/error.hpp"

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace ptxbench::suite {

struct NamedIndices {
  std::string name; // the definition input it feeds (qo_indptr, kv_indptr, kv_indices)
  std::vector<std::int32_t> values;
};

std::uint64_t layout_seed(std::string_view workload_uuid);

// `parts` lengths, each >= min_part, summing to total.
std::vector<std::int32_t> split_total(std::int64_t total, std::int64_t parts, std::int64_t min_part,
                                      std::uint64_t seed, std::uint32_t step);
std::vector<std::int32_t> offsets_from_lengths(const std::vector<std::int32_t>& lengths);
// `count` distinct values of [0, pool).
std::vector<std::int32_t> distinct_pages(std::int64_t count, std::int64_t pool, std::uint64_t seed,
                                         std::uint32_t step);

// The index tensors a GQA workload needs (qo_indptr, kv_indptr, kv_indices, whichever the
// definition has), built from the workload's axes. invalid_input when the axes are inconsistent.
util::Expected<std::vector<NamedIndices>> build_index_layout(const trace::Definition& definition,
                                                             const trace::Workload& workload);

struct BlobFile {
  std::filesystem::path relative_path; // as the workload names it, e.g. ./blob/workloads/...
  std::string bytes;
};

// The safetensors files a workload references, with the tensors its blob inputs name.
util::Expected<std::vector<BlobFile>> build_blob_files(const trace::Definition& definition,
                                                       const trace::Workload& workload);

} // namespace ptxbench::suite
