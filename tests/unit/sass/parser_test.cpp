// Parser, family table and tool lookup, on hand-written cuobjdump text (no toolchain needed).
#include "sass/disassemble.hpp"
#include "sass/families.hpp"
#include "sass/report.hpp"
#include "sass_test_support.hpp"

#include <fstream>
#include <gtest/gtest.h>

namespace ptxbench::sass {
namespace {

// Metadata lines mention HGMMA / UTMALDG (a kernel named after them, a header flag, a comment,
// the encoding lines) but only /*addr*/ lines are instructions.
constexpr std::string_view kSnippet = R"(
Fatbin elf code:
================
arch = sm_90a
code version = [1,8]
identifier = HGMMA_UTMALDG.cu

	code for sm_90a
	.target	sm_90a

		Function : _Z11HGMMA_probePf
	.headerflags	@"EF_CUDA_ACCELERATORS EF_CUDA_SM90 HGMMA UTMALDG.2D"
        /*0000*/                   LDC R1, c[0x0][0x28] ;                  /* 0x00000a00ff017b82 */
                                                                           /* 0x000fe40000000800 */
        /*0010*/                   WARPGROUP.ARRIVE ;                      /* 0x00000000000079c5 */
                                                                           /* HGMMA.64x8x16 */
        /*0020*/                   HGMMA.64x128x16.F32.BF16 R24, gdesc[UR12], R24, gsb0 ;  /* 0x01e000000c1879f0 */
        /*0030*/              @!P0 UTMAPF.L2.2D [UR8], [UR12] ;       /* 0x000000080c0075b4 */
        // HGMMA.64x256x16.F32.BF16 in a comment
        /*0040*/                   EXIT ;                                  /* 0x000000000000794d */

		Function : _Z4copyPf
        /*0000*/                   UTMALDG.2D [UR8], [UR12] ;              /* 0x000000080c0075b4 */
        /*0010*/                   EXIT ;                                  /* 0x000000000000794d */

