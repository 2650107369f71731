// The API key never appears in an error, an attempt report or a redacted URL.
#include "model/secret.hpp"
#include "provider_test_support.hpp"
#include "support/loopback_server.hpp"

#include <gtest/gtest.h>

using namespace ptxbench;
using namespace ptxbench::model;
using namespace ptxbench::model::testing;
using test_support::LoopbackServer;

TEST(Secrets, RedactUrlDropsUserInfoAndQueryValues) {
  EXPECT_EQ(redact_url("https://user:pw@host.example/v1/x?key=abc&alt=json"),
            "https://host.example/v1/x?key=REDACTED&alt=REDACTED");
  EXPECT_EQ(redact_url("http://127.0.0.1:30000/v1/chat/completions"),
            "http://127.0.0.1:30000/v1/chat/completions");
  EXPECT_EQ(redact_url("https://h/p?flag"), "https://h/p?flag");
}

TEST(Secrets, ScrubReplacesEveryOccurrence) {
  Secret key("sk-abcdefgh12345678");
  EXPECT_EQ(scrub("a sk-abcdefgh12345678 b sk-abcdefgh12345678", key), "a REDACTED b REDACTED");
  EXPECT_EQ(scrub("dummy text", Secret("dummy")), "dummy text"); // too short to be a key
}

TEST(Secrets, AnErrorBodyEchoingTheKeyDoesNotLeakIt) {
  // Some APIs quote the key they refused; every error path and every report must scrub it.
  LoopbackServer server([](int index, const httplib::Request& request, auto& response) {
    std::string echoed = request.get_header_value("x-goog-api-key");
    response.status = index == 0 ? 503 : 401;
    response.set_content("{\"error\":\"invalid key " + echoed + "\"}", "application/json");
  });
  TestDeps test;
  auto spec = spec_for("gemini", server.base_url(), "gemini-x");
  AttemptLog log;
  auto request = make_request(spec, sample_messages());
  request.on_attempt = log.observer();
  auto reply = client_for(spec, test.deps())->complete(request);
  ASSERT_FALSE(reply);
  EXPECT_EQ(reply.error().kind, util::ErrorKind::http_status);
  EXPECT_EQ(server.requests()[0].header("x-goog-api-key"), kTestKey); // it was sent...
  EXPECT_EQ(reply.error().message.find(kTestKey), std::string::npos) << reply.error().message;
  EXPECT_NE(reply.error().message.find("REDACTED"), std::string::npos);
  ASSERT_EQ(log.entries.size(), 2u);
  for (const auto& entry : log.entries) {
    ASSERT_TRUE(entry.error.has_value());
    EXPECT_EQ(entry.error->message.find(kTestKey), std::string::npos);
  }
}

TEST(Secrets, TransportErrorsQuoteOnlyTheRedactedUrl) {
  int port = 0;
  {
    LoopbackServer closed([](int, const auto&, auto&) {});
    port = closed.port();
  }
  TestDeps test;
  auto spec = spec_for("openai", "http://user:" + std::string(kTestKey) +
                                     "@127.0.0.1:" + std::to_string(port) + "/v1?key=" + kTestKey);
  spec.max_attempts = 1;
  auto reply = client_for(spec, test.deps())->complete(make_request(spec, sample_messages()));
  ASSERT_FALSE(reply);
  EXPECT_EQ(reply.error().kind, util::ErrorKind::transport);
  EXPECT_EQ(reply.error().message.find(kTestKey), std::string::npos) << reply.error().message;
}

TEST(Secrets, AMissingKeyErrorNamesTheVariableOnly) {
  TestDeps test;
  auto spec = spec_for("anthropic", "http://127.0.0.1:1", "claude-x");
  spec.api_key_env = "PTXBENCH_TEST_EMPTY_KEY";
  auto deps = test.deps();
  deps.env = [](const std::string&) { return std::optional<std::string>(""); };
  auto client = make_client(spec, deps);
  ASSERT_FALSE(client);
  EXPECT_NE(client.error().message.find("PTXBENCH_TEST_EMPTY_KEY"), std::string::npos);
}
