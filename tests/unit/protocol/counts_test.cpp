// The typed counts reply (protocol/counts.hpp): what the counter measured goes through JSON and
// comes back equal, NaN included; the JSON is a golden file; malformed counts are a bad_response
// that names the JSON path, never an exception.
#include "protocol/counts.hpp"
#include "support/golden.hpp"

#include <cmath>
#include <gtest/gtest.h>
#include <limits>

namespace ptxbench::protocol {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// A counter's result on a B200 (the metric names of sass/counters.hpp's sm_100a rows): two
// kernels, the second with a value its passes could not complete.
measure::InstructionCounts blackwell_counts() {
  measure::InstructionCounts counts;
  counts.arch = "sm_100a";
  counts.metrics = {{"smsp__sass_inst_executed_op_utcmma.sum", 2048.0},
                    {"smsp__sass_inst_executed_op_tmem_ldt.sum", kNaN},
                    {"sm__ops_path_tensor_op_utchmma_src_bf16_dst_fp32.sum", 6.01295e11}};
  counts.kernels = {"2", "3"};
  counts.range_values = {{2048.0, 512.0, 6.01295e11}, {0.0, kNaN, 0.0}};
  counts.passes = 2;
  counts.pass_ms = 48.5;
  counts.calls = 2;
  counts.replay = measure::CounterReplay::user;
  counts.steps = {{"start", std::chrono::microseconds(1500)},
                  {"call", std::chrono::microseconds(250)},
                  {"start", std::chrono::microseconds(500)}};
  return counts;
}

TEST(CountsCodec, ACountersResultRoundTripsThroughJsonNaNIncluded) {
  const Counts counts = counts_of(blackwell_counts(), "GB100",
                                  {"smsp__sass_inst_executed_op_utccp.sum"}, "opened at prepare");
  EXPECT_EQ(counts.metrics.size(), 3u);
  EXPECT_EQ(counts.kernels(), (std::vector<std::string>{"2", "3"}));
  ASSERT_EQ(counts.steps.size(), 2u); // a step that ran twice is summed
  EXPECT_EQ(counts.steps[0], (std::pair<std::string, double>{"start", 2.0}));
  const trace::Json json = to_json(counts);
  const std::string line = json.dump();
  EXPECT_EQ(line.find("null"), std::string::npos) << line; // NaN travels as "NaN"
  auto back = counts_from_json(trace::Json::parse(line));
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(*back, counts);
  EXPECT_TRUE(std::isnan(*back->total("smsp__sass_inst_executed_op_tmem_ldt.sum")));
  EXPECT_EQ(back->total("smsp__sass_inst_executed_op_utcmma.sum"), 2048.0);
  EXPECT_FALSE(back->total("smsp__sass_inst_executed_op_shared_gmma.sum"));
  test_support::expect_golden("protocol/counts_sm_100a.json", json.dump(2) + "\n");
}

TEST(CountsCodec, UnavailableCountsCarryOnlyTheReason) {
  const Counts none = Counts::unavailable("no counter table for compute capability 8.0");
  const trace::Json json = to_json(none);
  EXPECT_EQ(json, (trace::Json{{"available", false},
                               {"reason", "no counter table for compute capability 8.0"}}));
  auto back = counts_from_json(json);
  ASSERT_TRUE(back);
  EXPECT_EQ(*back, none);
}

TEST(CountsCodec, EqualityTellsOneValueApart) {
  const Counts counts = counts_of(blackwell_counts(), "GB100", {}, "");
  Counts other = counts;
  other.ranges[1].values[0] = 1.0;
  EXPECT_NE(other, counts);
  other = counts;
  other.totals[1] = 0.0; // NaN equals only NaN
  EXPECT_NE(other, counts);
}

TEST(CountsCodec, MalformedCountsAreABadResponseNamingThePath) {
  const trace::Json good = to_json(counts_of(blackwell_counts(), "GB100", {}, ""));
  struct Case {
    const char* what;
    trace::Json json;
    const char* message;
  };
  std::vector<Case> cases;
  trace::Json kernel = good;
  kernel["ranges"][0]["kernel"] = 2;
  cases.push_back({"a kernel that is a number", kernel,
                   "instruction counts: $.ranges[0].kernel: expected a string, got integer"});
  trace::Json value = good;
  value["ranges"][1]["metrics"]["smsp__sass_inst_executed_op_utcmma.sum"] = "lots";
  cases.push_back({"a value that is text", value, "$.ranges[1].metrics"});
  trace::Json null_total = good;
  null_total["metrics"]["smsp__sass_inst_executed_op_utcmma.sum"] = nullptr;
  cases.push_back({"a null total", null_total, "smsp__sass_inst_executed_op_utcmma.sum"});
  trace::Json missing = good;
  missing["ranges"][0]["metrics"].erase("sm__ops_path_tensor_op_utchmma_src_bf16_dst_fp32.sum");
  cases.push_back({"a range without a metric of the totals", missing, "$.ranges[0].metrics"});
  cases.push_back({"not an object", trace::Json(7), "$"});
  cases.push_back({"available as text", trace::Json{{"available", "yes"}},
                   "$.available: expected a boolean, got string"});
  for (const Case& c : cases) {
    std::optional<util::Expected<Counts>> decoded;
    ASSERT_NO_THROW(decoded.emplace(counts_from_json(c.json))) << c.what;
    const util::Expected<Counts>& read = *decoded;
    ASSERT_FALSE(read) << c.what;
    EXPECT_EQ(read.error().kind, util::ErrorKind::bad_response) << c.what;
    EXPECT_NE(read.error().message.find(c.message), std::string::npos)
        << c.what << ": " << read.error().message;
  }
}

} // namespace
} // namespace ptxbench::protocol
