// The replay provider: recorded replies in order, and the UTF-8 repair of reply texts.
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

TEST(Replay, PlaysRepliesInOrderThenFailsClearly) {
  ScratchDir dir;
  auto client = replay_client(
      dir, reply_line({{"text", "first"},
                       {"reasoning", "r1"},
                       {"usage", {{"input_tokens", 1000000}, {"output_tokens", 500000}}}}) +
               "\n" + reply_line({{"error", {{"kind", "rate_limited"}, {"message", "HTTP 429"}}}}) +
               reply_line({{"text", "third"}, {"finish_reason", "length"}}));
  int reports = 0;
  ChatRequest request;
  request.messages = {{Role::user, "go"}};
  request.on_attempt = [&](const AttemptRecord& record) {
    ++reports;
    EXPECT_EQ(record.provider, "replay");
  };
  auto first = client->complete(request);
  ASSERT_TRUE(first);
  EXPECT_EQ(first->text, "first");
  EXPECT_EQ(first->reasoning, "r1");
  EXPECT_DOUBLE_EQ(first->cost_usd, 1.0 + 1.0); // 1M in at $1, 0.5M out at $2
  auto second = client->complete(request);
  ASSERT_FALSE(second);
  EXPECT_EQ(second.error().kind, util::ErrorKind::rate_limited);
  auto third = client->complete(request);
  ASSERT_TRUE(third);
  EXPECT_EQ(third->finish_reason, "length");
  auto exhausted = client->complete(request);
  ASSERT_FALSE(exhausted);
  EXPECT_EQ(exhausted.error().kind, util::ErrorKind::invalid_input);
  EXPECT_NE(exhausted.error().message.find("replies.jsonl exhausted after 3 replies"),
            std::string::npos);
  EXPECT_EQ(reports, 3);
}

TEST(Replay, ABadLineNamesFileAndLine) {
  ScratchDir dir;
  ModelSpec spec;
  spec.name = "demo";
  spec.provider = "replay";
  spec.replay_file = dir.write("bad.jsonl", reply_line({{"text", "ok"}}) + "{\"text\": 3}\n");
  auto client = make_client(spec, ClientDeps{});
  ASSERT_FALSE(client);
  EXPECT_NE(client.error().message.find("bad.jsonl:2: $.text: expected a string, got integer"),
            std::string::npos)
      << client.error().message;
}

TEST(Replay, AWrongTypedFieldNamesFileLineAndPath) {
  ScratchDir dir;
  ModelSpec spec;
  spec.name = "demo";
  spec.provider = "replay";
  spec.replay_file =
      dir.write("usage.jsonl", reply_line({{"text", "ok"}, {"usage", {{"output_tokens", "20"}}}}) +
                                   R"({"error": {"kind": "rate_limited", "message": 429}})" + "\n");
  auto client = make_client(spec, ClientDeps{});
  ASSERT_FALSE(client);
  EXPECT_EQ(client.error().kind, util::ErrorKind::invalid_input);
  EXPECT_NE(client.error().message.find(
                "usage.jsonl:1: $.usage.output_tokens: expected an integer >= 0, got string"),
            std::string::npos)
      << client.error().message;
  spec.replay_file = dir.write("kind.jsonl", R"({"error": {"kind": "slow", "message": "m"}})");
  auto kind = make_client(spec, ClientDeps{});
  ASSERT_FALSE(kind);
  EXPECT_NE(kind.error().message.find("kind.jsonl:1: $.error.kind: "), std::string::npos)
      << kind.error().message;
}

TEST(Utf8, SanitizeReplacesEachInvalidRunAndKeepsValidText) {
  EXPECT_EQ(sanitize_utf8("plain ascii"), "plain ascii");
  EXPECT_EQ(sanitize_utf8("Gr\xC3\xBC\xC3\x9F"
                          "e \xE2\x9C\x93 \xF0\x9F\x9A\x80"),
            "Gr\xC3\xBC\xC3\x9F"
            "e \xE2\x9C\x93 \xF0\x9F\x9A\x80");
  EXPECT_EQ(sanitize_utf8("a\x80\x80"
                          "b"),
            "a\xEF\xBF\xBD"
            "b");
  EXPECT_EQ(sanitize_utf8("\xC0\xAF"), "\xEF\xBF\xBD");         // overlong
  EXPECT_EQ(sanitize_utf8("\xED\xA0\x80"), "\xEF\xBF\xBD");     // surrogate
  EXPECT_EQ(sanitize_utf8("\xF4\x90\x80\x80"), "\xEF\xBF\xBD"); // above U+10FFFF
  EXPECT_EQ(sanitize_utf8("end\xE2\x82"), "end\xEF\xBF\xBD");   // truncated
  EXPECT_TRUE(is_valid_utf8(sanitize_utf8("\xFF\xFE\xFD mixed \xC3")));
}
