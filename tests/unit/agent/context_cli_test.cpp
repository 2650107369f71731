// Issue 17 item 6, end to end: `pack list|show --tokenizer URL` counts the variants with the
// model server's own tokenizer (a /tokenize endpoint on loopback), and `run` warns before it
// starts when a prompt cannot fit the context the registry gives the model.
#include "support/loopback_model.hpp"
#include "support/loopback_server.hpp"
#include "support/ptxbench_cli.hpp"
#include "support/scratch_dir.hpp"
#include "util/fs.hpp"

#include <gtest/gtest.h>

using namespace ptxbench;
using test_support::chat_body;
using test_support::LoopbackServer;
using test_support::reply_json;
using test_support::run_ptxbench;
using test_support::ScratchDir;

namespace {

// A vLLM-style /tokenize that answers 4242 tokens for any text; counts its requests.
struct TokenizeServer {
  std::atomic<int> requests{0};
  LoopbackServer server{[this](int, const httplib::Request& request, httplib::Response& response) {
    ++requests;
    EXPECT_EQ(request.path, "/tokenize");
    reply_json(response, nlohmann::json{{"count", 4242}});
  }};
};

std::filesystem::path write_model(const ScratchDir& dir, const std::string& base_url,
                                  std::int64_t context_tokens) {
  const auto path = dir.path() / "models.json";
  const nlohmann::json model{
      {"provider", "openai"}, {"base_url", base_url + "/v1"}, {"model", "m"},
      {"max_attempts", 1},    {"max_output_tokens", 512},     {"context_tokens", context_tokens}};
  EXPECT_TRUE(util::write_file_atomic(path, nlohmann::json{{"models", {{"small", model}}}}.dump()));
  return path;
}

} // namespace

TEST(PackTokens, ShowAndListCountWithTheServersTokenizer) {
  TokenizeServer tokenizer;
  const std::string url = tokenizer.server.base_url() + "/tokenize";
  auto show = test_support::ptxbench_result({"pack", "show", "base", "--tokenizer", url});
  EXPECT_EQ(show.exit_code, 0) << show.err;
  EXPECT_NE(show.err.find("4242 tokens by the tokenizer at " + url), std::string::npos) << show.err;
  auto list =
      test_support::ptxbench_result({"pack", "list", "--arch", "sm_90a", "--tokenizer", url});
  EXPECT_EQ(list.exit_code, 0) << list.err;
  EXPECT_NE(list.out.find("Column `tokens`: the variant's text counted by the tokenizer at"),
            std::string::npos)
      << list.out;
  EXPECT_NE(list.out.find("4,242"), std::string::npos) << list.out;
  EXPECT_GT(tokenizer.requests.load(), 1);
}

TEST(PackTokens, AnUnreachableTokenizerIsAnErrorNotASilentEstimate) {
  auto show = test_support::ptxbench_result(
      {"pack", "show", "base", "--tokenizer", "http://127.0.0.1:1/tokenize"});
  EXPECT_NE(show.exit_code, 0);
  EXPECT_TRUE(show.out.empty()) << "nothing printed as if it had been counted";
}

TEST(RunContext, APromptThatCannotFitTheModelsContextIsWarnedAboutBeforeTheRun) {
  ScratchDir dir, cache;
  LoopbackServer server([&](int, const httplib::Request&, httplib::Response& response) {
    reply_json(response, chat_body("no code"));
  });
  auto small = write_model(dir, server.base_url(), 1000);
  auto warned =
      run_ptxbench({"run", "--registry", small.string(), "--model", "small", "--turns", "1",
                    "--static-only", "--quiet", "--out", (dir.path() / "a").string()},
                   cache);
  EXPECT_NE(warned.err.find("does not fit the 1000 tokens of context the registry gives small"),
            std::string::npos)
      << warned.err;
  EXPECT_NE(warned.err.find("+ 512 max_output_tokens"), std::string::npos) << warned.err;
  ScratchDir roomy_dir;
  auto roomy = write_model(roomy_dir, server.base_url(), 1'000'000);
  auto quiet = run_ptxbench({"run", "--registry", roomy.string(), "--model", "small", "--turns",
                             "1", "--static-only", "--quiet", "--out", (dir.path() / "b").string()},
                            cache);
  EXPECT_EQ(quiet.err.find("does not fit"), std::string::npos) << quiet.err;
}

namespace {

// The entry of write_model with the server's tokenizer named (llama-cpp-python's dialect).
std::filesystem::path write_model_with_tokenizer(const ScratchDir& dir, const std::string& base_url,
                                                 const std::string& tokenize_url,
                                                 std::int64_t context_tokens) {
  const auto path = dir.path() / "models.json";
  const nlohmann::json model{{"provider", "openai"},
                             {"base_url", base_url + "/v1"},
                             {"model", "m"},
                             {"max_attempts", 1},
                             {"max_output_tokens", 512},
                             {"context_tokens", context_tokens},
                             {"tokenizer", {{"url", tokenize_url}, {"api", "llama-cpp-python"}}}};
  EXPECT_TRUE(util::write_file_atomic(path, nlohmann::json{{"models", {{"small", model}}}}.dump()));
  return path;
}

} // namespace

// The warning counts with the server's tokenizer when the entry names one (here 600,000 tokens
// per text, which no estimate of these prompts reaches), and says so; an entry whose tokenizer
// does not answer falls back to the estimate and says why.
TEST(RunContext, TheWarningCountsWithTheServersTokenizerWhenTheRegistryNamesOne) {
  ScratchDir dir, cache;
  std::atomic<int> tokenize_requests{0};
  LoopbackServer server([&](int, const httplib::Request& request, httplib::Response& response) {
    if (request.path == "/extras/tokenize") {
      ++tokenize_requests;
      const auto body = nlohmann::json::parse(request.body);
      EXPECT_TRUE(body.contains("input")) << request.body;
      EXPECT_EQ(body.value("model", ""), "m") << request.body;
      reply_json(response, nlohmann::json{{"tokens", std::vector<int>(600'000, 7)}});
      return;
    }
    reply_json(response, chat_body("no code"));
  });
  const std::string url = server.base_url() + "/extras/tokenize";
  auto counted = write_model_with_tokenizer(dir, server.base_url(), url, 1'000'000);
  auto warned = run_ptxbench({"run", "--registry", counted.string(), "--model", "small",
                              "--variant", "none", "--turns", "1", "--static-only", "--quiet",
                              "--out", (dir.path() / "a").string()},
                             cache);
  EXPECT_NE(warned.err.find("the opening prompt is 1200000 tokens (counted by the tokenizer at " +
                            url + ") + 512 max_output_tokens and does not fit the 1000000 tokens"),
            std::string::npos)
      << warned.err;
  EXPECT_EQ(tokenize_requests.load(), 2) << "the system prompt and the task";

  ScratchDir down_dir;
  auto down = write_model_with_tokenizer(down_dir, server.base_url(),
                                         "http://127.0.0.1:1/extras/tokenize", 1000);
  auto estimated = run_ptxbench({"run", "--registry", down.string(), "--model", "small",
                                 "--variant", "none", "--turns", "1", "--static-only", "--quiet",
                                 "--out", (dir.path() / "b").string()},
                                cache);
  EXPECT_NE(estimated.err.find("tokens (estimate: ceil(bytes / 4); code often counts more; the "
                               "tokenizer at http://127.0.0.1:1/extras/tokenize failed: "),
            std::string::npos)
      << estimated.err;
  EXPECT_NE(estimated.err.find("the opening prompt is ~"), std::string::npos) << estimated.err;
}
