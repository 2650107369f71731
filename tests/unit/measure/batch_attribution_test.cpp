// Attribution of a batch's activities to its calls, on synthetic CUPTI records: clean batches
// give each call its own span; every way a call's work can escape its window makes the batch
// unattributable (so the trial is timed strictly), never a silently wrong latency.
#include "measure/batch_attribution.hpp"

#include <gtest/gtest.h>

namespace ptxbench::measure {
namespace {

constexpr std::uint32_t kCallStream = 7;
constexpr std::uint32_t kSideStream = 9;

GpuActivity activity(GpuActivity::Kind kind, std::uint32_t correlation, std::uint64_t start_us,
                     std::uint64_t end_us, std::uint32_t stream = kCallStream) {
  GpuActivity a;
  a.kind = kind;
  a.name = kind == GpuActivity::Kind::kernel ? "_Z4gemmv" : "memset";
  a.correlation_id = correlation;
  a.start_ns = start_us * 1000;
  a.end_ns = end_us * 1000;
  a.stream_id = stream;
  return a;
}

GpuActivity kernel(std::uint32_t correlation, std::uint64_t start_us, std::uint64_t end_us,
                   std::uint32_t stream = kCallStream) {
  return activity(GpuActivity::Kind::kernel, correlation, start_us, end_us, stream);
}

// A batch of `calls` calls, each: reset memset (ids 100c+1, driver id 100c+2), flush memset
// (100c+3) from 1000c µs to 1000c+30 µs, then one kernel (id 100c+10) of 500 µs.
struct SyntheticBatch {
  explicit SyntheticBatch(int calls) {
    for (int c = 0; c < calls; ++c) {
      const auto base = static_cast<std::uint32_t>(100 * c);
      const auto t = static_cast<std::uint64_t>(1000 * c);
      boundaries.push_back({{base + 1, base + 2}, {base + 3}});
      records.push_back(activity(GpuActivity::Kind::memset, base + 2, t, t + 10));
      records.push_back(activity(GpuActivity::Kind::memset, base + 3, t + 10, t + 30));
      records.push_back(kernel(base + 10, t + 31, t + 531));
    }
    close_ns = static_cast<std::uint64_t>(1000 * calls) * 1000;
  }
  BatchAttribution attribute() const { return attribute_batch(records, boundaries, close_ns); }

