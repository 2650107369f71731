// Conformance of the Anthropic Messages client against a loopback server.
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

json anthropic_reply() {
  return {{"id", "msg_01"},
          {"type", "message"},
          {"role", "assistant"},
          {"model", "claude-opus-4-8"},
          {"content",
           {{{"type", "thinking"}, {"thinking", "Plan: TMA + wgmma."}, {"signature", "sig"}},
            {{"type", "redacted_thinking"}, {"data", "opaque"}},
            {{"type", "text"}, {"text", "Here is the kernel:\n"}},
            {{"type", "text"}, {"text", "```cpp\n__global__ void k() {}\n```"}}}},
          {"stop_reason", "end_turn"},
          {"usage",
           {{"input_tokens", 3000},
            {"cache_read_input_tokens", 1000},
            {"cache_creation_input_tokens", 0},
            {"output_tokens", 4000}}}};
}

} // namespace

TEST(AnthropicMessages, SendsSystemTopLevelThinkingAndHeaders) {
  LoopbackServer server(
      [](int, const auto&, auto& response) { reply_json(response, anthropic_reply()); });
  TestDeps test;
  auto spec = spec_for("anthropic", server.base_url(), "claude-opus-4-8");
  spec.sampling.max_output_tokens = 128000;
  spec.sampling.presence_penalty = 1.5; // not an Anthropic parameter: must not be sent
  spec.reasoning.mode = "adaptive";
  spec.reasoning.effort = "xhigh";
  spec.prices = Prices{5, 25};
  auto reply = client_for(spec, test.deps())->complete(make_request(spec, sample_messages()));
  ASSERT_TRUE(reply) << reply.error().message;

  auto request = server.requests()[0];
  EXPECT_EQ(request.path, "/v1/messages");
  EXPECT_EQ(request.header("x-api-key"), kTestKey);
  EXPECT_EQ(request.header("anthropic-version"), "2023-06-01");
  EXPECT_EQ(request.header("Authorization"), "");
  json body = request.json();
  EXPECT_EQ(body["model"], "claude-opus-4-8");
  EXPECT_EQ(body["max_tokens"], 128000);
  EXPECT_EQ(body["system"], "You are an expert CUDA kernel developer.");
  ASSERT_EQ(body["messages"].size(), 3u); // the system message is not among them
  EXPECT_EQ(body["messages"][0]["role"], "user");
  EXPECT_EQ(body["messages"][1]["role"], "assistant");
  EXPECT_EQ(body["thinking"], json({{"type", "adaptive"}}));
  EXPECT_EQ(body["output_config"], json({{"effort", "xhigh"}}));
  EXPECT_FALSE(body.contains("presence_penalty"));

  EXPECT_EQ(reply->text, "Here is the kernel:\n```cpp\n__global__ void k() {}\n```");
  EXPECT_EQ(reply->reasoning, "Plan: TMA + wgmma.");
  EXPECT_EQ(reply->finish_reason, "end_turn");
  EXPECT_EQ(reply->usage.input_tokens, 4000);
  EXPECT_EQ(reply->usage.output_tokens, 4000);
  EXPECT_NEAR(reply->cost_usd, (4000 * 5.0 + 4000 * 25.0) / 1e6, 1e-12);
}

TEST(AnthropicMessages, ABudgetMeansEnabledThinkingWithThatBudget) {
  LoopbackServer server(
      [](int, const auto&, auto& response) { reply_json(response, anthropic_reply()); });
  TestDeps test;
  auto spec = spec_for("anthropic", server.base_url(), "claude-x");
  spec.sampling.max_output_tokens = 64000;
  spec.reasoning.budget_tokens = 32000;
  ASSERT_TRUE(client_for(spec, test.deps())->complete(make_request(spec, sample_messages())));
  EXPECT_EQ(server.requests()[0].json()["thinking"],
            json({{"type", "enabled"}, {"budget_tokens", 32000}}));
}

TEST(AnthropicMessages, AnErrorBodyIsABadResponse) {
  json error = {{"type", "error"},
                {"error", {{"type", "invalid_request_error"}, {"message", "bad"}}}};
  LoopbackServer server([&](int, const auto&, auto& response) { reply_json(response, error); });
  TestDeps test;
  auto spec = spec_for("anthropic", server.base_url(), "claude-x");
  spec.sampling.max_output_tokens = 1000;
  auto reply = client_for(spec, test.deps())->complete(make_request(spec, sample_messages()));
  ASSERT_FALSE(reply);
  EXPECT_EQ(reply.error().kind, util::ErrorKind::bad_response);
  EXPECT_NE(reply.error().message.find("invalid_request_error"), std::string::npos);
}