	code for sm_80
		Function : _Z11HGMMA_probePf
        /*0000*/                   HMMA.16816.F32.BF16 R28, R40, R52, R28 ;  /* 0x00000034281c723c */
        /*0010*/                   EXIT ;                                  /* 0x000000000000794d */
)";

TEST(SassParser, OnlyAddressedLinesAreInstructions) {
  const Disassembly parsed = parse_cuobjdump_sass(kSnippet);
  ASSERT_EQ(parsed.functions.size(), 3u);
  const Function& probe = parsed.functions[0];
  EXPECT_EQ(probe.mangled_name, "_Z11HGMMA_probePf");
  EXPECT_EQ(probe.demangled_name, "HGMMA_probe(float*)");
  EXPECT_EQ(probe.arch, "sm_90a");
  ASSERT_EQ(probe.instructions.size(), 5u);
  EXPECT_EQ(probe.instructions[2].opcode, "HGMMA.64x128x16.F32.BF16");
  EXPECT_EQ(probe.instructions[2].root, "HGMMA");
  EXPECT_EQ(probe.instructions[2].address, 0x20u);
  EXPECT_EQ(probe.instructions[3].predicate, "@!P0");
  EXPECT_EQ(probe.instructions[3].opcode, "UTMAPF.L2.2D");
}

TEST(SassParser, TracksEveryArchOfAFatbin) {
  const Disassembly parsed = parse_cuobjdump_sass(kSnippet);
  EXPECT_EQ(parsed.arches, (std::vector<std::string>{"sm_90a", "sm_80"}));
  EXPECT_EQ(parsed.functions[1].arch, "sm_90a");
  EXPECT_EQ(parsed.functions[2].arch, "sm_80");
}

TEST(SassParser, MetadataMentioningHgmmaDoesNotCount) {
  const StaticReport report = build_report(parse_cuobjdump_sass(kSnippet), "sha");
  const ArchReport* hopper = find_arch(report, "sm_90a");
  ASSERT_NE(hopper, nullptr);
  EXPECT_EQ(hopper->totals[index_of(Family::gmma)], 1u);
  EXPECT_EQ(hopper->totals[index_of(Family::tma)], 1u);     // UTMALDG only
  EXPECT_EQ(hopper->totals[index_of(Family::tma_aux)], 1u); // UTMAPF is not TMA
  EXPECT_EQ(hopper->verdict, Verdict::present);
  EXPECT_EQ(hopper->target_functions, (std::vector<std::string>{"_Z11HGMMA_probePf", "_Z4copyPf"}));
}

TEST(SassParser, ArchWithoutRuleHasNoRuleVerdict) {
  const StaticReport report = build_report(parse_cuobjdump_sass(kSnippet), "sha");
  const ArchReport* ampere = find_arch(report, "sm_80");
  ASSERT_NE(ampere, nullptr);
  EXPECT_EQ(ampere->verdict, Verdict::no_rule);
  EXPECT_EQ(ampere->totals[index_of(Family::legacy_mma)], 1u);
}

TEST(SassParser, SnippetReportMatchesGoldens) {
  const StaticReport report = build_report(parse_cuobjdump_sass(kSnippet), "0123abcd");
  testing::expect_golden("snippet.json", to_json(report).dump(2) + "\n");
  testing::expect_golden("snippet.txt", render_text(report));
}

// Two cubins of one Triton evaluation: one holds the GMMA kernel, the other only a copy kernel.
// Merged, the arch is reported once and the verdict sees both kernels.
TEST(SassParser, MergedCubinsReportAsOneBinary) {
  const Disassembly full = parse_cuobjdump_sass(kSnippet);
  Disassembly copy_only;
  copy_only.arches = {"sm_90a"};
  copy_only.functions = {full.functions[1]};
  Disassembly probe_only;
  probe_only.arches = {"sm_90a", "sm_80"};
  probe_only.functions = {full.functions[0], full.functions[2]};

  const Disassembly merged = merge_disassemblies({copy_only, probe_only});
  EXPECT_EQ(merged.arches, (std::vector<std::string>{"sm_90a", "sm_80"}));
  ASSERT_EQ(merged.functions.size(), 3u);
  EXPECT_EQ(merged.functions[0].mangled_name, "_Z4copyPf");

  const StaticReport report = build_report(merged, "sha");
  const ArchReport* hopper = find_arch(report, "sm_90a");
  ASSERT_NE(hopper, nullptr);
  EXPECT_EQ(hopper->verdict, Verdict::present);
  EXPECT_EQ(hopper->target_functions.size(), 2u);
}

TEST(SassParser, EmptyInputHasNoFunctions) {
  const Disassembly parsed = parse_cuobjdump_sass("");
  EXPECT_TRUE(parsed.functions.empty());
  EXPECT_TRUE(parsed.arches.empty());
}

TEST(SassFamilies, ClassifiesObservedOpcodes) {
  EXPECT_EQ(classify("HGMMA.64x128x16.F32.BF16"), Family::gmma);
  EXPECT_EQ(classify("QGMMA.64x128x32.F32.E4M3.E4M3"), Family::gmma);
  EXPECT_EQ(classify("UTMALDG.2D"), Family::tma);
  EXPECT_EQ(classify("UTMASTG.2D"), Family::tma);
  EXPECT_EQ(classify("UTMAREDG.2D.ADD"), Family::tma);
  EXPECT_EQ(classify("UTMAPF.L2.2D"), Family::tma_aux);
  EXPECT_EQ(classify("UTMACCTL.PF"), Family::tma_aux);
  EXPECT_EQ(classify("UTMACMDFLUSH"), Family::tma_aux);
  EXPECT_EQ(classify("UTCHMMA"), Family::tcgen05);
  EXPECT_EQ(classify("UTCBAR"), Family::tcgen05);
  EXPECT_EQ(classify("LDTM.x32"), Family::tcgen05);
  EXPECT_EQ(classify("STTM.x16"), Family::tcgen05);
  EXPECT_EQ(classify("WARPGROUP.DEPBAR.LE"), Family::warpgroup);
  EXPECT_EQ(classify("SYNCS.PHASECHK.TRANS64.TRYWAIT"), Family::mbarrier);
  EXPECT_EQ(classify("USETMAXREG.TRY_ALLOC.CTAPOOL"), Family::setmaxnreg);
  EXPECT_EQ(classify("STSM.16.M88.4"), Family::matrix_smem);
  EXPECT_EQ(classify("HMMA.16816.F32.BF16"), Family::legacy_mma);
  EXPECT_EQ(classify("UBLKCP.S.G"), Family::bulk_copy);
  EXPECT_EQ(classify("ELECT"), Family::elect);
  EXPECT_EQ(classify("UCGABAR_ARV"), Family::cluster_barrier);
  EXPECT_EQ(classify("FFMA"), std::nullopt);
  EXPECT_EQ(classify("DEPBAR.LE"), std::nullopt);
}

TEST(SassFamilies, TargetFamiliesPerArch) {
  EXPECT_EQ(target_families_for("sm_90a"), (std::vector<Family>{Family::gmma, Family::tma}));
  EXPECT_EQ(target_families_for("sm_100a"), (std::vector<Family>{Family::tcgen05}));
  EXPECT_TRUE(target_families_for("sm_90").empty());
}

class CuobjdumpLookup : public ::testing::Test {
protected:
  void SetUp() override {
    m_dir = std::filesystem::temp_directory_path() /
            ("ptxbench-sass-lookup-" + std::to_string(::getpid()));
    std::filesystem::create_directories(m_dir / "nvcc_bin");
    std::filesystem::create_directories(m_dir / "path_bin");
  }
  void TearDown() override { std::filesystem::remove_all(m_dir); }
  std::filesystem::path make_tool(const std::string& folder) {
    const std::filesystem::path tool = m_dir / folder / "cuobjdump";
    std::ofstream(tool) << "#!/bin/sh\n";
    std::filesystem::permissions(tool, std::filesystem::perms::owner_all);
    return tool;
  }
  std::filesystem::path m_dir;
};

TEST_F(CuobjdumpLookup, MissingEverywhereNamesWhatWasSearched) {
  const ToolSearch search{{}, m_dir / "nvcc_bin", {m_dir / "path_bin"}, m_dir / "deps"};
  const util::Expected<std::filesystem::path> found = locate_cuobjdump(search);
  ASSERT_FALSE(found.has_value());
  EXPECT_EQ(found.error().kind, util::ErrorKind::not_found);
  const std::string& message = found.error().message;
  EXPECT_NE(message.find("cuobjdump not found"), std::string::npos);
  EXPECT_NE(message.find("PTXBENCH_CUOBJDUMP"), std::string::npos);
  EXPECT_NE(message.find((m_dir / "nvcc_bin" / "cuobjdump").string()), std::string::npos);
  EXPECT_NE(message.find((m_dir / "path_bin" / "cuobjdump").string()), std::string::npos);
  EXPECT_NE(message.find((m_dir / "deps" / "cuobjdump").string()), std::string::npos);
}

TEST_F(CuobjdumpLookup, NvccFolderWinsOverPath) {
  const std::filesystem::path beside_nvcc = make_tool("nvcc_bin");
  make_tool("path_bin");
  const ToolSearch search{{}, m_dir / "nvcc_bin", {m_dir / "path_bin"}, {}};
  EXPECT_EQ(locate_cuobjdump(search).value(), beside_nvcc);
}

TEST_F(CuobjdumpLookup, EnvOverrideIsAuthoritative) {
  make_tool("path_bin");
  const ToolSearch search{m_dir / "nope" / "cuobjdump", {}, {m_dir / "path_bin"}, {}};
  const util::Expected<std::filesystem::path> found = locate_cuobjdump(search);
  ASSERT_FALSE(found.has_value());
  EXPECT_NE(found.error().message.find("PTXBENCH_CUOBJDUMP="), std::string::npos);
}

TEST_F(CuobjdumpLookup, FallsBackToDepsFolder) {
  const std::filesystem::path deps = make_tool("path_bin");
  const ToolSearch search{{}, {}, {}, m_dir / "path_bin"};
  EXPECT_EQ(locate_cuobjdump(search).value(), deps);
}

} // namespace
} // namespace ptxbench::sass
