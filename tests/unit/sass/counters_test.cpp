// The per-architecture counter table (sass/counters.hpp): each architecture's metric list is a
// golden file, every row proves a family the architecture's static verdict looks for or shows,
// and the opcodes a row counts on ncu's source page are the ones sass::classify gives its family.
#include "sass/counters.hpp"
#include "sass/report.hpp"
#include "sass_test_support.hpp"

#include <algorithm>
#include <gtest/gtest.h>

namespace ptxbench::sass {
namespace {

TEST(ArchCounters, EachArchitecturesMetricListMatchesItsGolden) {
  for (const ArchCounters& arch : kArchCounters) {
    SCOPED_TRACE(std::string(arch.arch));
    testing::expect_golden("counters." + std::string(arch.arch) + ".txt", render_counters(arch));
  }
}

TEST(ArchCounters, TheCounterConfiguresEveryRowsMetricAndTheFlopMetric) {
  const ArchCounters* hopper = counters_for("sm_90a");
  ASSERT_NE(hopper, nullptr);
  EXPECT_EQ(metric_names(*hopper),
            (std::vector<std::string>{"smsp__sass_inst_executed_op_shared_gmma.sum",
                                      "smsp__sass_inst_executed_op_tma_ld.sum",
                                      "smsp__sass_inst_executed_op_tma_st.sum",
                                      "smsp__sass_inst_executed_op_tma_red.sum",
                                      "sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32.sum"}));
  const ArchCounters* blackwell = counters_for("sm_100a");
  ASSERT_NE(blackwell, nullptr);
  const auto names = metric_names(*blackwell);
  for (const char* metric :
       {"smsp__sass_inst_executed_op_utcmma.sum", "smsp__sass_inst_executed_op_tmem_ldt.sum",
        "smsp__sass_inst_executed_op_tmem_stt.sum",
        "sm__ops_path_tensor_op_utchmma_src_bf16_dst_fp32.sum"})
    EXPECT_NE(std::find(names.begin(), names.end(), metric), names.end()) << metric;
  EXPECT_EQ(std::count(names.begin(), names.end(), "smsp__sass_inst_executed_op_shared_gmma.sum"),
            0); // gb100 has no op_shared_gmma
}

TEST(ArchCounters, ArchesAndComputeCapabilitiesFindTheirTable) {
  EXPECT_EQ(counters_for_compute_capability(9, 0), counters_for("sm_90a"));
  EXPECT_EQ(counters_for_compute_capability(10, 0), counters_for("sm_100a"));
  EXPECT_EQ(counters_for("sm_100f"), counters_for("sm_100a")); // the same 10.0 GPUs
  EXPECT_EQ(counters_for("sm_90"), nullptr);
  EXPECT_EQ(counters_for("sm_103a"), nullptr);
  EXPECT_EQ(counters_for_compute_capability(8, 0), nullptr);
  EXPECT_EQ(counters_for("sm_90a")->run, CountersRun::measured);
  EXPECT_EQ(counters_for("sm_100a")->run, CountersRun::not_run);
}

// The target families of an architecture's static verdict all have a counter, so a B200 gets
// an executed count for TCGEN05 as an H200 does for GMMA and TMA.
TEST(ArchCounters, EveryTargetFamilyOfTheStaticVerdictHasACounter) {
  for (const ArchCounters& arch : kArchCounters) {
    for (Family family : target_families_for(arch.arch)) {
      const bool counted = std::any_of(arch.rows.begin(), arch.rows.end(),
                                       [&](const CounterRow& row) { return row.family == family; });
      EXPECT_TRUE(counted) << arch.arch << " " << to_string(family);
    }
  }
}

TEST(ArchCounters, ARowCountsTheOpcodesOfItsFamilyWithTheirModifiers) {
  for (const ArchCounters& arch : kArchCounters) {
    for (const CounterRow& row : arch.rows) {
      for (std::string_view prefix : row.opcodes) {
        if (prefix.empty() || prefix.find('.') != std::string_view::npos)
          continue; // UBLKCP.S.G and friends: bulk copies CUPTI counts with TMA
        const std::string with_modifiers = std::string(prefix) + ".2D";
        EXPECT_TRUE(counts_opcode(row, with_modifiers)) << with_modifiers;
        EXPECT_EQ(classify(with_modifiers), row.family) << with_modifiers;
      }
    }
  }
  const CounterRow& load = counters_for("sm_90a")->rows[1];
  ASSERT_EQ(load.key, "tma_load");
  EXPECT_TRUE(counts_opcode(load, "UTMALDG"));
  EXPECT_TRUE(counts_opcode(load, "UTMALDG.3D.MULTICAST"));
  EXPECT_TRUE(counts_opcode(load, "UBLKCP.S.G"));
  EXPECT_FALSE(counts_opcode(load, "UBLKCP.G.S"));
  EXPECT_FALSE(counts_opcode(load, "UTMALDGX"));
  EXPECT_FALSE(counts_opcode(load, "UTMAPF.L2.2D"));
}

} // namespace
} // namespace ptxbench::sass
