#include "compile/extract.hpp"
#include "fence.hpp"

#include <gtest/gtest.h>

using namespace ptxbench;
using namespace ptxbench::compile;
using ptxbench::compile::testing::fenced;

namespace {

constexpr std::string_view kNoBlock =
    "Could not extract a ```cuda code block from your response. Please provide your complete "
    "CUDA kernel in a single ```cuda code block.";

const std::string kCandidate = "#include <cuda_runtime.h>\n"
                               "__global__ void k(float* y) { y[0] = 1.0f; }\n"
                               "void run(float* y, cudaStream_t stream) {\n"
                               "  k<<<1, 1, 0, stream>>>(y);\n"
                               "}\n";

} // namespace

TEST(Extract, SingleCppBlockIsTheCandidate) {
  auto extraction =
      extract_candidate("Here is my kernel:\n\n" + fenced("cpp", kCandidate) + "Done.");
  ASSERT_TRUE(extraction) << extraction.error().message;
  EXPECT_EQ(extraction->code, kCandidate);
  EXPECT_EQ(extraction->block_count, 1u);
  EXPECT_TRUE(extraction->notes.empty());
}

TEST(Extract, CudaCuAndCxxFencesAreAcceptedInAnyCase) {
  for (std::string_view info : {"cuda", "CUDA", "cu", "c++", "Cpp title=\"kernel.cu\""}) {
    auto extraction = extract_candidate(fenced(info, kCandidate));
    ASSERT_TRUE(extraction) << info;
    EXPECT_EQ(extraction->code, kCandidate);
  }
}

TEST(Extract, LastOfSeveralCompleteBlocksWinsWithANote) {
  std::string second = kCandidate + "// v2\n";
  auto extraction =
      extract_candidate(fenced("cpp", kCandidate) + "Better:\n" + fenced("python", "print(1)\n") +
                        fenced("cuda", second) + fenced("cpp", "__global__ void helper() {}\n"));
  ASSERT_TRUE(extraction);
  EXPECT_EQ(extraction->code, second);
  EXPECT_EQ(extraction->block_index, 2u);
  EXPECT_EQ(extraction->block_count, 4u);
  ASSERT_EQ(extraction->notes.size(), 1u);
  EXPECT_NE(extraction->notes[0].find("2 complete code blocks"), std::string::npos);
}

TEST(Extract, IncompleteBlockOnlyExplainsWhatIsMissing) {
  auto no_run =
      extract_candidate(fenced("cpp", "__global__ void k() {}\nvoid launch() { run(1); }\n"));
  ASSERT_FALSE(no_run);
  EXPECT_EQ(no_run.error().kind, util::ErrorKind::extraction);
  EXPECT_NE(no_run.error().message.find("does not define the host function `run(...)`"),
            std::string::npos);

  auto no_kernel = extract_candidate(fenced("cpp", "void run(float* y) { y[0] = 1; }\n"));
  ASSERT_FALSE(no_kernel);
  EXPECT_NE(no_kernel.error().message.find("has no kernel"), std::string::npos);
}

TEST(Extract, RunAndKernelInsideCommentsDoNotCount) {
  auto extraction = extract_candidate(fenced("cpp", "// __global__ void k();\n"
                                                    "/* void run(float* y) { } */\n"
                                                    "const char* s = \"<<<\";\n"));
  ASSERT_FALSE(extraction);
  EXPECT_NE(extraction.error().message.find("neither"), std::string::npos);
}

TEST(Extract, NoBlockGivesThePapersMessage) {
  auto extraction = extract_candidate("I would write a kernel with wgmma, but not today.");
  ASSERT_FALSE(extraction);
  EXPECT_EQ(extraction.error().kind, util::ErrorKind::extraction);
  EXPECT_EQ(extraction.error().message, kNoBlock);
}

TEST(Extract, OnlyOtherLanguagesGivesThePapersMessageAndSaysWhy) {
  auto extraction = extract_candidate(fenced("python", "def run(): pass\n"));
  ASSERT_FALSE(extraction);
  EXPECT_EQ(extraction.error().message.substr(0, kNoBlock.size()), kNoBlock);
  EXPECT_NE(extraction.error().message.find("none is labelled cpp"), std::string::npos);
}

