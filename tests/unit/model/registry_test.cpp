// The model registry: the shipped file, and errors that name the file and the JSON path.
#include "model/registry.hpp"
#include "support/scratch_dir.hpp"

#include <gtest/gtest.h>

using namespace ptxbench;
using namespace ptxbench::model;
using test_support::ScratchDir;

namespace {

std::string registry_error(const std::string& text) {
  auto registry = parse_registry(text, "conf/models.json");
  EXPECT_FALSE(registry);
  if (registry)
    return "";
  EXPECT_EQ(registry.error().kind, util::ErrorKind::invalid_input);
  return registry.error().message;
}

} // namespace

TEST(Registry, TheShippedRegistryLoadsWithThePapersModels) {
  auto registry = load_registry(default_registry_path());
  ASSERT_TRUE(registry) << registry.error().message;
  for (const char* name : {"local", "Qwen3.6-27B", "claude-opus-4.8-xhigh", "GLM-5.2",
                           "gemini-3.1-pro-preview", "GPT-5.4", "Kimi-K2.6", "DeepSeek-V4:pro"})
    EXPECT_NE(registry->find(name), nullptr) << name;
  const ModelSpec* local = registry->find("local");
  EXPECT_EQ(local->provider, "openai");
  EXPECT_EQ(local->base_url, "http://127.0.0.1:30000/v1");
  EXPECT_FALSE(local->api_key_env.has_value());
  const ModelSpec* qwen = registry->find("Qwen3.6-27B");
  EXPECT_EQ(qwen->sampling.temperature, 1.0);
  EXPECT_EQ(qwen->sampling.top_p, 0.95);
  EXPECT_EQ(qwen->sampling.top_k, 20);
  EXPECT_EQ(qwen->sampling.presence_penalty, 1.5);
  EXPECT_EQ(qwen->sampling.max_output_tokens, 81920);
  EXPECT_EQ(qwen->extra_body["min_p"], 0.0);
  const ModelSpec* opus = registry->find("claude-opus-4.8-xhigh");
  EXPECT_EQ(opus->provider, "anthropic");
  EXPECT_EQ(opus->reasoning.mode, "adaptive");
  EXPECT_EQ(opus->reasoning.effort, "xhigh");
  EXPECT_EQ(opus->sampling.max_output_tokens, 128000);
  EXPECT_EQ(opus->api_key_env, "ANTHROPIC_API_KEY");
  ASSERT_TRUE(opus->prices.has_value());
  EXPECT_EQ(opus->prices->output_per_mtok, 25);
  EXPECT_EQ(registry->find("GPT-5.4")->max_tokens_field, "max_completion_tokens");
}

TEST(Registry, AWrongTypeNamesFileAndJsonPath) {
  std::string message = registry_error(
      R"({"models": {"gpt-5.4": {"provider": "openai", "base_url": "https://x", "model": "m",
          "temperature": "hot"}}})");
  EXPECT_NE(message.find("conf/models.json: $.models[\"gpt-5.4\"].temperature: expected a number"),
            std::string::npos)
      << message;
}

TEST(Registry, AnUnknownKeyIsATypoNotIgnored) {
  std::string message = registry_error(
      R"({"models": {"m": {"provider": "openai", "base_url": "https://x", "model": "m",
          "reasoning": {"efort": "high"}}}})");
  EXPECT_NE(message.find("$.models.m.reasoning.efort: unknown key"), std::string::npos) << message;
}

TEST(Registry, ProviderRulesAreChecked) {
  EXPECT_NE(registry_error(R"({"models": {"m": {"provider": "cohere", "base_url": "https://x",
             "model": "m"}}})")
                .find("unknown provider \"cohere\""),
            std::string::npos);
  EXPECT_NE(registry_error(R"({"models": {"m": {"provider": "anthropic",
             "base_url": "https://x", "model": "c"}}})")
                .find("$.models.m.max_output_tokens"),
            std::string::npos);
  EXPECT_NE(registry_error(R"({"models": {"m": {"provider": "openai", "model": "c"}}})")
                .find("$.models.m.base_url: missing"),
            std::string::npos);
  EXPECT_NE(registry_error(R"({"models": {"m": {"provider": "openai", "base_url": "https://x",
             "model": "c", "top_p": 1.5}}})")
                .find("$.models.m.top_p: expected a number in [0, 1]"),
            std::string::npos);
  EXPECT_NE(registry_error(R"({"models": {"m": {"provider": "openai", "base_url": "https://x",
             "model": "c", "price_per_mtok": {"input": 1}}}})")
                .find("needs both"),
            std::string::npos);
}

TEST(Registry, NotJsonAndMissingFilesAreErrors) {
  EXPECT_NE(registry_error("{\"models\": ").find("conf/models.json: $: not valid JSON"),
            std::string::npos);
  EXPECT_NE(registry_error("[]").find("$.models: expected an object"), std::string::npos);
  auto missing = load_registry("/nonexistent/models.json");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().kind, util::ErrorKind::not_found);
}

