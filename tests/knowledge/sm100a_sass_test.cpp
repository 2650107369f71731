// Static check of the Blackwell pack: the object of sm100a_tcgen05_gemm.cu (built for sm_100a,
// path given as the first argument) must contain tcgen05.mma, tcgen05.commit and tcgen05.ld as
// SASS (UTCHMMA, UTCBAR, LDTM). Nothing runs on a GPU: there is no Blackwell GPU here.
#include "sass/disassemble.hpp"
#include "util/subprocess.hpp"

#include <algorithm>
#include <filesystem>
#include <gtest/gtest.h>
#include <set>
#include <string>

namespace {

std::filesystem::path g_object;

std::set<std::string> opcode_roots(const ptxbench::sass::Disassembly& disassembly) {
  std::set<std::string> roots;
  for (const auto& function : disassembly.functions)
    for (const auto& instruction : function.instructions)
      roots.insert(instruction.root);
  return roots;
}

TEST(Sm100aPack, GemmWrittenWithThePackHasTcgen05Sass) {
  ASSERT_FALSE(g_object.empty()) << "pass the object file of sm100a_tcgen05_gemm.cu";
  const auto cuobjdump =
      ptxbench::sass::locate_cuobjdump(ptxbench::sass::ToolSearch::from_environment());
  ASSERT_TRUE(cuobjdump) << cuobjdump.error().message;
  ptxbench::util::PosixProcessRunner runner;
  const ptxbench::sass::Disassembler disassembler(runner, *cuobjdump);
  const auto disassembly = disassembler.disassemble(g_object);
  ASSERT_TRUE(disassembly) << disassembly.error().message;
  ASSERT_TRUE(std::ranges::find(disassembly->arches, "sm_100a") != disassembly->arches.end());
  const std::set<std::string> roots = opcode_roots(*disassembly);
  for (const char* expected : {"UTCHMMA", "UTCBAR", "LDTM", "UTMALDG"})
    EXPECT_TRUE(roots.contains(expected)) << expected << " missing from the SASS";
}

} // namespace

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  if (argc > 1)
    g_object = argv[1];
  return RUN_ALL_TESTS();
}
