// The ncu source-page and compute-sanitizer parsers on real outputs captured on an H200
// (ncu / compute-sanitizer 2025.3.1; tests/unit/measure/tools_gpu.cu saved them).
#include "measure/ncu_audit.hpp"
#include "measure/sanitizer.hpp"

#include <fstream>
#include <gtest/gtest.h>
#include <sstream>

namespace ptxbench::measure {
namespace {

std::string fixture(const std::string& name) {
  std::ifstream in(std::string(PTXBENCH_TEST_DATA) + "/measure/" + name);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_FALSE(text.str().empty()) << name;
  return text.str();
}

TEST(NcuSourceCsv, WgmmaGemmFixtureGivesFamilyTotals) {
  // wgmma+TMA GEMM, M=128, N=7168, K=5120: 4 warps x 128*7168*5120/(64*128*16) HGMMA.
  auto audit = parse_ncu_source_csv(fixture("ncu_source_wgmma_gemm_m128.csv"));
  ASSERT_TRUE(audit) << audit.error().message;
  ASSERT_EQ(audit->kernels.size(), 1u);
  EXPECT_EQ(audit->kernels[0].rfind("sm90_wgmma_tma_gemm_kernel(", 0), 0u);
  EXPECT_EQ(audit->instruction_rows, 312u);
  EXPECT_EQ(audit->families.gmma, 143360u);
  EXPECT_EQ(audit->families.gmma_thread_true, 4u * 1146880u);
  EXPECT_EQ(audit->families.tma_load, 17920u);
  EXPECT_EQ(audit->families.tma_store, 0u);
  EXPECT_EQ(audit->families.tma_reduce, 0u);
  EXPECT_EQ(audit->families.tcgen05, 0u);
  ASSERT_FALSE(audit->rows.empty());
  EXPECT_EQ(audit->rows[0].kernel, audit->kernels[0]);
}

TEST(NcuSourceCsv, OpcodeDropsPredicateAndOperands) {
  const std::string csv = "\"Kernel Name\",\"k\",\n"
                          "\"Address\",\"Source\",\"inst_executed\",\"thread_inst_executed_true\"\n"
                          "\"0x10\",\"  @!P0 UTMASTG.2D [UR4], [UR8]\",\"1,024\",\"0\"\n";
  auto audit = parse_ncu_source_csv(csv);
  ASSERT_TRUE(audit);
  ASSERT_EQ(audit->rows.size(), 1u);
  EXPECT_EQ(audit->rows[0].opcode, "UTMASTG.2D");
  EXPECT_EQ(audit->families.tma_store, 1024u);
  EXPECT_EQ(audit->families.tma_thread_true, 0u); // predicated off: not executed (paper rule)
}

// thread_inst_executed gives each row's active threads per warp instruction, and so its
// predicated-on warp instructions (ncu_audit.hpp): one elected thread (a = 1) counts every warp
// instruction, a full warp under a predicate on in 1 of 8 warps an eighth; a page without the
// column derives nothing.
TEST(NcuSourceCsv, ThreadInstExecutedDerivesThePredicatedOnWarpInstructions) {
  const std::string csv = "\"Kernel Name\",\"k\",\n"
                          "\"Address\",\"Source\",\"inst_executed\",\"thread_inst_executed_true\","
                          "\"thread_inst_executed\"\n"
                          "\"0x10\",\"UTMALDG.2D [UR4], [UR8]\",\"100\",\"100\",\"100\"\n"
                          "\"0x20\",\"@UP0 UTMALDG.2D [UR4], [UR8]\",\"800\",\"3,200\",\"25,600\"\n"
                          "\"0x30\",\"@P0 UTMASTG.2D [UR4], [UR8]\",\"40\",\"0\",\"40\"\n";
  auto audit = parse_ncu_source_csv(csv);
  ASSERT_TRUE(audit) << audit.error().message;
  ASSERT_EQ(audit->rows.size(), 3u);
  EXPECT_EQ(audit->rows[1].thread_executed, std::optional<std::uint64_t>(25600u));
  EXPECT_EQ(audit->rows[0].predicated_on(), std::optional(100.0));
  EXPECT_EQ(audit->rows[1].predicated_on(), std::optional(100.0));
  EXPECT_EQ(audit->rows[2].predicated_on(), std::optional(0.0));
  EXPECT_EQ(audit->opcodes.at("UTMALDG.2D").executed, 900u);
  EXPECT_EQ(audit->opcodes.at("UTMALDG.2D").predicated_on, std::optional(200.0));
  const auto totals = counter_totals(*audit, *sass::counters_for("sm_90a"));
  EXPECT_EQ(totals[1].total.predicated_on, std::optional(200.0));
  EXPECT_EQ(totals[2].total.predicated_on, std::optional(0.0));
  EXPECT_FALSE(totals[3].total.predicated_on); // no UTMAREDG row: nothing to derive from

  const std::string old_page = "\"Kernel Name\",\"k\",\n"
                               "\"Address\",\"Source\",\"inst_executed\","
                               "\"thread_inst_executed_true\"\n"
                               "\"0x10\",\"UTMALDG.2D [UR4], [UR8]\",\"100\",\"100\"\n";
  auto old_audit = parse_ncu_source_csv(old_page);
  ASSERT_TRUE(old_audit);
  EXPECT_FALSE(old_audit->rows[0].predicated_on());
  EXPECT_FALSE(counter_totals(*old_audit, *sass::counters_for("sm_90a"))[1].total.predicated_on);
}

// The counter table's rows sum the source page's opcodes: a row counts its opcodes with any
// modifiers, the bulk copies CUPTI counts with TMA included, and nothing of another row.
TEST(NcuSourceCsv, CounterTotalsSumEachRowsOpcodesOverThePage) {
  const std::string csv = "\"Kernel Name\",\"k\",\n"
                          "\"Address\",\"Source\",\"inst_executed\",\"thread_inst_executed_true\"\n"
                          "\"0x10\",\"UTMALDG.2D [UR4], [UR8]\",\"100\",\"100\"\n"
                          "\"0x20\",\"@P0 UTMALDG.3D.MULTICAST [UR4], [UR8]\",\"20\",\"10\"\n"
                          "\"0x30\",\"UBLKCP.S.G [UR4], [UR8]\",\"3\",\"3\"\n"
                          "\"0x40\",\"UBLKCP.G.S [UR4], [UR8]\",\"5\",\"5\"\n"
                          "\"0x50\",\"HGMMA.64x128x16.F32.BF16 R24, gdesc[UR4]\",\"64\",\"2048\"\n"
                          "\"0x60\",\"UTCHMMA gdesc[UR4], gdesc[UR6], tmem[UR8]\",\"7\",\"7\"\n";
  auto audit = parse_ncu_source_csv(csv);
  ASSERT_TRUE(audit) << audit.error().message;
  EXPECT_EQ(audit->opcodes.at("UTMALDG.3D.MULTICAST").executed, 20u);
  const auto hopper = counter_totals(*audit, *sass::counters_for("sm_90a"));
  ASSERT_EQ(hopper.size(), 4u);
  EXPECT_EQ(hopper[0].row->key, "gmma");
  EXPECT_EQ(hopper[0].total.executed, 64u);
  EXPECT_EQ(hopper[0].total.thread_true, 2048u);
  EXPECT_EQ(hopper[1].total.executed, 123u); // UTMALDG.* and UBLKCP.S.G
  EXPECT_EQ(hopper[1].total.thread_true, 113u);
  EXPECT_EQ(hopper[2].total.executed, 5u); // UBLKCP.G.S
  const auto blackwell = counter_totals(*audit, *sass::counters_for("sm_100a"));
  EXPECT_EQ(blackwell[0].row->key, "tcgen05_mma");
  EXPECT_EQ(blackwell[0].total.executed, 7u);
  EXPECT_EQ(blackwell[1].total.executed, 0u); // no LDTM
}

TEST(SanitizerOutput, OutOfBoundsWriteFixtureGivesKernelLineAndAddress) {
  const auto report = parse_sanitizer_output(fixture("sanitizer_memcheck_oob.txt"));
  EXPECT_FALSE(report.clean);
  EXPECT_EQ(report.error_count, 1049u);
  ASSERT_TRUE(report.first_error);
  const SanitizerError& error = *report.first_error;
  EXPECT_EQ(error.kind, "Invalid __global__ write of size 4 bytes");
  EXPECT_EQ(error.space, "__global__");
  EXPECT_EQ(error.access, "write");
  EXPECT_EQ(error.kernel, "oob_write(int *, int)");
  EXPECT_EQ(error.pc_offset, "+0x80");
  EXPECT_EQ(error.file, "oob.cu");
  EXPECT_EQ(error.line, 4);
  EXPECT_EQ(error.address, "0x7feb48801000");
  EXPECT_NE(error.detail.find("97 bytes after the nearest allocation"), std::string::npos);
}

TEST(SanitizerOutput, CleanFixtureIsClean) {
  const auto report = parse_sanitizer_output(fixture("sanitizer_memcheck_clean.txt"));
  EXPECT_TRUE(report.clean);
  EXPECT_EQ(report.error_count, 0u);
  EXPECT_FALSE(report.first_error);
}

} // namespace
} // namespace ptxbench::measure
