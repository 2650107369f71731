// The balance stage: a per-problem cap on the failures sent for repair, keeping the mix of
// error categories and turns (the original's build_rebalanced_fixit_error_collection.py,
// strategy "proportional_by_definition_error_type_turn").
//
// Problem: collected failures are dominated by a few problems and by compile errors of early
// turns; repairing them all costs teacher calls and skews the dataset. The cap must keep each
// problem's composition, and the same input must always select the same records.
//
// Approach: records are grouped by problem; a problem with at most `cap` records keeps them
// all. Otherwise its records are split into strata by (category, turn) and the cap is shared
// by the largest-remainder (Hamilton) method: stratum s of size n_s out of n gets
// floor(cap * n_s / n) seats, and the cap - sum(floors) seats left over go one each to the
// strata with the largest remainders cap * n_s mod n, ties to the smaller stratum key
// (category name, then turn). Within a stratum the records are ordered by
// sha256("<seed>:<id>") and the first seats are kept, a shuffle that depends only on the seed
// and the records themselves, not on the order they were collected in.
//
// Invariants: a stratum never gets more seats than records (a leftover seat only goes to a
// stratum with a non-zero remainder, whose floor is then below n_s); a capped problem keeps
// exactly `cap` records; kept records stay in input order.
#pragma once

#include "adapt/records.hpp"
#include "util/error.hpp"

#include <cstdint>
#include <filesystem>
#include <span>
#include <vector>

namespace ptxbench::adapt {

inline constexpr std::string_view kBalanceStrategy = "proportional_by_definition_error_type_turn";

// Seats per stratum (sizes in stratum-key order) for a cap; sizes themselves when their sum is
// at most `cap`.
std::vector<std::int64_t> allocate_seats(std::span<const std::int64_t> sizes, std::int64_t cap);

struct BalanceOptions {
  std::int64_t cap = 33;
  std::uint64_t seed = 0;
};

struct BalanceResult {
  std::int64_t before = 0;
  std::int64_t kept = 0;
  std::filesystem::path selected_file;
};

// Indices of `records` to keep, in input order.
std::vector<std::size_t> balance_indices(const std::vector<FailureRecord>& records,
                                         const BalanceOptions& options);

// DIR/fixit/collect/failures.jsonl → DIR/fixit/balance/{selected.jsonl,manifest.json}.
util::Expected<BalanceResult> balance_failures(const std::filesystem::path& dir,
                                               const BalanceOptions& options);

} // namespace ptxbench::adapt
