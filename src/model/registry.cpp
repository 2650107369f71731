#include "model/registry.hpp"

#include "model/json_fields.hpp"
#include "util/fs.hpp"
#include "util/paths.hpp"

#include <algorithm>
#include <cctype>
#include <fmt/core.h>
#include <span>

namespace ptxbench::model {
namespace {

constexpr std::array<std::string_view, 16> kModelKeys{
    "provider",          "base_url",  "model",          "api_key_env",
    "temperature",       "top_p",     "top_k",          "presence_penalty",
    "max_output_tokens", "reasoning", "price_per_mtok", "extra_body",
    "max_tokens_field",  "timeout_s", "max_attempts",   "replay_file"};

constexpr std::array<std::string_view, 4> kReasoningKeys{"mode", "effort", "budget_tokens",
                                                         "include_thoughts"};
constexpr std::array<std::string_view, 2> kPriceKeys{"input", "output"};
constexpr std::array<std::string_view, 2> kTopKeys{"models", "description"};

void read_sampling(Fields& f, SamplingParams& s) {
  s.temperature = f.number("temperature", 0, 2);
  s.top_p = f.number("top_p", 0, 1);
  s.top_k = f.integer("top_k", 1);
  s.presence_penalty = f.number("presence_penalty", -2, 2);
  s.max_output_tokens = f.integer("max_output_tokens", 1);
}

// Nested objects read with their own Fields; the first error comes back.
std::optional<util::Error> read_reasoning(const Fields& parent, const Json* json,
                                          ReasoningSettings& r, const std::string& origin) {
  if (json == nullptr)
    return std::nullopt;
  Fields f(*json, key_path(parent.path(), "reasoning"), origin);
  f.allow_only(kReasoningKeys);
  r.mode = f.text("mode");
  if (r.mode && *r.mode != "enabled" && *r.mode != "adaptive" && *r.mode != "disabled")
    f.fail(key_path(f.path(), "mode"), "expected \"enabled\", \"adaptive\" or \"disabled\"");
  r.effort = f.text("effort");
  r.budget_tokens = f.integer("budget_tokens", 0);
  r.include_thoughts = f.boolean("include_thoughts").value_or(true);
  return f.error();
}

std::optional<util::Error> read_prices(const Fields& parent, const Json* json,
                                       std::optional<Prices>& prices, const std::string& origin) {
  if (json == nullptr)
    return std::nullopt;
  Fields f(*json, key_path(parent.path(), "price_per_mtok"), origin);
  f.allow_only(kPriceKeys);
  auto input = f.number("input", 0, 1e6);
  auto output = f.number("output", 0, 1e6);
  if (!f.error() && (!input || !output))
    f.fail(f.path(), "needs both \"input\" and \"output\"");
  if (!f.error())
    prices = Prices{*input, *output};
  return f.error();
}

void check_provider_rules(Fields& f, const ModelSpec& spec) {
  bool known = std::find(kProviderNames.begin(), kProviderNames.end(), spec.provider) !=
               kProviderNames.end();
  if (!known)
    f.fail(key_path(f.path(), "provider"),
           "unknown provider \"" + spec.provider + "\" (openai, anthropic, gemini, replay)");
  bool replay = spec.provider == "replay";
  if (!replay && spec.base_url.empty())
    f.fail(key_path(f.path(), "base_url"), "missing");
  if (!replay && spec.model.empty())
    f.fail(key_path(f.path(), "model"), "missing");
  if (replay && !spec.replay_file)
    f.fail(key_path(f.path(), "replay_file"), "missing");
  if (spec.provider == "anthropic" && !spec.sampling.max_output_tokens)
    f.fail(key_path(f.path(), "max_output_tokens"), "required by the Anthropic Messages API");
  if (spec.max_tokens_field != "max_tokens" && spec.max_tokens_field != "max_completion_tokens")
    f.fail(key_path(f.path(), "max_tokens_field"),
           "expected \"max_tokens\" or \"max_completion_tokens\"");
}

void read_fields(Fields& f, ModelSpec& spec, const std::filesystem::path& origin) {
  f.allow_only(kModelKeys);
  spec.provider = f.text("provider").value_or("");
  if (spec.provider.empty() && !f.error())
    f.fail(key_path(f.path(), "provider"), "missing");
  spec.base_url = f.text("base_url").value_or("");
  while (spec.base_url.ends_with('/'))
    spec.base_url.pop_back();
  spec.model = f.text("model").value_or("");
  spec.api_key_env = f.text("api_key_env");
  read_sampling(f, spec.sampling);
  spec.max_tokens_field = f.text("max_tokens_field").value_or("max_tokens");
  spec.timeout = std::chrono::seconds(f.integer("timeout_s", 1).value_or(1800));
  spec.max_attempts = static_cast<int>(f.integer("max_attempts", 1).value_or(6));
  if (auto file = f.text("replay_file"))
    spec.replay_file = std::filesystem::absolute(origin.parent_path() / *file);
  if (const Json* extra = f.object("extra_body"))
    spec.extra_body = *extra;
}

util::Expected<ModelSpec> read_model(const std::string& name, const Json& json,
                                     const std::filesystem::path& origin) {
  Fields f(json, key_path("$.models", name), origin.string());
  if (!json.is_object()) {
    f.fail(f.path(), "expected an object");
    return *f.error();
  }
  ModelSpec spec;
  spec.name = name;
  read_fields(f, spec, origin);
  if (f.error())
    return *f.error();
  if (auto nested = read_reasoning(f, f.object("reasoning"), spec.reasoning, origin.string()))
    return *nested;
  if (auto nested = read_prices(f, f.object("price_per_mtok"), spec.prices, origin.string()))
    return *nested;
  check_provider_rules(f, spec);
  if (f.error())
    return *f.error();
  return spec;
}

} // namespace

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
  Fields top(json, "$", origin.string());
  if (!json.is_object() || !json.contains("models") || !json["models"].is_object())
    return util::make_error(util::ErrorKind::invalid_input,
                            origin.string() + ": $.models: expected an object of models");
  top.allow_only(kTopKeys);
  if (top.error())
    return *top.error();
  ModelRegistry registry{origin, {}};
  for (const auto& [name, model] : json["models"].items()) {
    auto spec = read_model(name, model, origin);
    if (!spec)
      return spec.take_error();
    registry.models.push_back(std::move(*spec));
  }
  return registry;
}

util::Expected<ModelRegistry> load_registry(const std::filesystem::path& path) {
  auto text = util::read_file(path);
  if (!text)
    return text.take_error();
  return parse_registry(*text, path);
}

std::filesystem::path default_registry_path() {
  return util::data_root() / "config" / "models.json";
}

} // namespace ptxbench::model
