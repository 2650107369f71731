// Retries, timeouts and hostile replies, over real HTTP on loopback.
#include "model/retry.hpp"
#include "model/utf8.hpp"
#include "provider_test_support.hpp"
#include "support/loopback_server.hpp"

#include <gtest/gtest.h>

using namespace ptxbench;
using namespace ptxbench::model;
using namespace ptxbench::model::testing;
using nlohmann::json;
using test_support::LoopbackServer;
using test_support::reply_json;
using namespace std::chrono_literals;

namespace {

json ok_reply(const std::string& text) {
  return {{"choices", {{{"message", {{"content", text}}}, {"finish_reason", "stop"}}}},
          {"usage", {{"prompt_tokens", 1}, {"completion_tokens", 2}}}};
}

struct Call {
  util::Expected<ChatResponse> reply{util::Error{}};
  AttemptLog log;
};

std::unique_ptr<Call> call(const ModelSpec& spec, const ClientDeps& deps) {
  auto result = std::make_unique<Call>();
  auto request = make_request(spec, sample_messages());
  request.on_attempt = result->log.observer();
  result->reply = client_for(spec, deps)->complete(request);
  return result;
}

} // namespace

TEST(Retry, AFiveHundredStormIsRetriedABoundedNumberOfTimesThenClassified) {
  LoopbackServer server([](int, const auto&, auto& response) {
    response.status = 500;
    response.set_content("internal error", "text/plain");
  });
  TestDeps test;
  auto spec = spec_for("openai", server.base_url());
  spec.max_attempts = 4;
  auto result = call(spec, test.deps());
  ASSERT_FALSE(result->reply);
  EXPECT_EQ(result->reply.error().kind, util::ErrorKind::http_status);
  EXPECT_NE(result->reply.error().message.find("gave up after 4 attempts"), std::string::npos);
  EXPECT_NE(result->reply.error().message.find("HTTP 500"), std::string::npos);
  EXPECT_EQ(server.count(), 4u);
  ASSERT_EQ(result->log.entries.size(), 4u);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(result->log.entries[i].attempt, i + 1);
    EXPECT_EQ(result->log.entries[i].http_status, 500);
    EXPECT_FALSE(result->log.entries[i].succeeded);
  }
  EXPECT_EQ(result->log.entries[0].request_sha256, result->log.entries[3].request_sha256);
}

TEST(Retry, TransientFailuresThenSuccessReturnTheReplyAndReportEveryAttempt) {
  LoopbackServer server([](int index, const auto&, auto& response) {
    if (index < 2) {
      response.status = index == 0 ? 503 : 529;
      return;
    }
    reply_json(response, ok_reply("third time lucky"));
  });
  TestDeps test;
  auto result = call(spec_for("openai", server.base_url()), test.deps());
  ASSERT_TRUE(result->reply) << result->reply.error().message;
  EXPECT_EQ(result->reply->text, "third time lucky");
  EXPECT_EQ(result->reply->attempts, 3);
  ASSERT_EQ(result->log.entries.size(), 3u);
  EXPECT_EQ(result->log.entries[1].http_status, 529);
  EXPECT_TRUE(result->log.entries[2].succeeded);
}

TEST(Retry, A429WithRetryAfterWaitsAtLeastThatLong) {
  LoopbackServer server([](int index, const auto&, auto& response) {
    if (index == 0) {
      response.status = 429;
      response.set_header("Retry-After", "1");
      return;
    }
    reply_json(response, ok_reply("after the wait"));
  });
  TestDeps test;
  auto start = std::chrono::steady_clock::now();
  auto result = call(spec_for("openai", server.base_url()), test.deps());
  auto waited = std::chrono::steady_clock::now() - start;
  ASSERT_TRUE(result->reply) << result->reply.error().message;
  EXPECT_GE(waited, 1s);
  EXPECT_LT(waited, 5s);
  ASSERT_EQ(result->log.entries.size(), 2u);
  ASSERT_TRUE(result->log.entries[0].error.has_value());
  EXPECT_EQ(result->log.entries[0].error->kind, util::ErrorKind::rate_limited);
}

