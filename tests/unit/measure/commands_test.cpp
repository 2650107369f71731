// The ncu and compute-sanitizer command lines (the paper's flags) around a program.
#include "measure/ncu_audit.hpp"
#include "measure/sanitizer.hpp"

#include <algorithm>
#include <gtest/gtest.h>

namespace ptxbench::measure {
namespace {

TEST(NcuAuditCommand, UsesSourcePageNvtxRangeApplicationReplayAndTheTwoMetrics) {
  const auto argv = ncu_audit_command({"./probe", "--x"}, NcuAuditOptions{});
  const std::vector<std::string> expected{
      "ncu",
      "--page",
      "source",
      "--print-source",
      "sass",
      "--csv",
      "--nvtx",
      "--nvtx-include",
      "ptxbench_eval/",
      "--replay-mode",
      "application",
      "--metrics",
      "inst_executed,thread_inst_executed_true,thread_inst_executed",
      "--clock-control",
      "none",
      "-f",
      "./probe",
      "--x"};
  EXPECT_EQ(argv, expected);
}

TEST(SanitizerCommand, SetsErrorExitCodePrintLimitAndStreamOrderedRaceTracking) {
  const auto argv = sanitizer_command({"./oob"}, SanitizerOptions{});
  const std::vector<std::string> expected{"compute-sanitizer",
                                          "--tool",
                                          "memcheck",
                                          "--error-exitcode",
                                          "99",
                                          "--print-limit",
                                          "256",
                                          "--track-stream-ordered-races",
                                          "all",
                                          "./oob"};
  EXPECT_EQ(argv, expected);
}

TEST(SanitizerCommand, OnlyMemcheckTracksStreamOrderedRaces) {
  SanitizerOptions options;
  options.tool = "racecheck";
  const auto argv = sanitizer_command({"./oob"}, options);
  EXPECT_EQ(std::find(argv.begin(), argv.end(), "--track-stream-ordered-races"), argv.end());
  EXPECT_EQ(argv.back(), "./oob");
}

TEST(NcuSourceCsv, OutputWithoutSourcePageIsABadResponse) {
  auto audit = parse_ncu_source_csv("==PROF== Disconnected\n");
  ASSERT_FALSE(audit);
  EXPECT_EQ(audit.error().kind, util::ErrorKind::bad_response);
}

TEST(SanitizerOutput, CleanSummaryHasNoError) {
  const auto report = parse_sanitizer_output("========= COMPUTE-SANITIZER\n"
                                             "========= ERROR SUMMARY: 0 errors\n");
  EXPECT_TRUE(report.clean);
  EXPECT_FALSE(report.first_error);
}

} // namespace
} // namespace ptxbench::measure
