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
util::Expected<std::unique_ptr<ModelClient>> make_replay(const ModelSpec& spec);

} // namespace ptxbench::agent
