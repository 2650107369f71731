// Conformance of the OpenAI-compatible client against a loopback server: request shape and
// reply reading, including the vLLM/SGLang/OpenRouter extensions.
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

json vllm_reply() {
  return {{"id", "chatcmpl-1"},
          {"object", "chat.completion"},
          {"choices",
           {{{"index", 0},
             {"message",
              {{"role", "assistant"},
               {"content", "```cpp\n__global__ void k() {}\n```"},
               {"reasoning_content", "Let me think about tiling."}}},
             {"finish_reason", "stop"}}}},
          {"usage",
           {{"prompt_tokens", 1200},
            {"completion_tokens", 800},
            {"total_tokens", 2000},
            {"completion_tokens_details", {{"reasoning_tokens", 500}}}}}};
}

} // namespace

TEST(OpenAiChat, SendsTheChatCompletionsShapeAndReadsReasoningAndUsage) {
  LoopbackServer server(
      [](int, const auto&, auto& response) { reply_json(response, vllm_reply()); });
  TestDeps test;
  auto spec = spec_for("openai", server.base_url() + "/v1", "Qwen/Qwen3.6-27B");
  spec.sampling = {1.0, 0.95, 20, 1.5, 81920};
  spec.reasoning.effort = "high";
  spec.extra_body = {{"min_p", 0.0}, {"repetition_penalty", 1.0}};
  spec.prices = Prices{0.4, 0.8};
  auto client = client_for(spec, test.deps());
  auto reply = client->complete(make_request(spec, sample_messages()));
  ASSERT_TRUE(reply) << reply.error().message;

  ASSERT_EQ(server.count(), 1u);
  auto request = server.requests()[0];
  EXPECT_EQ(request.path, "/v1/chat/completions");
  EXPECT_EQ(request.header("Authorization"), std::string("Bearer ") + kTestKey);
  EXPECT_EQ(request.header("Content-Type"), "application/json");
  json body = request.json();
  EXPECT_EQ(body["model"], "Qwen/Qwen3.6-27B");
  ASSERT_EQ(body["messages"].size(), 4u);
  EXPECT_EQ(body["messages"][0]["role"], "system");
  EXPECT_EQ(body["messages"][2]["role"], "assistant");
  EXPECT_EQ(body["messages"][3]["content"], "Evaluation FAILED: compile error");
  EXPECT_EQ(body["temperature"], 1.0);
  EXPECT_EQ(body["top_p"], 0.95);
  EXPECT_EQ(body["top_k"], 20);
  EXPECT_EQ(body["presence_penalty"], 1.5);
  EXPECT_EQ(body["max_tokens"], 81920);
  EXPECT_EQ(body["reasoning_effort"], "high");
  EXPECT_EQ(body["min_p"], 0.0);
  EXPECT_EQ(body["repetition_penalty"], 1.0);
  EXPECT_EQ(body["stream"], false);

  EXPECT_EQ(reply->text, "```cpp\n__global__ void k() {}\n```");
  EXPECT_EQ(reply->reasoning, "Let me think about tiling.");
  EXPECT_EQ(reply->finish_reason, "stop");
  EXPECT_EQ(reply->usage.input_tokens, 1200);
  EXPECT_EQ(reply->usage.output_tokens, 800);
  EXPECT_EQ(reply->usage.reasoning_tokens, 500);
  EXPECT_EQ(reply->cost_source, CostSource::registry_prices);
  EXPECT_NEAR(reply->cost_usd, (1200 * 0.4 + 800 * 0.8) / 1e6, 1e-12);
  EXPECT_EQ(reply->attempts, 1);
  EXPECT_GT(reply->latency.count(), 0.0);
  EXPECT_EQ(reply->raw["id"], "chatcmpl-1");
}

TEST(OpenAiChat, ReadsOpenRouterReasoningAndReportedCost) {
  json openrouter = {
      {"choices",
       {{{"message", {{"role", "assistant"}, {"content", "done"}, {"reasoning", "thoughts"}}},
         {"finish_reason", "length"}}}},
      {"usage", {{"prompt_tokens", 10}, {"completion_tokens", 20}, {"cost", 0.0123}}}};
  LoopbackServer server(
      [&](int, const auto&, auto& response) { reply_json(response, openrouter); });
  TestDeps test;
  auto spec = spec_for("openai", server.base_url() + "/api/v1", "z-ai/glm-5.2");
  spec.max_tokens_field = "max_completion_tokens";
  spec.sampling.max_output_tokens = 131072;
  spec.extra_body = {{"provider", {{"only", {"z-ai/fp8", "fireworks"}}}}};
  spec.prices = Prices{1, 1};
  auto reply = client_for(spec, test.deps())->complete(make_request(spec, sample_messages()));
  ASSERT_TRUE(reply) << reply.error().message;
  json body = server.requests()[0].json();
  EXPECT_EQ(server.requests()[0].path, "/api/v1/chat/completions");
  EXPECT_EQ(body["max_completion_tokens"], 131072);
  EXPECT_FALSE(body.contains("max_tokens"));
  EXPECT_EQ(body["provider"]["only"][1], "fireworks");
  EXPECT_EQ(reply->reasoning, "thoughts");
  EXPECT_EQ(reply->finish_reason, "length");
  EXPECT_EQ(reply->cost_source, CostSource::provider_reported);
  EXPECT_DOUBLE_EQ(reply->cost_usd, 0.0123);
}

TEST(OpenAiChat, ALocalServerWithoutKeyGetsNoAuthorizationHeader) {
  json reply_body = {{"choices", {{{"message", {{"content", nullptr}}}}}}};
  LoopbackServer server(
      [&](int, const auto&, auto& response) { reply_json(response, reply_body); });
  TestDeps test;
  auto spec = spec_for("openai", server.base_url() + "/v1");
  spec.api_key_env.reset();
  auto reply = client_for(spec, test.deps())->complete(make_request(spec, sample_messages()));
  ASSERT_TRUE(reply) << reply.error().message;
  EXPECT_EQ(reply->text, "");
  EXPECT_EQ(reply->cost_source, CostSource::unpriced);
  EXPECT_EQ(server.requests()[0].header("Authorization"), "");
  EXPECT_FALSE(server.requests()[0].json().contains("temperature")); // unset: server default
}

TEST(OpenAiChat, AReplyWithoutChoicesIsABadResponseQuotingTheError) {
  json error_body = {{"error", {{"message", "model overloaded, try later"}}}};
  LoopbackServer server(
      [&](int, const auto&, auto& response) { reply_json(response, error_body); });
  TestDeps test;
  auto spec = spec_for("openai", server.base_url());
  auto reply = client_for(spec, test.deps())->complete(make_request(spec, sample_messages()));
  ASSERT_FALSE(reply);
  EXPECT_EQ(reply.error().kind, util::ErrorKind::bad_response);
  EXPECT_NE(reply.error().message.find("model overloaded"), std::string::npos);
  EXPECT_EQ(server.count(), 1u); // not retried
}

TEST(OpenAiChat, AMissingKeyVariableIsReportedByName) {
  TestDeps test;
  auto spec = spec_for("openai", "http://127.0.0.1:1");
  spec.api_key_env = "PTXBENCH_TEST_UNSET_KEY_VARIABLE";
  auto client = make_client(spec, test.deps());
  ASSERT_FALSE(client);
  EXPECT_EQ(client.error().kind, util::ErrorKind::invalid_input);
  EXPECT_NE(client.error().message.find("PTXBENCH_TEST_UNSET_KEY_VARIABLE"), std::string::npos);
}