TEST(Retry, A429StormEndsRateLimited) {
  LoopbackServer server([](int, const auto&, auto& response) { response.status = 429; });
  TestDeps test;
  auto spec = spec_for("openai", server.base_url());
  spec.max_attempts = 3;
  auto result = call(spec, test.deps());
  ASSERT_FALSE(result->reply);
  EXPECT_EQ(result->reply.error().kind, util::ErrorKind::rate_limited);
  EXPECT_EQ(server.count(), 3u);
}

TEST(Retry, AClientErrorIsNotRetried) {
  LoopbackServer server([](int, const auto&, auto& response) {
    reply_json(response, {{"error", {{"message", "maximum context length exceeded"}}}}, 400);
  });
  TestDeps test;
  auto result = call(spec_for("openai", server.base_url()), test.deps());
  ASSERT_FALSE(result->reply);
  EXPECT_EQ(result->reply.error().kind, util::ErrorKind::http_status);
  EXPECT_NE(result->reply.error().message.find("maximum context length"), std::string::npos);
  EXPECT_EQ(server.count(), 1u);
}

TEST(Retry, AServerSlowerThanTheTimeoutIsATimeoutAfterBoundedAttempts) {
  LoopbackServer* self = nullptr;
  LoopbackServer server([&](int, const auto&, auto& response) {
    self->hold(10s);
    reply_json(response, ok_reply("too late"));
  });
  self = &server;
  TestDeps test;
  auto spec = spec_for("openai", server.base_url());
  spec.timeout = 1s;
  spec.max_attempts = 2;
  auto start = std::chrono::steady_clock::now();
  auto result = call(spec, test.deps());
  auto elapsed = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(result->reply);
  EXPECT_EQ(result->reply.error().kind, util::ErrorKind::timeout);
  EXPECT_EQ(result->log.entries.size(), 2u);
  EXPECT_LT(elapsed, 6s);
  server.release();
}

TEST(Retry, ARefusedConnectionIsATransportError) {
  int port = 0;
  {
    LoopbackServer closed([](int, const auto&, auto&) {});
    port = closed.port();
  }
  TestDeps test;
  auto spec = spec_for("openai", "http://127.0.0.1:" + std::to_string(port));
  spec.max_attempts = 2;
  auto result = call(spec, test.deps());
  ASSERT_FALSE(result->reply);
  EXPECT_EQ(result->reply.error().kind, util::ErrorKind::transport);
  EXPECT_EQ(result->log.entries.size(), 2u);
}

TEST(BadReplies, MalformedJsonIsABadResponseAndNotRetried) {
  LoopbackServer server([](int, const auto&, auto& response) {
    response.set_content("{\"choices\": [ {\"message\": ", "application/json");
  });
  TestDeps test;
  auto result = call(spec_for("openai", server.base_url()), test.deps());
  ASSERT_FALSE(result->reply);
  EXPECT_EQ(result->reply.error().kind, util::ErrorKind::bad_response);
  EXPECT_EQ(server.count(), 1u);
}

TEST(BadReplies, ABodyOverTheSizeCapIsABadResponse) {
  std::string huge(3 << 20, 'x');
  LoopbackServer server(
      [&](int, const auto&, auto& response) { reply_json(response, ok_reply(huge)); });
  TestDeps test;
  auto deps = test.deps();
  deps.max_response_bytes = 1 << 20;
  auto result = call(spec_for("openai", server.base_url()), deps);
  ASSERT_FALSE(result->reply);
  EXPECT_EQ(result->reply.error().kind, util::ErrorKind::bad_response);
  EXPECT_NE(result->reply.error().message.find("larger than"), std::string::npos);
  EXPECT_EQ(server.count(), 1u);
}

