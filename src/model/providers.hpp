// One constructor per provider file (internal to model/; the factory picks by name).
#pragma once

#include "model/chat.hpp"
#include "model/http_client.hpp"
#include "model/registry.hpp"
#include "model/secret.hpp"

#include <memory>

namespace ptxbench::model {

std::unique_ptr<ProviderProtocol> make_openai_chat(const ModelSpec& spec, const Secret& key);
std::unique_ptr<ProviderProtocol> make_anthropic_messages(const ModelSpec& spec, const Secret& key);
std::unique_ptr<ProviderProtocol> make_gemini(const ModelSpec& spec, const Secret& key);
// Plays the file from reply `start` (0-based) on.
util::Expected<std::unique_ptr<ModelClient>> make_replay(const ModelSpec& spec, std::size_t start);

} // namespace ptxbench::model
