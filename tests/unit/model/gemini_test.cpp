// Conformance of the Gemini generateContent client against a loopback server.
#include "provider_test_support.hpp"
#include "support/loopback_server.hpp"

#include <gtest/gtest.h>

using namespace ptxbench;
using namespace ptxbench::model;
using namespace ptxbench::model::testing;
using nlohmann::json;
using test_support::LoopbackServer;
using test_support::reply_json;

namespace {

json gemini_reply() {
  return {{"candidates",
           {{{"content",
              {{"role", "model"},
               {"parts",
                {{{"text", "Thinking about swizzles."}, {"thought", true}},
                 {{"text", "```cpp\n__global__ void k() {}\n```"}}}}}},
             {"finishReason", "STOP"}}}},
          {"usageMetadata",
           {{"promptTokenCount", 900},
            {"candidatesTokenCount", 300},
            {"thoughtsTokenCount", 700},
            {"totalTokenCount", 1900}}}};
}

} // namespace

TEST(Gemini, SendsContentsSystemInstructionAndGenerationConfig) {
  LoopbackServer server(
      [](int, const auto&, auto& response) { reply_json(response, gemini_reply()); });
  TestDeps test;
  auto spec = spec_for("gemini", server.base_url(), "gemini-3.1-pro-preview");
  spec.sampling = {1.0, 0.95, 40, 0.5, 65536};
  spec.reasoning.effort = "high";
  spec.reasoning.budget_tokens = 8192;
  spec.prices = Prices{2, 12};
  auto reply = client_for(spec, test.deps())->complete(make_request(spec, sample_messages()));
  ASSERT_TRUE(reply) << reply.error().message;

  auto request = server.requests()[0];
  EXPECT_EQ(request.path, "/v1beta/models/gemini-3.1-pro-preview:generateContent");
  EXPECT_EQ(request.header("x-goog-api-key"), kTestKey);
  json body = request.json();
  ASSERT_EQ(body["contents"].size(), 3u);
  EXPECT_EQ(body["contents"][0]["role"], "user");
  EXPECT_EQ(body["contents"][1]["role"], "model");
  EXPECT_EQ(body["contents"][1]["parts"][0]["text"], "```cpp\n// first try\n```");
  EXPECT_EQ(body["systemInstruction"]["parts"][0]["text"],
            "You are an expert CUDA kernel developer.");
  const json& config = body["generationConfig"];
  EXPECT_EQ(config["temperature"], 1.0);
  EXPECT_EQ(config["topP"], 0.95);
  EXPECT_EQ(config["topK"], 40);
  EXPECT_EQ(config["presencePenalty"], 0.5);
  EXPECT_EQ(config["maxOutputTokens"], 65536);
  EXPECT_EQ(config["thinkingConfig"],
            json({{"includeThoughts", true}, {"thinkingBudget", 8192}, {"thinkingLevel", "high"}}));

  EXPECT_EQ(reply->text, "```cpp\n__global__ void k() {}\n```");
  EXPECT_EQ(reply->reasoning, "Thinking about swizzles.");
  EXPECT_EQ(reply->finish_reason, "STOP");
  EXPECT_EQ(reply->usage.input_tokens, 900);
  EXPECT_EQ(reply->usage.output_tokens, 1000); // candidates + thoughts
  EXPECT_EQ(reply->usage.reasoning_tokens, 700);
  EXPECT_NEAR(reply->cost_usd, (900 * 2.0 + 1000 * 12.0) / 1e6, 1e-12);
}

TEST(Gemini, DisabledThinkingSendsAZeroBudget) {
  LoopbackServer server(
      [](int, const auto&, auto& response) { reply_json(response, gemini_reply()); });
  TestDeps test;
  auto spec = spec_for("gemini", server.base_url(), "gemini-x");
  spec.reasoning.mode = "disabled";
  spec.reasoning.include_thoughts = false;
  ASSERT_TRUE(client_for(spec, test.deps())->complete(make_request(spec, sample_messages())));
  EXPECT_EQ(server.requests()[0].json()["generationConfig"]["thinkingConfig"],
            json({{"includeThoughts", false}, {"thinkingBudget", 0}}));
}

TEST(Gemini, ABlockedPromptIsABadResponseNamingTheReason) {
  json blocked = {{"promptFeedback", {{"blockReason", "SAFETY"}}}};
  LoopbackServer server([&](int, const auto&, auto& response) { reply_json(response, blocked); });
  TestDeps test;
  auto spec = spec_for("gemini", server.base_url(), "gemini-x");
  auto reply = client_for(spec, test.deps())->complete(make_request(spec, sample_messages()));
  ASSERT_FALSE(reply);
  EXPECT_EQ(reply.error().kind, util::ErrorKind::bad_response);
  EXPECT_NE(reply.error().message.find("SAFETY"), std::string::npos);
}
