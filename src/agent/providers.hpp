// One constructor per provider file (internal to agent/; the factory picks by name).
#pragma once

#include "agent/chat.hpp"
#include "agent/http_client.hpp"
#include "agent/registry.hpp"
#include "agent/secret.hpp"

#include <memory>

namespace ptxbench::agent {

std::unique_ptr<ProviderProtocol> make_openai_chat(const ModelSpec& spec, const Secret& key);
std::unique_ptr<ProviderProtocol> make_anthropic_messages(const ModelSpec& spec, const Secret& key);
std::unique_ptr<ProviderProtocol> make_gemini(const ModelSpec& spec, const Secret& key);
// Plays the file from reply `start` (0-based) on.
util::Expected<std::unique_ptr<ModelClient>> make_replay(const ModelSpec& spec, std::size_t start);

} // namespace ptxbench::agent
