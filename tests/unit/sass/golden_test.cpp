// Golden static reports (JSON) of every test kernel, built with the real nvcc and disassembled
// with the real cuobjdump. The binary's sha256 depends on the build folder (-lineinfo embeds
// paths), so it is checked against the file and replaced by a placeholder in the golden.
#include "sass_test_support.hpp"

#include <gtest/gtest.h>

namespace ptxbench::sass {
namespace {

struct GoldenCase {
  std::string kernel;
  std::string arch;
};

class SassGolden : public ::testing::TestWithParam<GoldenCase> {};

TEST_P(SassGolden, StaticReportMatchesGolden) {
  const GoldenCase& c = GetParam();
  StaticReport report = testing::report_for(c.kernel, {c.arch});
  const util::Expected<std::string> content =
      util::read_file(testing::build_kernel(c.kernel, {c.arch}));
  ASSERT_TRUE(content.has_value());
  EXPECT_EQ(report.binary_sha256, util::sha256_hex(*content));
  report.binary_sha256 = "<sha256 of the test build>";
  testing::expect_golden(c.kernel + "." + c.arch + ".json", to_json(report).dump(2) + "\n");
}

const GoldenCase kCases[] = {
    {"sm90_wgmma_tma_gemm", "sm_90a"},
    {"simt_gemm", "sm_90a"},
    {"simt_gemm", "sm_100a"},
    {"mma_sync_gemm", "sm_90a"},
    {"mma_sync_gemm", "sm_100a"},
    {"sm90_wgmma_dead_branch", "sm_90a"},
    {"sm90_wgmma_never_launched", "sm_90a"},
    {"sm100_tcgen05_gemm", "sm_100a"},
    {"sm90_tma_prefetch_only", "sm_90a"},
    {"sm90_tma_prefetch_only", "sm_100a"},
    {"sm90_family_probe", "sm_90a"},
    {"sm90_family_probe", "sm_100a"},
};

INSTANTIATE_TEST_SUITE_P(Kernels, SassGolden, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<GoldenCase>& case_info) {
                           std::string arch = case_info.param.arch;
                           arch.erase(0, 3);
                           return case_info.param.kernel + "_sm" + arch;
                         });

} // namespace
} // namespace ptxbench::sass
