#include "model/factory.hpp"

#include "model/providers.hpp"

#include <cstdlib>
#include <filesystem>

namespace ptxbench::model {
namespace {

using ProtocolMaker = std::unique_ptr<ProviderProtocol> (*)(const ModelSpec&, const Secret&);

struct HttpProvider {
  std::string_view name;
  ProtocolMaker make;
};

constexpr std::array kHttpProviders{
    HttpProvider{"openai", make_openai_chat},
    HttpProvider{"anthropic", make_anthropic_messages},
    HttpProvider{"gemini", make_gemini},
};

// Every registry provider name has a maker here (or is "replay").
static_assert(kHttpProviders.size() + 1 == kProviderNames.size());

util::Expected<Secret> api_key(const ModelSpec& spec, const EnvLookup& env) {
  if (!spec.api_key_env)
    return Secret{};
  auto value = env(*spec.api_key_env);
  if (!value || value->empty())
    return util::make_error(util::ErrorKind::invalid_input,
                            "model " + spec.name + ": environment variable " + *spec.api_key_env +
                                " (its API key) is not set");
  return Secret{std::move(*value)};
}

bool has_host(std::string_view url) {
  for (std::string_view scheme : {"http://", "https://"})
    if (url.starts_with(scheme)) {
      std::string_view rest = url.substr(scheme.size());
      return !rest.empty() && rest.front() != '/' && rest.front() != ':' &&
             rest.find_first_of(" \t\r\n") == std::string_view::npos;
    }
  return false;
}

} // namespace

util::Status check_client_setup(const ModelSpec& spec, const EnvLookup& env) {
  if (spec.provider == "replay") {
    if (spec.replay_file && !std::filesystem::exists(*spec.replay_file))
      return util::make_error(util::ErrorKind::invalid_input,
                              "model " + spec.name + ": replay file " + spec.replay_file->string() +
                                  " does not exist");
    return util::Ok{};
  }
  if (!has_host(spec.base_url))
    return util::make_error(util::ErrorKind::invalid_input,
                            "model " + spec.name + ": base_url \"" + redact_url(spec.base_url) +
                                "\" is not an http:// or https:// URL with a host");
  PTXBENCH_TRY(api_key(spec, env ? env : process_environment()));
  return util::Ok{};
}

EnvLookup process_environment() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* value = std::getenv(name.c_str());
    if (value == nullptr)
      return std::nullopt;
    return std::string(value);
  };
}

util::Expected<std::unique_ptr<ModelClient>> make_client(const ModelSpec& spec,
                                                         const ClientDeps& deps) {
  if (spec.provider == "replay")
    return make_replay(spec, deps.replay_start);
  for (const auto& provider : kHttpProviders) {
    if (provider.name != spec.provider)
      continue;
    if (deps.transport == nullptr)
      throw util::Fatal("make_client: no HTTP transport");
    PTXBENCH_TRY_ASSIGN(auto key, api_key(spec, deps.env ? deps.env : process_environment()));
    HttpClientOptions options{deps.retry, deps.max_response_bytes};
    options.retry.max_attempts = spec.max_attempts;
    Sleeper& sleeper = deps.sleeper != nullptr ? *deps.sleeper : real_sleeper();
    auto protocol = provider.make(spec, key);
    return std::unique_ptr<ModelClient>(new HttpModelClient(
        spec, std::move(protocol), *deps.transport, sleeper, std::move(key), options));
  }
  return util::make_error(util::ErrorKind::invalid_input,
                          "model " + spec.name + ": unknown provider \"" + spec.provider + "\"");
}

ChatRequest make_request(const ModelSpec& spec, std::vector<Message> messages) {
  ChatRequest request;
  request.messages = std::move(messages);
  request.sampling = spec.sampling;
  request.reasoning = spec.reasoning;
  request.extra_body = spec.extra_body;
  return request;
}

} // namespace ptxbench::model
