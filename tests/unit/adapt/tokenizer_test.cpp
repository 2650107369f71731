#include "adapt/tokenizer.hpp"
#include "model/http_transport.hpp"
#include "support/loopback_server.hpp"

#include <gtest/gtest.h>

namespace ptxbench::adapt {
namespace {

TEST(ApproxTokenizer, CountsQuarterBytesAndSaysItIsApproximate) {
  ApproxTokenizer tokenizer;
  EXPECT_EQ(tokenizer.count("12345678").value(), 2);
  EXPECT_EQ(tokenizer.count("123456789").value(), 3);
  EXPECT_TRUE(tokenizer.approximate());
  EXPECT_TRUE(tokenizer.describe()["approximate"].get<bool>());
}

TEST(EndpointTokenizer, PostsModelAndPromptToVllmTokenizeAndReadsCount) {
  test_support::LoopbackServer server([](int, const httplib::Request&, httplib::Response& res) {
    res.set_content(R"({"count": 7, "max_model_len": 65536, "tokens": [1, 2]})",
                    "application/json");
  });
  auto transport = model::make_curl_transport();
  EndpointTokenizer tokenizer(*transport, server.base_url() + "/", "Qwen/Qwen3.6-27B",
                              TokenizeApi::vllm);
  auto count = tokenizer.count("hello world");
  ASSERT_TRUE(count) << count.error().message;
  EXPECT_EQ(*count, 7);
  const auto requests = server.requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].path, "/tokenize");
  EXPECT_EQ(requests[0].json(),
            nlohmann::json::parse(R"({"model": "Qwen/Qwen3.6-27B", "prompt": "hello world"})"));
  EXPECT_FALSE(tokenizer.approximate());
  EXPECT_EQ(tokenizer.describe()["url"], server.base_url() + "/tokenize");
}

TEST(EndpointTokenizer, LlamaCppSendsContentAndCountsTheTokenArray) {
  test_support::LoopbackServer server([](int, const httplib::Request&, httplib::Response& res) {
    res.set_content(R"({"tokens": [10, 20, 30]})", "application/json");
  });
  auto transport = model::make_curl_transport();
  EndpointTokenizer tokenizer(*transport, server.base_url() + "/tokenize", "",
                              TokenizeApi::llamacpp);
  auto count = tokenizer.count("abc");
  ASSERT_TRUE(count) << count.error().message;
  EXPECT_EQ(*count, 3);
  EXPECT_EQ(server.requests()[0].json(), nlohmann::json::parse(R"({"content": "abc"})"));
}

// llama-cpp-python's server: POST /extras/tokenize {"input", "model"} → {"tokens": [...]}.
TEST(EndpointTokenizer, LlamaCppPythonSendsInputAndModelToExtrasTokenize) {
  test_support::LoopbackServer server([](int, const httplib::Request& req, httplib::Response& res) {
    EXPECT_EQ(req.path, "/extras/tokenize");
    res.set_content(R"({"tokens": [1, 2]})", "application/json");
  });
  auto transport = model::make_curl_transport();
  EndpointTokenizer tokenizer(*transport, server.base_url() + "/extras/tokenize", "gemma",
                              TokenizeApi::llama_cpp_python);
  auto count = tokenizer.count("ab");
  ASSERT_TRUE(count) << count.error().message;
  EXPECT_EQ(*count, 2);
  EXPECT_EQ(server.requests()[0].json(),
            nlohmann::json::parse(R"({"input": "ab", "model": "gemma"})"));
  EXPECT_EQ(tokenize_api_from_string("llama-cpp-python"), TokenizeApi::llama_cpp_python);
  EXPECT_EQ(tokenizer.describe()["api"], "llama-cpp-python");
}

TEST(EndpointTokenizer, HttpErrorAndBadReplyAreErrors) {
  test_support::LoopbackServer server(
      [](int index, const httplib::Request&, httplib::Response& res) {
        if (index == 0) {
          res.status = 404;
          res.set_content("no such route", "text/plain");
        } else {
          res.set_content(R"({"ids": []})", "application/json");
        }
      });
  auto transport = model::make_curl_transport();
  EndpointTokenizer tokenizer(*transport, server.base_url(), "m", TokenizeApi::vllm);
  auto first = tokenizer.count("x");
  ASSERT_FALSE(first);
  EXPECT_EQ(first.error().kind, util::ErrorKind::http_status);
  auto second = tokenizer.count("x");
  ASSERT_FALSE(second);
  EXPECT_EQ(second.error().kind, util::ErrorKind::bad_response);
}

TEST(EndpointTokenizer, UnreachableServerIsATransportError) {
  auto transport = model::make_curl_transport();
  EndpointTokenizer tokenizer(*transport, "http://127.0.0.1:1", "m", TokenizeApi::vllm);
  auto count = tokenizer.count("x");
  ASSERT_FALSE(count);
  EXPECT_EQ(count.error().kind, util::ErrorKind::transport);
}

TEST(TokenizeReply, MistypedTokenIsABadResponseNamingItsPath) {
  auto tokens = parse_tokenize_reply(R"({"tokens": [1, 2, 3, "x"]})");
  ASSERT_FALSE(tokens);
  EXPECT_EQ(tokens.error().kind, util::ErrorKind::bad_response);
  EXPECT_EQ(tokens.error().message, "tokenize reply: $.tokens[3]: expected an integer, got string");
  auto count = parse_tokenize_reply(R"({"count": "7", "tokens": [1]})");
  ASSERT_FALSE(count);
  EXPECT_EQ(count.error().kind, util::ErrorKind::bad_response);
  EXPECT_EQ(count.error().message, "tokenize reply: $.count: expected an integer >= 0, got string");
  auto neither = parse_tokenize_reply(R"({"ids": []})");
  ASSERT_FALSE(neither);
  EXPECT_EQ(neither.error().message,
            "tokenize reply: $: missing required key \"count\" or \"tokens\"");
  auto not_json = parse_tokenize_reply("<html>");
  ASSERT_FALSE(not_json);
  EXPECT_EQ(not_json.error().kind, util::ErrorKind::bad_response);
  EXPECT_EQ(parse_tokenize_reply(R"({"tokens": [10, 20, 30]})").value(), 3);
  EXPECT_EQ(parse_tokenize_reply(R"({"count": 0, "tokens": []})").value(), 0);
}

TEST(EndpointTokenizer, MistypedReplyErrorNamesTheUrlAndThePath) {
  test_support::LoopbackServer server([](int, const httplib::Request&, httplib::Response& res) {
    res.set_content(R"({"tokens": [1, null]})", "application/json");
  });
  auto transport = model::make_curl_transport();
  EndpointTokenizer tokenizer(*transport, server.base_url(), "m", TokenizeApi::vllm);
  auto count = tokenizer.count("x");
  ASSERT_FALSE(count);
  EXPECT_EQ(count.error().kind, util::ErrorKind::bad_response);
  EXPECT_EQ(count.error().message, server.base_url() +
                                       "/tokenize: tokenize reply: $.tokens[1]: expected an "
                                       "integer, got null");
}

} // namespace
} // namespace ptxbench::adapt
