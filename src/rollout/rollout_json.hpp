// The JSON of the rollout endpoints (docs/service.md "Rollouts"): the request bodies, read with
// every field checked (unknown keys are errors, the message names the JSON path), and the
// answers.
#pragma once

#include "rollout/rollouts.hpp"

#include <nlohmann/json.hpp>

namespace ptxbench::rollout {

using Json = nlohmann::ordered_json;

// POST /v1/prompt: {"problem", "variant"?, "arch"?, "language"?}
util::Expected<PromptSpec> read_prompt_spec(const Json& body);
// POST /v1/rollouts: the prompt's members and {"model"?, "max_turns"?, "target_speedup"?
// (a number, or null: never end early), "context"?}
util::Expected<RolloutSpec> read_rollout_spec(const Json& body);
// POST /v1/rollouts/{id}/step: {"reply", "reasoning"?, "finish_reason"?, "input_tokens"?,
// "output_tokens"?, "seen_turns"?}
util::Expected<Reply> read_reply(const Json& body);

Json messages_json(const std::vector<model::Message>& messages);
Json to_json(const RolloutView& view);

} // namespace ptxbench::rollout