TEST(BadReplies, AHugeReplyWithinTheCapIsReadWhole) {
  std::string huge = "```cpp\n" + std::string(4 << 20, 'a') + "\n```";
  LoopbackServer server(
      [&](int, const auto&, auto& response) { reply_json(response, ok_reply(huge)); });
  TestDeps test;
  auto result = call(spec_for("openai", server.base_url()), test.deps());
  ASSERT_TRUE(result->reply) << result->reply.error().message;
  EXPECT_EQ(result->reply->text.size(), huge.size());
}

TEST(BadReplies, InvalidUtf8InContentIsReplacedNotFatal) {
  // Raw invalid bytes inside the JSON string: a stray continuation byte, a truncated sequence,
  // an overlong encoding and a UTF-16 surrogate encoded as UTF-8.
  std::string body = "{\"choices\":[{\"message\":{\"content\":\"ok \x80 \xE2\x82 \xC0\xAF "
                     "\xED\xA0\x80 end\"},\"finish_reason\":\"stop\"}]}";
  LoopbackServer server(
      [&](int, const auto&, auto& response) { response.set_content(body, "application/json"); });
  TestDeps test;
  auto result = call(spec_for("openai", server.base_url()), test.deps());
  ASSERT_TRUE(result->reply) << result->reply.error().message;
  EXPECT_TRUE(is_valid_utf8(result->reply->text));
  EXPECT_EQ(result->reply->text.substr(0, 3), "ok ");
  EXPECT_NE(result->reply->text.find("\xEF\xBF\xBD"), std::string::npos);
  EXPECT_EQ(result->reply->text.substr(result->reply->text.size() - 3), "end");
  EXPECT_NO_THROW((void)result->reply->raw.dump());
}

TEST(RetryPolicy, BackoffGrowsIsJitteredAndCapped) {
  RetryPolicy policy;
  policy.initial_delay = 100ms;
  policy.max_delay = 1000ms;
  std::mt19937_64 rng(42);
  for (int i = 0; i < 50; ++i) {
    auto first = next_delay(policy, 1, std::nullopt, rng);
    EXPECT_GE(first, 50ms);
    EXPECT_LE(first, 100ms);
    auto third = next_delay(policy, 3, std::nullopt, rng);
    EXPECT_GE(third, 200ms);
    EXPECT_LE(third, 400ms);
    EXPECT_LE(next_delay(policy, 20, std::nullopt, rng), 1000ms);
  }
  auto asked = next_delay(policy, 1, 2000ms, rng);
  EXPECT_GE(asked, 2000ms);
  EXPECT_LE(asked, 2200ms);
  policy.max_retry_after = 500ms;
  EXPECT_LE(next_delay(policy, 1, std::chrono::milliseconds(3600000), rng), 550ms);
}

TEST(RetryPolicy, RetryAfterReadsSecondsDatesAndMilliseconds) {
  HttpResponse response;
  auto now = std::chrono::system_clock::from_time_t(784111777); // Sun, 06 Nov 1994 08:49:37 GMT
  response.headers = {{"retry-after", "7"}};
  EXPECT_EQ(retry_after(response, now), std::chrono::milliseconds(7000));
  response.headers = {{"retry-after", "Sun, 06 Nov 1994 08:49:47 GMT"}};
  EXPECT_EQ(retry_after(response, now), std::chrono::milliseconds(10000));
  response.headers = {{"retry-after-ms", "250"}, {"retry-after", "9"}};
  EXPECT_EQ(retry_after(response, now), std::chrono::milliseconds(250));
  response.headers = {{"retry-after", "soon"}};
  EXPECT_EQ(retry_after(response, now), std::nullopt);
  EXPECT_EQ(retry_for_status(404), Retry::no);
  EXPECT_EQ(retry_for_status(408), Retry::yes);
  EXPECT_EQ(retry_for_status(502), Retry::yes);
}
