#include "adapt/balance.hpp"

#include "adapt/dataset.hpp"
#include "util/hash.hpp"

#include <algorithm>
#include <fmt/core.h>
#include <map>
#include <numeric>
#include <tuple>

namespace ptxbench::adapt {
namespace {

namespace fs = std::filesystem;

using StratumKey = std::tuple<std::string, std::int64_t>; // category, turn

struct Decision {
  bool kept = false;
  std::string reason;
};

std::string seeded_order_key(std::uint64_t seed, const std::string& id) {
  return util::sha256_hex(std::to_string(seed) + ":" + id);
}

// Fills decisions for one problem's records (indices into `records`).
void balance_problem(const std::vector<FailureRecord>& records,
                     const std::vector<std::size_t>& members, const BalanceOptions& options,
                     std::vector<Decision>& decisions) {
  const std::int64_t n = static_cast<std::int64_t>(members.size());
  if (n <= options.cap) {
    for (std::size_t i : members)
      decisions[i] = {true, fmt::format("problem has {} records, within cap {}", n, options.cap)};
    return;
  }
  std::map<StratumKey, std::vector<std::size_t>> strata;
  for (std::size_t i : members)
    strata[{records[i].category, records[i].turn}].push_back(i);
  std::vector<std::int64_t> sizes;
  for (const auto& [key, indices] : strata)
    sizes.push_back(static_cast<std::int64_t>(indices.size()));
  const std::vector<std::int64_t> seats = allocate_seats(sizes, options.cap);
  std::size_t s = 0;
  for (auto& [key, indices] : strata) {
    std::sort(indices.begin(), indices.end(), [&](std::size_t a, std::size_t b) {
      return seeded_order_key(options.seed, records[a].id) <
             seeded_order_key(options.seed, records[b].id);
    });
    const std::string where =
        fmt::format("stratum ({}, turn {}): {} seats for {} records", std::get<0>(key),
                    std::get<1>(key), seats[s], indices.size());
    for (std::size_t rank = 0; rank < indices.size(); ++rank) {
      const bool keep = static_cast<std::int64_t>(rank) < seats[s];
      decisions[indices[rank]] = {keep, (keep ? "kept, " : "over cap, ") + where};
    }
    ++s;
  }
}

Json decisions_json(const std::vector<FailureRecord>& records,
                    const std::vector<Decision>& decisions, bool kept) {
  Json rows = Json::array();
  for (std::size_t i = 0; i < records.size(); ++i)
    if (decisions[i].kept == kept)
      rows.push_back(Json{{"id", records[i].id},
                          {"problem", records[i].trajectory_key.problem},
                          {"reason", decisions[i].reason}});
  return rows;
}

std::vector<Decision> decide(const std::vector<FailureRecord>& records,
                             const BalanceOptions& options) {
  std::map<std::string, std::vector<std::size_t>> problems;
  for (std::size_t i = 0; i < records.size(); ++i)
    problems[records[i].trajectory_key.problem].push_back(i);
  std::vector<Decision> decisions(records.size());
  for (const auto& [problem, members] : problems)
    balance_problem(records, members, options, decisions);
  return decisions;
}

} // namespace

std::vector<std::int64_t> allocate_seats(std::span<const std::int64_t> sizes, std::int64_t cap) {
  const std::int64_t n = std::accumulate(sizes.begin(), sizes.end(), std::int64_t{0});
  std::vector<std::int64_t> seats(sizes.begin(), sizes.end());
  if (n <= cap)
    return seats;
  std::int64_t left = cap;
  for (std::size_t s = 0; s < sizes.size(); ++s) {
    seats[s] = cap * sizes[s] / n;
    left -= seats[s];
  }
  std::vector<std::size_t> order(sizes.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  // Largest remainder first; stable_sort keeps stratum-key order among equal remainders.
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return cap * sizes[a] % n > cap * sizes[b] % n;
  });
  for (std::size_t k = 0; k < order.size() && left > 0; ++k, --left)
    ++seats[order[k]];
  return seats;
}

std::vector<std::size_t> balance_indices(const std::vector<FailureRecord>& records,
                                         const BalanceOptions& options) {
  const std::vector<Decision> decisions = decide(records, options);
  std::vector<std::size_t> kept;
  for (std::size_t i = 0; i < records.size(); ++i)
    if (decisions[i].kept)
      kept.push_back(i);
  return kept;
}

util::Expected<BalanceResult> balance_failures(const fs::path& dir, const BalanceOptions& options) {
  if (options.cap < 1)
    return util::make_error(util::ErrorKind::invalid_input, "--cap must be at least 1");
  const fs::path input = stage_dir(dir, DatasetKind::fixit, "collect") / "failures.jsonl";
  PTXBENCH_TRY_ASSIGN(auto records, read_jsonl<FailureRecord>(input, failure_from_json));
  if (records.empty())
    return util::make_error(util::ErrorKind::invalid_input,
                            input.string() + ": no failures to balance; nothing written");
  const std::vector<Decision> decisions = decide(records, options);
  std::vector<FailureRecord> selected;
  Composition pre, post;
  for (std::size_t i = 0; i < records.size(); ++i) {
    ++pre[composition_key(records[i])];
    if (!decisions[i].kept)
      continue;
    ++post[composition_key(records[i])];
    selected.push_back(records[i]);
  }
  PTXBENCH_TRY_ASSIGN(auto input_sha, file_sha256(input));
  const std::string text = to_jsonl(selected);
  const Json manifest{{"stage", "balance"},
                      {"strategy", kBalanceStrategy},
                      {"cap", options.cap},
                      {"seed", options.seed},
                      {"inputs", Json{{"failures.jsonl", input_sha}}},
                      {"before", records.size()},
                      {"after", selected.size()},
                      {"counts", composition_json(pre, post)},
                      {"kept", decisions_json(records, decisions, true)},
                      {"dropped", decisions_json(records, decisions, false)},
                      {"files", Json{{"selected.jsonl", util::sha256_hex(text)}}}};
  const fs::path out = stage_dir(dir, DatasetKind::fixit, "balance");
  PTXBENCH_TRY(write_if_changed(out / "selected.jsonl", text));
  PTXBENCH_TRY(write_if_changed(out / "manifest.json", manifest_text(manifest)));
  return BalanceResult{static_cast<std::int64_t>(records.size()),
                       static_cast<std::int64_t>(selected.size()), out / "selected.jsonl"};
}

} // namespace ptxbench::adapt
