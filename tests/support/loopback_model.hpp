// A model served on loopback for the tests that run the agent over real HTTP: the body an
// OpenAI-compatible server answers a chat completion with, and a model registry that names such
// a server as the model "loop".
#pragma once

#include "support/scratch_dir.hpp"
#include "util/fs.hpp"

#include <filesystem>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <string>

namespace ptxbench::test_support {

struct ChatUsage {
  int prompt_tokens = 100;
  int completion_tokens = 50;
};

// A finished chat completion whose only choice is the assistant message `text`.
inline nlohmann::json chat_body(const std::string& text, ChatUsage usage = {}) {
  return {
      {"id", "x"},
      {"object", "chat.completion"},
      {"choices",
       {{{"index", 0},
         {"message", {{"role", "assistant"}, {"content", text}}},
         {"finish_reason", "stop"}}}},
      {"usage",
       {{"prompt_tokens", usage.prompt_tokens}, {"completion_tokens", usage.completion_tokens}}}};
}

// Writes `dir`/models.json with the one model "loop" (provider openai, at `base_url`/v1) and
// returns its path; a write failure fails the test.
inline std::filesystem::path write_registry(const ScratchDir& dir, const std::string& base_url,
                                            int max_attempts = 1) {
  auto path = dir.path() / "models.json";
  const nlohmann::json model{{"provider", "openai"},
                             {"base_url", base_url + "/v1"},
                             {"model", "m"},
                             {"max_attempts", max_attempts}};
  EXPECT_TRUE(util::write_file_atomic(path, nlohmann::json{{"models", {{"loop", model}}}}.dump()));
  return path;
}

} // namespace ptxbench::test_support