TEST(Registry, ReplayFilesResolveNextToTheRegistry) {
  ScratchDir dir;
  auto path = dir.write("models.json", R"({"models": {"demo": {"provider": "replay",
      "replay_file": "replies/demo.jsonl", "notes": "recorded"}}})");
  auto registry = load_registry(path);
  ASSERT_TRUE(registry) << registry.error().message;
  EXPECT_EQ(*registry->find("demo")->replay_file, dir.path() / "replies/demo.jsonl");
}

TEST(Registry, TrailingSlashesOfBaseUrlsAreDropped) {
  auto registry = parse_registry(
      R"({"models": {"m": {"provider": "openai", "base_url": "http://h/v1/", "model": "c"}}})",
      "x.json");
  ASSERT_TRUE(registry);
  EXPECT_EQ(registry->models[0].base_url, "http://h/v1");
}

// Issue 17 item 16: the README's local-server example is a registry that loads as shipped.
TEST(Registry, TheLocalServerExampleLoadsWithOneEntryPerServer) {
  auto registry = load_registry(default_registry_path().parent_path() / "local-models.json");
  ASSERT_TRUE(registry) << registry.error().message;
  for (const char* name : {"llama-cpp", "vllm", "sglang"}) {
    const ModelSpec* spec = registry->find(name);
    ASSERT_NE(spec, nullptr) << name;
    EXPECT_EQ(spec->provider, "openai") << name;
    EXPECT_EQ(spec->base_url.rfind("http://127.0.0.1:", 0), 0u) << name;
    EXPECT_FALSE(spec->api_key_env.has_value()) << name;
  }
  EXPECT_EQ(registry->find("llama-cpp")->context_tokens, 32768);
  ASSERT_TRUE(registry->find("llama-cpp")->tokenizer);
  EXPECT_EQ(registry->find("llama-cpp")->tokenizer->api, "llamacpp");
}

TEST(Registry, ContextTokensIsAPositiveIntegerWhenGiven) {
  auto good = parse_registry(
      R"({"models": {"m": {"provider": "openai", "base_url": "http://h/v1", "model": "x",
                           "context_tokens": 8192}}})",
      "inline.json");
  ASSERT_TRUE(good) << good.error().message;
  EXPECT_EQ(good->find("m")->context_tokens, 8192);
  auto bad = parse_registry(
      R"({"models": {"m": {"provider": "openai", "base_url": "http://h/v1", "model": "x",
                           "context_tokens": 0}}})",
      "inline.json");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("context_tokens"), std::string::npos) << bad.error().message;
}

// Issue 17 item 6: an entry may name its server's tokenize endpoint; the model sent defaults to
// the entry's model id, the dialect to vllm; a bad URL or dialect names its JSON path.
TEST(Registry, ATokenizerEndpointIsReadAndChecked) {
  auto good = parse_registry(
      R"({"models": {"m": {"provider": "openai", "base_url": "http://h/v1", "model": "x",
                           "tokenizer": {"url": "http://h/extras/tokenize",
                                         "api": "llama-cpp-python"}},
                     "n": {"provider": "openai", "base_url": "http://h/v1", "model": "y",
                           "tokenizer": {"url": "http://h/tokenize", "model": "z"}},
                     "o": {"provider": "openai", "base_url": "http://h/v1", "model": "w"}}})",
      "inline.json");
  ASSERT_TRUE(good) << good.error().message;
  ASSERT_TRUE(good->find("m")->tokenizer);
  EXPECT_EQ(good->find("m")->tokenizer->url, "http://h/extras/tokenize");
  EXPECT_EQ(good->find("m")->tokenizer->api, "llama-cpp-python");
  EXPECT_EQ(good->find("m")->tokenizer->model, "x");
  EXPECT_EQ(good->find("n")->tokenizer->api, "vllm");
  EXPECT_EQ(good->find("n")->tokenizer->model, "z");
  EXPECT_FALSE(good->find("o")->tokenizer);
  EXPECT_FALSE(settings_json(*good->find("m")).contains("tokenizer"))
      << "counting is no setting a turn was asked with";
  const std::string entry =
      R"({"models": {"m": {"provider": "openai", "base_url": "http://h/v1", "model": "x", )";
  EXPECT_NE(registry_error(entry + R"("tokenizer": {"url": "h/tokenize"}}}})")
                .find(R"($.models.m.tokenizer.url: expected an http:// or https:// URL)"),
            std::string::npos);
  EXPECT_NE(registry_error(entry + R"("tokenizer": {"url": "http://h", "api": "tgi"}}}})")
                .find("$.models.m.tokenizer.api"),
            std::string::npos);
  EXPECT_NE(registry_error(entry + R"("tokenizer": {"url": "http://h", "dialect": "x"}}}})")
                .find("dialect"),
            std::string::npos);
}
