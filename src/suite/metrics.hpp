// FLOPs and bytes of a problem's default workload.
//
// Conventions (the ones attention papers and the original PTXBench tables use):
// - GEMM: 2*M*N*K.
// - MHA forward: two matmuls of 2*S*S*D each per (batch, head): 4*B*H*S^2*D. Causal counts
//   exactly half of that, 2*B*H*S^2*D (FlashAttention benchmark convention; the exact count of
//   attended pairs, S(S+1)/2, is larger by S/2 pairs, 0.01 % at S=4096).
// - MHA backward: 2.5x the forward (five matmuls instead of two), causal halved likewise.
// - GQA: 4*Hq*D per attended (query, key) pair, pairs counted exactly from the workload's
//   index layout with the bottom-right aligned causal mask: query i of a sequence with n_q
//   queries and n_kv keys attends min(n_kv, max(0, i + 1 + n_kv - n_q)) keys; decode attends
//   all n_kv keys.
// Bytes: every input and output tensor once (scalars are passed by value and count 0). For the
// paged problems this counts the whole KV-cache pool, not only the pages a workload touches.
#pragma once

#include "suite/problem.hpp"
#include "util/error.hpp"

#include <cstdint>
#include <filesystem>
#include <vector>

namespace ptxbench::suite {

// Attended (query, key) pairs of ragged sequences given by indptrs; an empty qo_indptr means
// one query per sequence (decode).
std::int64_t attended_pairs(const std::vector<std::int32_t>& qo_indptr,
                            const std::vector<std::int32_t>& kv_indptr, Mask mask);

// Fills problem.flops and problem.io_bytes; the GQA problems read their index blobs under
// `root` (the problems folder).
util::Status compute_metrics(Problem& problem, const std::filesystem::path& root);

} // namespace ptxbench::suite