TEST(Extract, UnclosedFenceAtTheEndIsTakenWithANote) {
  auto extraction = extract_candidate("Kernel:\n```cpp\n" + kCandidate);
  ASSERT_TRUE(extraction);
  EXPECT_EQ(extraction->code, kCandidate);
  ASSERT_EQ(extraction->notes.size(), 1u);
  EXPECT_NE(extraction->notes[0].find("no closing fence"), std::string::npos);
}

TEST(Extract, CrlfLineEndsBecomeLf) {
  std::string reply = "Intro\r\n```cpp\r\n";
  for (char c : kCandidate)
    reply += c == '\n' ? std::string("\r\n") : std::string(1, c);
  reply += "```\r\n";
  auto extraction = extract_candidate(reply);
  ASSERT_TRUE(extraction);
  EXPECT_EQ(extraction->code, kCandidate);
}

TEST(Extract, IndentedFenceInAListLosesItsIndentation) {
  std::string reply = "1. Kernel:\n   ```cpp\n";
  for (const auto& line :
       {"#include <cuda_runtime.h>", "__global__ void k(float* y) { y[0] = 1.0f; }",
        "void run(float* y, cudaStream_t stream) {", "  k<<<1, 1, 0, stream>>>(y);", "}"})
    reply += "   " + std::string(line) + "\n";
  reply += "   ```\n";
  auto extraction = extract_candidate(reply);
  ASSERT_TRUE(extraction);
  EXPECT_EQ(extraction->code, kCandidate);
}

TEST(Extract, HugeReplyIsHandledInLinearTime) {
  std::string reply;
  reply.reserve(11u << 20);
  while (reply.size() < (10u << 20))
    reply += "run(run(run( ((( <<< thinking ``` about it\n";
  reply += fenced("cpp", kCandidate);
  auto start = std::chrono::steady_clock::now();
  auto extraction = extract_candidate(reply);
  auto elapsed = std::chrono::steady_clock::now() - start;
  ASSERT_TRUE(extraction);
  EXPECT_EQ(extraction->code, kCandidate);
  EXPECT_LT(elapsed, std::chrono::seconds(5));
}

TEST(Extract, HugeUnclosedBlockOfParenthesesStaysLinear) {
  std::string body;
  while (body.size() < (10u << 20))
    body += "run(";
  auto start = std::chrono::steady_clock::now();
  auto extraction = extract_candidate("```cpp\n__global__ void k() {}\n" + body);
  EXPECT_FALSE(extraction);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
}

TEST(Extract, InvalidUtf8BytesAreCarriedThrough) {
  std::string bytes = "\xff\xfe\xc3\x28\xa0\xa1\x80";
  std::string code = "// " + bytes + "\n" + kCandidate;
  auto extraction = extract_candidate(bytes + "\n" + fenced("cpp", code) + bytes);
  ASSERT_TRUE(extraction);
  EXPECT_EQ(extraction->code, code);
}

TEST(Extract, FindCodeBlocksReportsInfoLineAndClosure) {
  auto blocks = find_code_blocks("a\n~~~~ cuda\nx\n~~~\ny\n~~~~\n```\nplain\n```\n````cpp\nz\n");
  ASSERT_EQ(blocks.size(), 3u);
  EXPECT_EQ(blocks[0].info, "cuda");
  EXPECT_EQ(blocks[0].code, "x\n~~~\ny\n");
  EXPECT_EQ(blocks[0].line, 2u);
  EXPECT_TRUE(blocks[0].closed);
  EXPECT_EQ(blocks[1].info, "");
  EXPECT_EQ(blocks[2].code, "z\n");
  EXPECT_FALSE(blocks[2].closed);
}

// Issue 17 item 5: a reply with a ```cuda block and a ```json block was told "Found 1 ```cpp
// code block(s)" and then asked for ```cpp.
TEST(Extract, TheCountOfIncompleteBlocksNamesTheLanguagesItCounted) {
  auto extraction =
      extract_candidate(fenced("cuda", "__global__ void k() {}\n") + fenced("json", "{}\n"));
  ASSERT_FALSE(extraction);
  const std::string& message = extraction.error().message;
  EXPECT_NE(message.find("Found 1 code block(s) labelled cpp, c++, cuda or cu (and 1 in another "
                         "language)"),
            std::string::npos)
      << message;
  EXPECT_EQ(message.find("```cpp"), std::string::npos) << message;
  EXPECT_NE(message.find(std::string("single ") + std::string(kCodeFence)), std::string::npos);
}