  std::vector<GpuActivity> records;
  std::vector<std::vector<MarkedMemset>> boundaries;
  std::uint64_t close_ns = 0;
};

TEST(BatchAttribution, CleanBatchGivesEveryCallItsOwnKernel) {
  const SyntheticBatch batch(4);
  const BatchAttribution result = batch.attribute();
  ASSERT_TRUE(result.unattributable.empty()) << result.unattributable;
  ASSERT_EQ(result.calls.size(), 4u);
  for (std::size_t c = 0; c < 4; ++c) {
    ASSERT_EQ(result.calls[c].size(), 1u);
    EXPECT_EQ(result.calls[c][0].correlation_id, 100 * c + 10);
    EXPECT_DOUBLE_EQ(result.latency_ms[c], 0.5);
  }
  EXPECT_EQ(result.min_gap_ns, 1000u); // 1 µs after the flush
}

TEST(BatchAttribution, JoinedSideStreamWorkIsChargedToItsCall) {
  SyntheticBatch batch(3);
  batch.records.push_back(kernel(111, 1040, 1700, kSideStream)); // call 1, ends before boundary 2
  const BatchAttribution result = batch.attribute();
  ASSERT_TRUE(result.unattributable.empty()) << result.unattributable;
  ASSERT_EQ(result.calls[1].size(), 2u);
  EXPECT_DOUBLE_EQ(result.latency_ms[1], (1700.0 - 1031.0) / 1000.0);
  EXPECT_DOUBLE_EQ(result.latency_ms[0], 0.5);
}

TEST(BatchAttribution, WorkStillRunningWhenTheNextBoundaryStartsIsUnattributable) {
  SyntheticBatch batch(3);
  batch.records.push_back(kernel(111, 1040, 2005, kSideStream)); // overlaps boundary 2
  const BatchAttribution result = batch.attribute();
  EXPECT_NE(result.unattributable.find("call 1"), std::string::npos) << result.unattributable;
  EXPECT_NE(result.unattributable.find("next call's boundary"), std::string::npos);
}

TEST(BatchAttribution, LastCallWorkPastTheCloseIsUnattributable) {
  SyntheticBatch batch(2);
  batch.records.push_back(kernel(111, 1040, 2500, kSideStream));
  const BatchAttribution result = batch.attribute();
  EXPECT_NE(result.unattributable.find("synchronised"), std::string::npos) << result.unattributable;
}

TEST(BatchAttribution, WorkThatStartsBeforeItsBoundaryEndsIsUnattributable) {
  SyntheticBatch batch(3);
  // Call 1 launched on a stream that does not wait for the call stream: it overlaps the flush.
  batch.records.push_back(kernel(112, 1005, 1400, kSideStream));
  const BatchAttribution result = batch.attribute();
  EXPECT_NE(result.unattributable.find("before its boundary ended"), std::string::npos)
      << result.unattributable;
}

TEST(BatchAttribution, WorkRunningInAnotherCallsWindowIsUnattributable) {
  SyntheticBatch batch(3);
  // Issued during call 0 (id 15), executed entirely inside call 1's window: deferred work.
  batch.records.push_back(kernel(15, 1600, 1700, kSideStream));
  const BatchAttribution result = batch.attribute();
  EXPECT_NE(result.unattributable.find("call 0"), std::string::npos) << result.unattributable;
}

TEST(BatchAttribution, WorkIssuedDuringABoundaryIsUnattributable) {
  SyntheticBatch batch(2);
  batch.boundaries[1] = {{101}, {104}}; // another thread's API call got id 102..103
  batch.records[3].correlation_id = 101;
  batch.records[4].correlation_id = 104;
  batch.records.push_back(kernel(103, 1050, 1100, kSideStream));
  const BatchAttribution result = batch.attribute();
  EXPECT_NE(result.unattributable.find("during boundary 1"), std::string::npos)
      << result.unattributable;
}

TEST(BatchAttribution, AMissingBoundaryRecordIsUnattributable) {
  SyntheticBatch batch(3);
  batch.records.erase(batch.records.begin() + 4); // call 1's flush record
  const BatchAttribution result = batch.attribute();
  EXPECT_NE(result.unattributable.find("boundary 1"), std::string::npos) << result.unattributable;
}

TEST(BatchAttribution, ARecordIssuedBeforeTheBatchThatRanIntoItIsUnattributable) {
  SyntheticBatch batch(2);
  batch.records.push_back(kernel(0, 0, 0, kSideStream));
  batch.records.back().end_ns = 500; // done within the slack of boundary 0's start: stale
  EXPECT_TRUE(batch.attribute().unattributable.empty());
  batch.records.back().start_ns = 5'000;
  batch.records.back().end_ns = 40'000; // runs into call 0's window
  EXPECT_NE(batch.attribute().unattributable.find("before the batch"), std::string::npos);
}

TEST(BatchAttribution, CallWithoutActivitiesHasZeroLatency) {
  SyntheticBatch batch(2);
  batch.records.erase(batch.records.begin() + 2); // call 0's kernel
  const BatchAttribution result = batch.attribute();
  ASSERT_TRUE(result.unattributable.empty()) << result.unattributable;
  EXPECT_TRUE(result.calls[0].empty());
  EXPECT_DOUBLE_EQ(result.latency_ms[0], 0.0);
}

TEST(BatchAttribution, SeveralKernelsOfOneCallSpanFirstStartToLastEnd) {
  SyntheticBatch batch(1);
  batch.records.push_back(kernel(11, 600, 900));
  batch.records.push_back(activity(GpuActivity::Kind::memcpy, 12, 900, 950));
  const BatchAttribution result = batch.attribute();
  ASSERT_TRUE(result.unattributable.empty()) << result.unattributable;
  ASSERT_EQ(result.calls[0].size(), 3u);
  EXPECT_DOUBLE_EQ(result.latency_ms[0], (950.0 - 31.0) / 1000.0);
}

} // namespace
} // namespace ptxbench::measure
