// The enum-table completeness check, where it acts: in the compiler. A table that lacks a row
// for an appended enumerator must not compile; a complete one must (issue 15 item 5).
#include "support/scratch_dir.hpp"
#include "util/enum_table.hpp"
#include "util/subprocess.hpp"

#include <gtest/gtest.h>
#include <string>

namespace ptxbench::util {
namespace {

enum class Colour : std::uint8_t { red = 1, green = 2 };
static_assert(names_an_enumerator<Colour::green>());
static_assert(!names_an_enumerator<static_cast<Colour>(3)>());
static_assert(no_enumerator_after<Colour, 2>());
static_assert(!no_enumerator_after<Colour, 1>());

// Compiles a translation unit that declares an enum with `enumerators`, a table of two rows
// and the check, as the real tables do; returns the compiler's result.
ProcessResult compile_table(const std::string& enumerators) {
  test_support::ScratchDir dir;
  const std::string source =
      "#include \"util/enum_table.hpp\"\n"
      "#include <array>\n#include <cstdint>\n#include <string_view>\n"
      "enum class Kind : std::uint8_t { " +
      enumerators +
      " };\n"
      "struct Row { Kind kind; std::string_view name; };\n"
      "constexpr std::array kRows{Row{Kind::a, \"a\"}, Row{Kind::b, \"b\"}};\n"
      "static_assert(ptxbench::util::no_enumerator_after<Kind, kRows.size()>(),\n"
      "              \"kRows lacks a row\");\n";
  const auto file = dir.write("table.cpp", source);
  PosixProcessRunner runner;
  auto result = runner.run({PTXBENCH_CXX, "-std=c++20", "-fsyntax-only",
                            "-I" + std::string(PTXBENCH_SOURCE_DIR), file.string()},
                           {});
  EXPECT_TRUE(result) << (result ? "" : result.error().message);
  return result ? *result : ProcessResult{};
}

TEST(EnumTable, ACompleteTableCompiles) {
  const ProcessResult result = compile_table("a = 1, b = 2");
  EXPECT_EQ(result.exit_code, 0) << result.err;
}

TEST(EnumTable, AnEnumeratorAppendedWithoutItsRowDoesNotCompile) {
  const ProcessResult result = compile_table("a = 1, b = 2, c = 3");
  EXPECT_NE(result.exit_code, 0);
  EXPECT_NE(result.err.find("kRows lacks a row"), std::string::npos) << result.err;
}

} // namespace
} // namespace ptxbench::util
