// The model registry: a JSON file mapping model names to a provider, endpoint, model id,
// sampling and reasoning settings, prices and extras. Adding a model is an edit of this file.
//
//   {"models": {"<name>": {"provider": "openai", "base_url": "http://127.0.0.1:30000/v1",
//     "model": "Qwen/Qwen3.6-27B", "api_key_env": "LOCAL_API_KEY", "temperature": 1.0,
//     "top_p": 0.95, "top_k": 20, "presence_penalty": 1.5, "max_output_tokens": 81920,
//     "reasoning": {"mode": "adaptive", "effort": "high", "budget_tokens": 32000,
//                   "include_thoughts": true},
//     "price_per_mtok": {"input": 0.4, "output": 0.8}, "extra_body": {...},
//     "max_tokens_field": "max_completion_tokens", "timeout_s": 1800, "max_attempts": 6,
//     "replay_file": "replies.jsonl", "context_tokens": 32768,
//     "tokenizer": {"url": "http://127.0.0.1:8080/tokenize", "api": "llamacpp"}, "notes": "..."}}}
//
// Keys are checked: an unknown key (a typo) is an error, like a wrong type or range; every error
// names the file and the JSON path ($.models["gpt-5.4"].top_p). API keys never appear in the
// file, only the name of the environment variable holding one.
#pragma once

#include "model/chat.hpp"
#include "util/error.hpp"

#include <chrono>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ptxbench::model {

// Provider names the factory knows: one file per provider.
inline constexpr std::array<std::string_view, 4> kProviderNames{"openai", "anthropic", "gemini",
                                                                "replay"};

struct Prices {
  double input_per_mtok = 0;  // $ per million input tokens
  double output_per_mtok = 0; // $ per million output tokens (reasoning included)
};

// Tokenizer dialects a registry entry may name (adapt/tokenizer.hpp speaks them).
inline constexpr std::array<std::string_view, 5> kTokenizeApiNames{"vllm", "sglang", "llamacpp",
                                                                   "llama.cpp", "llama-cpp-python"};

// The model server's tokenize endpoint, which counts a prompt with the model's own tokenizer.
struct TokenizerEndpoint {
  std::string url;          // http(s), the endpoint itself or the server's base URL
  std::string api = "vllm"; // one of kTokenizeApiNames
  std::string model;        // sent where the dialect takes one; empty: the entry's model id
};

struct ModelSpec {
  std::string name;     // registry key, what users type
  std::string provider; // one of kProviderNames
  std::string base_url; // without the API path ("https://api.openai.com/v1")
  std::string model;    // the provider's model id
  std::optional<std::string> api_key_env;
  SamplingParams sampling;
  ReasoningSettings reasoning;
  std::optional<Prices> prices;
  Json extra_body = Json::object();
  std::string max_tokens_field = "max_tokens"; // openai: or "max_completion_tokens"
  std::chrono::seconds timeout{1800};
  int max_attempts = 6;
  std::optional<std::filesystem::path> replay_file; // replay: absolute after loading
  std::optional<std::int64_t> context_tokens;       // the model's context window, when known
  std::optional<TokenizerEndpoint> tokenizer;       // not a setting: no part of settings_json
};

struct ModelRegistry {
  std::filesystem::path origin;
  std::vector<ModelSpec> models; // in file order

  const ModelSpec* find(std::string_view name) const;
};

// `origin` names the source in errors and anchors relative replay_file paths.
util::Expected<ModelRegistry> parse_registry(std::string_view text,
                                             const std::filesystem::path& origin);
util::Expected<ModelRegistry> load_registry(const std::filesystem::path& path);

// The resolved entry as the run store keeps it, every default filled in, in the registry's own
// key names: what a turn was asked with. No secret: the API key's variable name only, the
// base URL without user-info or query values (redact_url).
Json settings_json(const ModelSpec& spec);

// The registry shipped with ptxbench (config/models.json in the source tree).
std::filesystem::path default_registry_path();

} // namespace ptxbench::model
