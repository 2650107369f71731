// What the run needs from a model entry before and while it runs (issue 17): its settings as
// the store keeps them, the set-up checks made before anything is created, and the providers'
// spellings of "the output hit the token limit".
#include "model/factory.hpp"
#include "model/registry.hpp"

#include <gtest/gtest.h>

using namespace ptxbench;
using namespace ptxbench::model;

namespace {

ModelSpec spec_from(const std::string& entry) {
  auto registry = parse_registry(R"({"models": {"m": )" + entry + "}}", "/tmp/models.json");
  if (!registry)
    throw util::Fatal(registry.error().message);
  return registry->models.front();
}

EnvLookup environment(std::map<std::string, std::string> values) {
  return [values](const std::string& name) -> std::optional<std::string> {
    auto it = values.find(name);
    return it == values.end() ? std::nullopt : std::optional<std::string>(it->second);
  };
}

} // namespace

TEST(ModelLimits, EachProvidersSpellingOfTheTokenLimitIsRecognised) {
  for (const char* reason : {"length", "max_tokens", "MAX_TOKENS"})
    EXPECT_TRUE(stopped_at_token_limit(reason)) << reason;
  for (const char* reason : {"stop", "end_turn", "STOP", "tool_calls", ""})
    EXPECT_FALSE(stopped_at_token_limit(reason)) << reason;
}

TEST(ModelSettings, TheStoredSettingsHoldEveryDefaultButNoSecret) {
  auto spec = spec_from(R"({"provider": "openai", "base_url": "https://u:pw@h.example/v1?key=abc",
                            "model": "x", "api_key_env": "X_KEY", "max_output_tokens": 100})");
  const Json settings = settings_json(spec);
  EXPECT_EQ(settings["max_output_tokens"], 100);
  EXPECT_EQ(settings["api_key_env"], "X_KEY");
  EXPECT_EQ(settings["timeout_s"], 1800);
  EXPECT_EQ(settings["max_attempts"], 6);
  EXPECT_EQ(settings["max_tokens_field"], "max_tokens");
  EXPECT_TRUE(settings["temperature"].is_null());
  const std::string text = settings.dump();
  EXPECT_EQ(text.find("pw"), std::string::npos) << text;
  EXPECT_EQ(text.find("abc"), std::string::npos) << text;
  spec.sampling.max_output_tokens = 200;
  EXPECT_NE(settings_json(spec), settings);
}

TEST(ModelSetup, AnUnsetKeyOrAnEndpointThatIsNoUrlIsFoundBeforeAnyCall) {
  auto keyed = spec_from(
      R"({"provider": "anthropic", "base_url": "https://api.example", "model": "x",
          "api_key_env": "X_KEY", "max_output_tokens": 1024})");
  auto missing = check_client_setup(keyed, environment({}));
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().kind, util::ErrorKind::invalid_input);
  EXPECT_NE(missing.error().message.find("X_KEY"), std::string::npos);
  EXPECT_FALSE(check_client_setup(keyed, environment({{"X_KEY", ""}})));
  EXPECT_TRUE(check_client_setup(keyed, environment({{"X_KEY", "secret"}})));

  for (const char* url : {"localhost:8000/v1", "http://", "ftp://h/v1", "http:///v1"}) {
    auto spec = spec_from(std::string(R"({"provider": "openai", "model": "x", "base_url": ")") +
                          url + "\"}");
    auto status = check_client_setup(spec, environment({}));
    ASSERT_FALSE(status) << url;
    EXPECT_NE(status.error().message.find("not an http:// or https:// URL"), std::string::npos);
  }
  auto local =
      spec_from(R"({"provider": "openai", "model": "x", "base_url": "http://127.0.0.1:1/v1"})");
  EXPECT_TRUE(check_client_setup(local, environment({})));
}

TEST(ModelSetup, AReplayFileThatDoesNotExistIsFoundBeforeAnyCall) {
  auto spec = spec_from(R"({"provider": "replay", "replay_file": "no-such-replies.jsonl"})");
  auto status = check_client_setup(spec, environment({}));
  ASSERT_FALSE(status);
  EXPECT_NE(status.error().message.find("no-such-replies.jsonl"), std::string::npos);
}
