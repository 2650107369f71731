// Triton replies: the last complete ```python block is the candidate; a reply without one gets
// feedback that asks for a python block, not a cpp one.
#include "compile/extract.hpp"
#include "fence.hpp"

#include <gtest/gtest.h>

using namespace ptxbench;
using namespace ptxbench::compile;
using ptxbench::compile::testing::fenced;

namespace {

constexpr const char* kKernel = "import triton\n"
                                "import triton.language as tl\n"
                                "@triton.jit\n"
                                "def k(x):\n"
                                "    pass\n"
                                "def run(A, B, C, M):\n"
                                "    k[(1,)](A)\n";

} // namespace

TEST(ExtractPython, TakesTheLastCompletePythonBlockAndIgnoresCppOnes) {
  std::string reply = "Plan.\n" + fenced("python", "def helper():\n    pass\n") +
                      fenced("cuda", "__global__ void k() {}\nvoid run() {}\n") +
                      fenced("py", kKernel) + "Done.\n";
  auto got = extract_python_candidate(reply);
  ASSERT_TRUE(got) << got.error().message;
  EXPECT_EQ(got->code, kKernel);
  EXPECT_EQ(got->block_index, 2u);
  EXPECT_TRUE(got->notes.empty());
}

TEST(ExtractPython, NoPythonBlockAsksForOneAndCountsTheOthers) {
  auto got = extract_python_candidate(fenced("cpp", "void run() {}\n"));
  ASSERT_FALSE(got);
  EXPECT_EQ(got.error().kind, util::ErrorKind::extraction);
  EXPECT_NE(got.error().message.find("Could not extract a ```python code block"),
            std::string::npos);
  EXPECT_NE(got.error().message.find("1 fenced block(s), but none is labelled python"),
            std::string::npos);
  auto none = extract_python_candidate("no code at all");
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().message.find("fenced block(s)"), std::string::npos);
}

TEST(ExtractPython, IncompleteBlocksSayWhatTheLastOneLacks) {
  auto no_run =
      extract_python_candidate(fenced("python", "import triton\n@triton.jit\ndef k():\n  pass\n"));
  ASSERT_FALSE(no_run);
  EXPECT_NE(no_run.error().message.find("does not define the top-level function `run(...)`"),
            std::string::npos);
  auto no_jit = extract_python_candidate(fenced("Python", "def run(A):\n    pass\n"));
  ASSERT_FALSE(no_jit);
  EXPECT_NE(no_jit.error().message.find("has no `@triton.jit` kernel"), std::string::npos);
  auto nested = extract_python_candidate(fenced(
      "python", "@triton.jit\ndef k():\n  pass\nclass C:\n    def run(self):\n      pass\n"));
  ASSERT_FALSE(nested) << "a method named run is not the top-level entry point";
}

TEST(ExtractPython, AnUnclosedLastBlockIsTakenWithANote) {
  std::string reply = "```python\n" + std::string(kKernel);
  auto got = extract_python_candidate(reply);
  ASSERT_TRUE(got) << got.error().message;
  ASSERT_EQ(got->notes.size(), 1u);
  EXPECT_NE(got->notes[0].find("no closing fence"), std::string::npos);
}
