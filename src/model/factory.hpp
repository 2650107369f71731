// Building a model client from a registry entry: the provider is picked by name, the API key
// is read from the environment variable the entry names (never from a file, never logged).
#pragma once

#include "model/chat.hpp"
#include "model/http_transport.hpp"
#include "model/registry.hpp"
#include "model/retry.hpp"

#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace ptxbench::model {

using EnvLookup = std::function<std::optional<std::string>(const std::string& name)>;
EnvLookup process_environment();

struct ClientDeps {
  HttpTransport* transport = nullptr; // required by the HTTP providers
  Sleeper* sleeper = nullptr;         // nullptr: real_sleeper()
  EnvLookup env;                      // empty: process_environment()
  RetryPolicy retry;                  // delays; max_attempts comes from the registry entry
  std::size_t max_response_bytes = std::size_t{64} << 20;
  // replay: recorded replies to skip, the calls a resumed trajectory already made.
  std::size_t replay_start = 0;
};

// invalid_input when the entry's key variable is unset or empty, or its replay file is bad.
util::Expected<std::unique_ptr<ModelClient>> make_client(const ModelSpec& spec,
                                                         const ClientDeps& deps);

// What make_client or the first request would refuse, found before anything is created:
// invalid_input for an API-key variable that is unset or empty, a base URL that is not
// http(s)://host…, or a replay file that does not exist. Reads no file but the replay's
// metadata and sends nothing.
util::Status check_client_setup(const ModelSpec& spec, const EnvLookup& env);

// A request carrying the entry's sampling, reasoning and extra_body settings.
ChatRequest make_request(const ModelSpec& spec, std::vector<Message> messages);

} // namespace ptxbench::model
