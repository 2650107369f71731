// Hostile model replies carried through the replay provider to code extraction.
#include "compile/extract.hpp"
#include "model/factory.hpp"
#include "model/utf8.hpp"
#include "support/replay_client.hpp"
#include "support/scratch_dir.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

using namespace ptxbench;
using namespace ptxbench::model;
using nlohmann::json;
using test_support::replay_client;
using test_support::reply_line;
using test_support::ScratchDir;

namespace {

const std::string kKernel = "__global__ void k(float* y) { y[0] = 1; }\n"
                            "void run(float* y, cudaStream_t s) { k<<<1, 1, 0, s>>>(y); }";

} // namespace

TEST(BadReplies, NoCodeIsAnExtractionErrorTheLoopCanReport) {
  ScratchDir dir;
  auto client =
      replay_client(dir, reply_line({{"text", "I would tile the GEMM in 128x128 blocks."}}));
  auto reply = client->complete(ChatRequest{});
  ASSERT_TRUE(reply);
  auto extracted = compile::extract_candidate(reply->text);
  ASSERT_FALSE(extracted);
  EXPECT_EQ(extracted.error().kind, util::ErrorKind::extraction);
}

TEST(BadReplies, TwoCandidateBlocksTakeTheLastWithANote) {
  ScratchDir dir;
  std::string text =
      "Draft:\n```cpp\n" + kKernel + "\n```\nFinal:\n```cuda\n// v2\n" + kKernel + "\n```\n";
  auto client = replay_client(dir, reply_line({{"text", text}}));
  auto reply = client->complete(ChatRequest{});
  ASSERT_TRUE(reply);
  auto extracted = compile::extract_candidate(reply->text);
  ASSERT_TRUE(extracted) << extracted.error().message;
  EXPECT_EQ(extracted->block_count, 2u);
  EXPECT_EQ(extracted->block_index, 1u);
  EXPECT_NE(extracted->code.find("// v2"), std::string::npos);
}

TEST(BadReplies, AHugeReplyAndInvalidUtf8AreHandled) {
  ScratchDir dir;
  std::string huge = std::string(2 << 20, '#') + "\n```cpp\n" + kKernel + "\n```\n";
  // A recording with raw invalid bytes inside a JSON string, as a proxy might pass them on.
  std::string raw_line = "{\"text\": \"```cpp\\n// caf\xC3\\n\"}\n";
  auto client = replay_client(dir, reply_line({{"text", huge}}) + raw_line);
  auto big = client->complete(ChatRequest{});
  ASSERT_TRUE(big);
  EXPECT_TRUE(compile::extract_candidate(big->text));
  auto repaired = client->complete(ChatRequest{});
  ASSERT_TRUE(repaired);
  EXPECT_TRUE(is_valid_utf8(repaired->text));
  EXPECT_NE(repaired->text.find("caf\xEF\xBF\xBD"), std::string::npos);
  EXPECT_NO_THROW((void)compile::extract_candidate(repaired->text));
  EXPECT_NO_THROW((void)compile::extract_candidate("```cpp\n\xC3\n" + kKernel + "\n```\xFF"));
}
