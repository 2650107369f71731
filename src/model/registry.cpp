#include "model/registry.hpp"

#include "model/secret.hpp"
#include "util/fs.hpp"
#include "util/json_reader.hpp"
#include "util/paths.hpp"

#include <algorithm>
#include <cctype>
#include <fmt/core.h>
#include <span>

namespace ptxbench::model {
namespace {

using util::Emptiness;
using util::JsonReader;
using util::key_path;

constexpr std::array<std::string_view, 18> kModelKeys{
    "provider",          "base_url",  "model",          "api_key_env",
    "temperature",       "top_p",     "top_k",          "presence_penalty",
    "max_output_tokens", "reasoning", "price_per_mtok", "extra_body",
    "max_tokens_field",  "timeout_s", "max_attempts",   "replay_file",
    "context_tokens",    "tokenizer"};
constexpr std::array<std::string_view, 3> kTokenizerKeys{"url", "api", "model"};

constexpr std::array<std::string_view, 4> kReasoningKeys{"mode", "effort", "budget_tokens",
                                                         "include_thoughts"};
constexpr std::array<std::string_view, 2> kPriceKeys{"input", "output"};
constexpr std::array<std::string_view, 2> kTopKeys{"models", "description"};

void read_sampling(JsonReader& r, const Json& json, const std::string& path, SamplingParams& s) {
  s.temperature = r.optional_number(json, path, "temperature", {0, 2});
  s.top_p = r.optional_number(json, path, "top_p", {0, 1});
  s.top_k = r.optional_integer(json, path, "top_k", 1);
  s.presence_penalty = r.optional_number(json, path, "presence_penalty", {-2, 2});
  s.max_output_tokens = r.optional_integer(json, path, "max_output_tokens", 1);
}

void read_reasoning(JsonReader& r, const Json* json, const std::string& path,
                    ReasoningSettings& reasoning) {
  if (json == nullptr)
    return;
  r.allow_only(*json, path, kReasoningKeys);
  reasoning.mode = r.optional_string(*json, path, "mode", Emptiness::rejected);
  const auto& mode = reasoning.mode;
  if (mode && *mode != "enabled" && *mode != "adaptive" && *mode != "disabled")
    r.fail(key_path(path, "mode"), "expected \"enabled\", \"adaptive\" or \"disabled\"");
  reasoning.effort = r.optional_string(*json, path, "effort", Emptiness::rejected);
  reasoning.budget_tokens = r.optional_integer(*json, path, "budget_tokens", 0);
  reasoning.include_thoughts = r.optional_boolean(*json, path, "include_thoughts").value_or(true);
}

void read_prices(JsonReader& r, const Json* json, const std::string& path,
                 std::optional<Prices>& prices) {
  if (json == nullptr)
    return;
  r.allow_only(*json, path, kPriceKeys);
  auto input = r.optional_number(*json, path, "input", {0, 1e6});
  auto output = r.optional_number(*json, path, "output", {0, 1e6});
  if (r.ok() && (!input || !output))
    r.fail(path, "needs both \"input\" and \"output\"");
  if (r.ok())
    prices = Prices{*input, *output};
}

void read_tokenizer(JsonReader& r, const Json* json, const std::string& path,
                    std::optional<TokenizerEndpoint>& tokenizer) {
  if (json == nullptr)
    return;
  r.allow_only(*json, path, kTokenizerKeys);
  TokenizerEndpoint endpoint;
  endpoint.url = r.optional_string(*json, path, "url", Emptiness::rejected).value_or("");
  endpoint.api = r.optional_string(*json, path, "api", Emptiness::rejected).value_or("vllm");
  endpoint.model = r.optional_string(*json, path, "model", Emptiness::rejected).value_or("");
  if (!r.ok())
    return;
  if (!endpoint.url.starts_with("http://") && !endpoint.url.starts_with("https://"))
    r.fail(key_path(path, "url"), "expected an http:// or https:// URL");
  else if (std::find(kTokenizeApiNames.begin(), kTokenizeApiNames.end(), endpoint.api) ==
           kTokenizeApiNames.end())
    r.fail(key_path(path, "api"), "expected \"vllm\", \"sglang\", \"llamacpp\" or "
                                  "\"llama-cpp-python\"");
  else
    tokenizer = std::move(endpoint);
}

void check_provider_rules(JsonReader& r, const std::string& path, const ModelSpec& spec) {
  bool known = std::find(kProviderNames.begin(), kProviderNames.end(), spec.provider) !=
               kProviderNames.end();
  if (!known)
    r.fail(key_path(path, "provider"),
           "unknown provider \"" + spec.provider + "\" (openai, anthropic, gemini, replay)");
  bool replay = spec.provider == "replay";
  if (!replay && spec.base_url.empty())
    r.fail(key_path(path, "base_url"), "missing");
  if (!replay && spec.model.empty())
    r.fail(key_path(path, "model"), "missing");
  if (replay && !spec.replay_file)
    r.fail(key_path(path, "replay_file"), "missing");
  if (spec.provider == "anthropic" && !spec.sampling.max_output_tokens)
    r.fail(key_path(path, "max_output_tokens"), "required by the Anthropic Messages API");
  if (spec.max_tokens_field != "max_tokens" && spec.max_tokens_field != "max_completion_tokens")
    r.fail(key_path(path, "max_tokens_field"),
           "expected \"max_tokens\" or \"max_completion_tokens\"");
}

// A non-empty string member, or "" when absent.
std::string text(JsonReader& r, const Json& json, const std::string& path, std::string_view key) {
  return r.optional_string(json, path, key, Emptiness::rejected).value_or("");
}

void read_fields(JsonReader& r, const Json& json, const std::string& path, ModelSpec& spec,
                 const std::filesystem::path& origin) {
  r.allow_only(json, path, kModelKeys);
  spec.provider = text(r, json, path, "provider");
  if (spec.provider.empty() && r.ok())
    r.fail(key_path(path, "provider"), "missing");
  spec.base_url = text(r, json, path, "base_url");
  while (spec.base_url.ends_with('/'))
    spec.base_url.pop_back();
  spec.model = text(r, json, path, "model");
  spec.api_key_env = r.optional_string(json, path, "api_key_env", Emptiness::rejected);
  read_sampling(r, json, path, spec.sampling);
  spec.max_tokens_field =
      r.optional_string(json, path, "max_tokens_field", Emptiness::rejected).value_or("max_tokens");
  auto timeout_s = r.optional_integer(json, path, "timeout_s", 1);
  spec.timeout = std::chrono::seconds(timeout_s.value_or(1800));
  spec.max_attempts =
      static_cast<int>(r.optional_integer(json, path, "max_attempts", 1).value_or(6));
  spec.context_tokens = r.optional_integer(json, path, "context_tokens", 1);
  if (auto file = r.optional_string(json, path, "replay_file", Emptiness::rejected))
    spec.replay_file = std::filesystem::absolute(origin.parent_path() / *file);
  if (const Json* extra = r.optional_object(json, path, "extra_body"))
    spec.extra_body = *extra;
}

util::Expected<ModelSpec> read_model(const std::string& name, const Json& json,
                                     const std::filesystem::path& origin) {
  JsonReader r(origin.string());
  std::string path = key_path("$.models", name);
  ModelSpec spec;
  spec.name = name;
  if (!r.expect_object(json, path))
    return r.finish(std::move(spec));
  read_fields(r, json, path, spec, origin);
  if (!r.ok())
    return r.finish(std::move(spec));
  read_reasoning(r, r.optional_object(json, path, "reasoning"), key_path(path, "reasoning"),
                 spec.reasoning);
  read_prices(r, r.optional_object(json, path, "price_per_mtok"), key_path(path, "price_per_mtok"),
              spec.prices);
  read_tokenizer(r, r.optional_object(json, path, "tokenizer"), key_path(path, "tokenizer"),
                 spec.tokenizer);
  if (spec.tokenizer && spec.tokenizer->model.empty())
    spec.tokenizer->model = spec.model;
  check_provider_rules(r, path, spec);
  return r.finish(std::move(spec));
}

} // namespace

Json settings_json(const ModelSpec& spec) {
  Json json{
      {"provider", spec.provider}, {"base_url", redact_url(spec.base_url)}, {"model", spec.model}};
  json["api_key_env"] = spec.api_key_env ? Json(*spec.api_key_env) : Json();
  const SamplingParams& s = spec.sampling;
  json["temperature"] = s.temperature ? Json(*s.temperature) : Json();
  json["top_p"] = s.top_p ? Json(*s.top_p) : Json();
  json["top_k"] = s.top_k ? Json(*s.top_k) : Json();
  json["presence_penalty"] = s.presence_penalty ? Json(*s.presence_penalty) : Json();
  json["max_output_tokens"] = s.max_output_tokens ? Json(*s.max_output_tokens) : Json();
  const ReasoningSettings& r = spec.reasoning;
  json["reasoning"] = {{"mode", r.mode ? Json(*r.mode) : Json()},
                       {"effort", r.effort ? Json(*r.effort) : Json()},
                       {"budget_tokens", r.budget_tokens ? Json(*r.budget_tokens) : Json()},
                       {"include_thoughts", r.include_thoughts}};
  json["price_per_mtok"] = spec.prices ? Json{{"input", spec.prices->input_per_mtok},
                                              {"output", spec.prices->output_per_mtok}}
                                       : Json();
  json["extra_body"] = spec.extra_body;
  json["max_tokens_field"] = spec.max_tokens_field;
  json["timeout_s"] = spec.timeout.count();
  json["max_attempts"] = spec.max_attempts;
  json["replay_file"] = spec.replay_file ? Json(spec.replay_file->string()) : Json();
  return json;
}

const ModelSpec* ModelRegistry::find(std::string_view name) const {
  for (const auto& model : models)
    if (model.name == name)
      return &model;
  return nullptr;
}

util::Expected<ModelRegistry> parse_registry(std::string_view text,
                                             const std::filesystem::path& origin) {
  Json json;
  try {
    json = Json::parse(text);
  } catch (const Json::exception& e) { // parse_error, or out_of_range for a number like 1e999
    return util::make_error(util::ErrorKind::invalid_input,
                            origin.string() + ": $: not valid JSON (" + e.what() + ")");
  }
  if (!json.is_object() || !json.contains("models") || !json["models"].is_object())
    return util::make_error(util::ErrorKind::invalid_input,
                            origin.string() + ": $.models: expected an object of models");
  JsonReader top(origin.string());
  top.allow_only(json, "$", kTopKeys);
  PTXBENCH_TRY(top.finish(util::Ok{}));
  ModelRegistry registry{origin, {}};
  for (const auto& [name, model] : json["models"].items()) {
    PTXBENCH_TRY_ASSIGN(auto spec, read_model(name, model, origin));
    registry.models.push_back(std::move(spec));
  }
  return registry;
}

util::Expected<ModelRegistry> load_registry(const std::filesystem::path& path) {
  PTXBENCH_TRY_ASSIGN(auto text, util::read_file(path));
  return parse_registry(text, path);
}

std::filesystem::path default_registry_path() {
  return util::data_root() / "config" / "models.json";
}

} // namespace ptxbench::model
