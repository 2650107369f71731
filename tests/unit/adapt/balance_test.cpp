#include "adapt/balance.hpp"
#include "adapt/dataset.hpp"
#include "adapt_test_support.hpp"
#include "support/golden.hpp"

#include <algorithm>
#include <gtest/gtest.h>
#include <map>
#include <numeric>
#include <random>
#include <set>

namespace ptxbench::adapt {
namespace {

using Seats = std::vector<std::int64_t>;

// cap 33 over 20/10/5 (n = 35): quotas 18.857, 9.429, 4.714 → floors 18/9/4 (31 seats),
// remainders 33*20 mod 35 = 30, 33*10 mod 35 = 15, 33*5 mod 35 = 25 → the two leftover seats
// go to the first and third strata: 19/9/5.
TEST(AllocateSeats, HandWorkedCap33Over20_10_5) {
  EXPECT_EQ(allocate_seats(Seats{20, 10, 5}, 33), (Seats{19, 9, 5}));
}

// cap 10 over 7/7/7 (n = 21): floors 3/3/3, remainders all 70 mod 21 = 7 → one leftover seat,
// to the first stratum in key order.
TEST(AllocateSeats, EqualRemaindersGoToTheEarlierStratum) {
  EXPECT_EQ(allocate_seats(Seats{7, 7, 7}, 10), (Seats{4, 3, 3}));
  EXPECT_EQ(allocate_seats(Seats{1, 1, 1}, 2), (Seats{1, 1, 0}));
}

// cap 10 over 1/1/18 (n = 20): floors 0/0/9, remainders 10/10/0 → the leftover seat goes to
// the first one-record stratum; the big stratum keeps 9, not its whole share of 9.
TEST(AllocateSeats, StrataSmallerThanOneSeatShareALeftover) {
  EXPECT_EQ(allocate_seats(Seats{1, 1, 18}, 10), (Seats{1, 0, 9}));
}

TEST(AllocateSeats, CapAtLeastTheTotalKeepsEverything) {
  EXPECT_EQ(allocate_seats(Seats{3, 4}, 7), (Seats{3, 4}));
  EXPECT_EQ(allocate_seats(Seats{3, 4}, 100), (Seats{3, 4}));
}

TEST(AllocateSeats, NeverMoreThanAStratumHoldsAndAlwaysExactlyTheCap) {
  std::mt19937 rng(7);
  for (int round = 0; round < 2000; ++round) {
    Seats sizes(1 + rng() % 8);
    for (auto& s : sizes)
      s = 1 + rng() % 30;
    const std::int64_t n = std::accumulate(sizes.begin(), sizes.end(), std::int64_t{0});
    const std::int64_t cap = 1 + static_cast<std::int64_t>(rng() % static_cast<unsigned>(n));
    const Seats seats = allocate_seats(sizes, cap);
    EXPECT_EQ(std::accumulate(seats.begin(), seats.end(), std::int64_t{0}), std::min(cap, n));
    for (std::size_t s = 0; s < sizes.size(); ++s)
      EXPECT_LE(seats[s], sizes[s]);
  }
}

FailureRecord failure(const std::string& problem, const std::string& category, std::int64_t turn,
                      int n) {
  FailureRecord f;
  f.kernel_source = problem + category + std::to_string(turn) + "#" + std::to_string(n);
  f.id = "id-" + f.kernel_source;
  f.trajectory_key = {"m", problem, "v", 0};
  f.category = category;
  f.turn = turn;
  return f;
}

// gemm: 20 compile/0, 10 runtime/1, 5 numerical/2 → 19/9/5 under cap 33; mha: 4 records, kept.
std::vector<FailureRecord> mixed_failures() {
  std::vector<FailureRecord> records;
  for (int i = 0; i < 20; ++i)
    records.push_back(failure("gemm", "compile", 0, i));
  for (int i = 0; i < 10; ++i)
    records.push_back(failure("gemm", "runtime", 1, i));
  for (int i = 0; i < 5; ++i)
    records.push_back(failure("gemm", "numerical", 2, i));
  for (int i = 0; i < 4; ++i)
    records.push_back(failure("mha", "timeout", 0, i));
  return records;
}

TEST(Balance, CapsEachProblemProportionallyAndKeepsSmallOnes) {
  const auto records = mixed_failures();
  const auto kept = balance_indices(records, BalanceOptions{33, 0});
  std::map<std::string, int> by_stratum;
  for (std::size_t i : kept)
    ++by_stratum[records[i].trajectory_key.problem + "/" + records[i].category];
  EXPECT_EQ(by_stratum["gemm/compile"], 19);
  EXPECT_EQ(by_stratum["gemm/runtime"], 9);
  EXPECT_EQ(by_stratum["gemm/numerical"], 5);
  EXPECT_EQ(by_stratum["mha/timeout"], 4);
  EXPECT_TRUE(std::is_sorted(kept.begin(), kept.end()));
}

TEST(Balance, SelectionDependsOnTheSeedNotOnInputOrder) {
  auto records = mixed_failures();
  auto ids = [](const std::vector<FailureRecord>& r, const std::vector<std::size_t>& kept) {
    std::set<std::string> out;
    for (std::size_t i : kept)
      out.insert(r[i].id);
    return out;
  };
  const auto first = ids(records, balance_indices(records, BalanceOptions{33, 0}));
  std::reverse(records.begin(), records.end());
  EXPECT_EQ(ids(records, balance_indices(records, BalanceOptions{33, 0})), first);
  EXPECT_NE(ids(records, balance_indices(records, BalanceOptions{33, 1})), first);
}

TEST(Balance, WritesSelectionAndManifestAndIsIdempotent) {
  test_support::ScratchDir dir;
  ASSERT_TRUE(
      write_if_changed(dir.path() / "fixit/collect/failures.jsonl", to_jsonl(mixed_failures()))
          .has_value());
  auto result = balance_failures(dir.path(), BalanceOptions{33, 0});
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ(result->before, 39);
  EXPECT_EQ(result->kept, 37);
  const auto manifest_path = dir.path() / "fixit/balance/manifest.json";
  const std::string manifest = test::read(manifest_path);
  const auto selected_time = std::filesystem::last_write_time(result->selected_file);
  const auto manifest_time = std::filesystem::last_write_time(manifest_path);
  ASSERT_TRUE(balance_failures(dir.path(), BalanceOptions{33, 0}));
  EXPECT_EQ(test::read(manifest_path), manifest);
  EXPECT_EQ(std::filesystem::last_write_time(result->selected_file), selected_time);
  EXPECT_EQ(std::filesystem::last_write_time(manifest_path), manifest_time);
  test_support::expect_golden("adapt/balance_manifest.json", manifest);
}

TEST(Balance, EmptyInputIsAnErrorAndWritesNothing) {
  test_support::ScratchDir dir;
  dir.write("fixit/collect/failures.jsonl", "");
  auto result = balance_failures(dir.path(), BalanceOptions{33, 0});
  ASSERT_FALSE(result);
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "fixit/balance"));
}

} // namespace
} // namespace ptxbench::adapt
