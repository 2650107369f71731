// Behaviour of the static verdict on real compiler output of tests/kernels/.
#include "sass_test_support.hpp"
#include "support/scratch_dir.hpp"

#include <gtest/gtest.h>

namespace ptxbench::sass {
namespace {

std::size_t total(const ArchReport& arch, Family family) {
  return arch.totals[index_of(family)];
}

const ArchReport& only_arch(const StaticReport& report, std::string_view arch) {
  const ArchReport* found = find_arch(report, arch);
  if (found == nullptr)
    throw util::Fatal("no " + std::string(arch) + " in report");
  return *found;
}

TEST(SassVerdict, WgmmaTmaKernelIsPresentWithGmmaAndTma) {
  const StaticReport hopper_report = testing::report_for("sm90_wgmma_tma_gemm", {"sm_90a"});
  const ArchReport& hopper = only_arch(hopper_report, "sm_90a");
  EXPECT_EQ(hopper.verdict, Verdict::present);
  EXPECT_GT(total(hopper, Family::gmma), 0u);
  EXPECT_GT(total(hopper, Family::tma), 0u);
  EXPECT_GT(total(hopper, Family::warpgroup), 0u);
  EXPECT_GT(total(hopper, Family::mbarrier), 0u);
  ASSERT_EQ(hopper.target_functions.size(), 1u);
  EXPECT_NE(hopper.target_functions[0].find("sm90_wgmma_tma_gemm_kernel"), std::string::npos);
}

TEST(SassVerdict, SimtKernelIsAbsentOnBothArches) {
  for (const std::string arch : {"sm_90a", "sm_100a"}) {
    const StaticReport built = testing::report_for("simt_gemm", {arch});
    const ArchReport& report = only_arch(built, arch);
    EXPECT_EQ(report.verdict, Verdict::absent) << arch;
    EXPECT_TRUE(report.target_functions.empty()) << arch;
    EXPECT_EQ(total(report, Family::legacy_mma), 0u) << arch;
  }
}

TEST(SassVerdict, MmaSyncIsAbsentButShowsLegacyHmma) {
  for (const std::string arch : {"sm_90a", "sm_100a"}) {
    const StaticReport built = testing::report_for("mma_sync_gemm", {arch});
    const ArchReport& report = only_arch(built, arch);
    EXPECT_EQ(report.verdict, Verdict::absent) << arch;
    EXPECT_GT(total(report, Family::legacy_mma), 0u) << arch;
    EXPECT_GT(report.functions.at(0).opcodes.at("HMMA"), 0u) << arch;
    EXPECT_EQ(render_text(built).find(kStaticCaveat), std::string::npos)
        << "no 'instructions are in the binary' note for an absent verdict";
  }
}

TEST(SassVerdict, DeadBranchIsStaticallyPresentAndCarriesTheCaveat) {
  const StaticReport report = testing::report_for("sm90_wgmma_dead_branch", {"sm_90a"});
  EXPECT_EQ(only_arch(report, "sm_90a").verdict, Verdict::present);
  EXPECT_EQ(to_json(report)["caveat"], std::string(kStaticCaveat));
  EXPECT_NE(render_text(report).find(kStaticCaveat), std::string::npos);
}

TEST(SassVerdict, NeverLaunchedKernelIsStaticallyPresentAndNamed) {
  const StaticReport report = testing::report_for("sm90_wgmma_never_launched", {"sm_90a"});
  const ArchReport& hopper = only_arch(report, "sm_90a");
  EXPECT_EQ(hopper.verdict, Verdict::present);
  EXPECT_EQ(hopper.functions.size(), 2u);
  ASSERT_EQ(hopper.target_functions.size(), 1u); // the unused kernel, not the SIMT one
  EXPECT_NE(hopper.target_functions[0].find("unused_wgmma_gemm_kernel"), std::string::npos);
  EXPECT_NE(render_text(report).find(kStaticCaveat), std::string::npos);
}

TEST(SassVerdict, Tcgen05KernelIsPresentOnSm100a) {
  const StaticReport blackwell_report = testing::report_for("sm100_tcgen05_gemm", {"sm_100a"});
  const ArchReport& blackwell = only_arch(blackwell_report, "sm_100a");
  EXPECT_EQ(blackwell.verdict, Verdict::present);
  EXPECT_GT(total(blackwell, Family::tcgen05), 0u);
  EXPECT_GT(blackwell.functions.at(0).opcodes.at("UTCHMMA"), 0u);
  EXPECT_GT(blackwell.functions.at(0).opcodes.at("LDTM"), 0u);
  EXPECT_EQ(total(blackwell, Family::gmma), 0u);
}

TEST(SassVerdict, TmaPrefetchAloneDoesNotCountAsTma) {
  const StaticReport hopper_report = testing::report_for("sm90_tma_prefetch_only", {"sm_90a"});
  const ArchReport& hopper = only_arch(hopper_report, "sm_90a");
  EXPECT_EQ(hopper.functions.at(0).opcodes.at("UTMAPF"), 1u);
  EXPECT_EQ(total(hopper, Family::tma), 0u);
  EXPECT_EQ(total(hopper, Family::tma_aux), 1u);
  EXPECT_EQ(hopper.verdict, Verdict::absent);
}

// Each informational family is what ptxas really emits for the PTX in sm90_family_probe.cu.
TEST(SassVerdict, FamilyProbeShowsEveryInformationalFamily) {
  for (const std::string arch : {"sm_90a", "sm_100a"}) {
    const StaticReport built = testing::report_for("sm90_family_probe", {arch});
    const ArchReport& report = only_arch(built, arch);
    for (Family family :
         {Family::tma, Family::mbarrier, Family::setmaxnreg, Family::matrix_smem, Family::bulk_copy,
          Family::tma_aux, Family::elect, Family::cluster_barrier})
      EXPECT_GT(total(report, family), 0u) << arch << " " << to_string(family);
  }
}

TEST(SassVerdict, FatbinWithTwoArchesReportsEachArch) {
  const StaticReport report = testing::report_for("simt_gemm", {"sm_90a", "sm_100a"});
  ASSERT_EQ(report.arches.size(), 2u);
  EXPECT_EQ(report.arches[0].arch, "sm_100a"); // sorted by name
  EXPECT_EQ(report.arches[1].arch, "sm_90a");
  EXPECT_EQ(report.arches[0].functions.size(), 1u);
  EXPECT_EQ(report.arches[1].functions.size(), 1u);
}

TEST(SassDisassembler, HostOnlyBinaryHasNoArches) {
  util::PosixProcessRunner runner;
  const Disassembler disassembler(runner, testing::cuobjdump_path());
  const util::Expected<Disassembly> result = disassembler.disassemble("/proc/self/exe");
  ASSERT_TRUE(result.has_value()) << result.error().message;
  EXPECT_TRUE(result->arches.empty());
}

// Runs the real processes and counts them.
class CountingRunner final : public util::ProcessRunner {
public:
  util::Expected<util::ProcessResult> run(const std::vector<std::string>& argv,
                                          const util::ProcessOptions& options) override {
    ++runs;
    return m_real.run(argv, options);
  }
  int runs = 0;

private:
  util::PosixProcessRunner m_real;
};

TEST(SassDisassembler, ACachedBinaryIsNotDisassembledAgain) {
  test_support::ScratchDir cache;
  const std::filesystem::path binary = testing::build_kernel("simt_gemm", {"sm_90a"});
  CountingRunner runner;
  const Disassembler disassembler(runner, testing::cuobjdump_path(), std::chrono::seconds(120),
                                  cache.path());
  auto first = disassembler.disassemble(binary);
  ASSERT_TRUE(first) << first.error().message;
  auto second = disassembler.disassemble(binary);
  ASSERT_TRUE(second) << second.error().message;
  EXPECT_EQ(runner.runs, 1);
  ASSERT_EQ(first->functions.size(), second->functions.size());
  EXPECT_EQ(first->functions[0].instructions.size(), second->functions[0].instructions.size());
  EXPECT_EQ(first->arches, second->arches);
  // Another binary (here: the same one for another arch) is a miss.
  ASSERT_TRUE(disassembler.disassemble(testing::build_kernel("simt_gemm", {"sm_100a"})));
  EXPECT_EQ(runner.runs, 2);
}

TEST(SassDisassembler, MissingBinaryIsNotFound) {
  util::PosixProcessRunner runner;
  const Disassembler disassembler(runner, testing::cuobjdump_path());
  const util::Expected<Disassembly> result = disassembler.disassemble("/nonexistent/kernel.so");
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().kind, util::ErrorKind::not_found);
}

} // namespace
} // namespace ptxbench::sass
