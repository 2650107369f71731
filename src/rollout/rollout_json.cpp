#include "rollout/rollout_json.hpp"

#include "store/enums.hpp"
#include "util/json_reader.hpp"

#include <array>
#include <fmt/format.h>
#include <limits>
#include <string_view>

namespace ptxbench::rollout {
namespace {

using util::Emptiness;
using util::JsonReader;

constexpr std::array<std::string_view, 4> kPromptKeys{"problem", "variant", "arch", "language"};
constexpr std::array<std::string_view, 8> kRolloutKeys{
    "problem", "variant", "arch", "language", "model", "max_turns", "target_speedup", "context"};
constexpr std::array<std::string_view, 6> kReplyKeys{
    "reply", "reasoning", "finish_reason", "input_tokens", "output_tokens", "seen_turns"};
constexpr double kMaxTargetSpeedup = 1000;

void read_prompt_members(JsonReader& in, const Json& body, PromptSpec& out) {
  out.problem = in.string(body, "$", "problem", Emptiness::rejected);
  if (auto variant = in.optional_string(body, "$", "variant", Emptiness::rejected))
    out.variant = *variant;
  if (auto arch = in.optional_string(body, "$", "arch", Emptiness::rejected)) {
    if (auto parsed = compile::parse_arch(*arch))
      out.arch = *parsed;
    else
      in.fail("$.arch", fmt::format("unknown arch \"{}\" (sm_90a or sm_100a)", *arch));
  }
  if (auto language = in.optional_string(body, "$", "language", Emptiness::rejected)) {
    if (auto parsed = compile::parse_language(*language))
      out.language = *parsed;
    else
      in.fail("$.language", fmt::format("unknown language \"{}\" (cuda or triton)", *language));
  }
}

} // namespace

util::Expected<PromptSpec> read_prompt_spec(const Json& body) {
  JsonReader in("request body");
  PromptSpec out;
  if (in.expect_object(body, "$")) {
    in.allow_only(body, "$", kPromptKeys);
    read_prompt_members(in, body, out);
  }
  return in.finish(std::move(out));
}

util::Expected<RolloutSpec> read_rollout_spec(const Json& body) {
  JsonReader in("request body");
  RolloutSpec out;
  if (in.expect_object(body, "$")) {
    in.allow_only(body, "$", kRolloutKeys);
    read_prompt_members(in, body, out.prompt);
    if (auto model = in.optional_string(body, "$", "model", Emptiness::rejected))
      out.model = *model;
    if (auto turns = in.optional_integer(body, "$", "max_turns", util::IntegerRange{1, kMaxTurns}))
      out.max_turns = static_cast<int>(*turns);
    if (const Json* target = JsonReader::optional(body, "target_speedup")) {
      if (target->is_null())
        out.target_speedup.reset();
      else
        out.target_speedup = in.optional_number(body, "$", "target_speedup",
                                                util::NumberRange{0, kMaxTargetSpeedup});
    }
    if (auto context = in.optional_string(body, "$", "context", Emptiness::rejected)) {
      if (auto parsed = agent::parse_context_policy(*context))
        out.context = *parsed;
      else
        in.fail("$.context", fmt::format("unknown context \"{}\" (full or latest-pair)", *context));
    }
  }
  return in.finish(std::move(out));
}

util::Expected<Reply> read_reply(const Json& body) {
  JsonReader in("request body");
  Reply out;
  if (in.expect_object(body, "$")) {
    in.allow_only(body, "$", kReplyKeys);
    out.text = in.string(body, "$", "reply", Emptiness::allowed);
    out.reasoning = in.optional_string(body, "$", "reasoning", Emptiness::allowed);
    if (auto finish = in.optional_string(body, "$", "finish_reason", Emptiness::rejected))
      out.finish_reason = *finish;
    constexpr util::IntegerRange kTokens{0, std::numeric_limits<std::int32_t>::max()};
    out.input_tokens = in.optional_integer(body, "$", "input_tokens", kTokens).value_or(0);
    out.output_tokens = in.optional_integer(body, "$", "output_tokens", kTokens).value_or(0);
    out.seen_turns = in.optional_integer(body, "$", "seen_turns", std::int64_t{0});
  }
  return in.finish(std::move(out));
}

Json messages_json(const std::vector<model::Message>& messages) {
  Json out = Json::array();
  for (const model::Message& message : messages)
    out.push_back({{"role", model::to_string(message.role)}, {"content", message.content}});
  return out;
}

namespace {

Json optional_json(const std::optional<std::string>& value) {
  return value ? Json(*value) : Json(nullptr);
}

Json turn_json(const TurnView& turn) {
  return {{"index", turn.index},
          {"category", store::to_string(turn.category)},
          {"counted", turn.counted},
          {"correct", turn.category == store::TurnCategory::correct},
          {"status", optional_json(turn.status)},
          {"speedup", turn.speedup ? Json(*turn.speedup) : Json(nullptr)},
          {"target_static", optional_json(turn.static_verdict)},
          {"target_executed", optional_json(turn.dynamic_verdict)},
          {"feedback", turn.feedback},
          {"infra_reason", turn.infra_reason.empty() ? Json(nullptr) : Json(turn.infra_reason)}};
}

Json turns_json(const std::vector<TurnView>& turns) {
  Json out = Json::array();
  for (const TurnView& turn : turns)
    out.push_back(turn_json(turn));
  return out;
}

} // namespace

Json to_json(const RolloutView& view) {
  const RolloutSpec& spec = view.spec;
  return {{"rollout_id", view.id},
          {"run_dir", view.run_dir.string()},
          {"trajectory", view.trajectory},
          {"model", spec.model},
          {"problem", spec.prompt.problem},
          {"variant", spec.prompt.variant},
          {"sample", view.sample},
          {"arch", compile::to_string(spec.prompt.arch)},
          {"language", compile::to_string(spec.prompt.language)},
          {"max_turns", spec.max_turns},
          {"target_speedup", spec.target_speedup ? Json(*spec.target_speedup) : Json(nullptr)},
          {"context", agent::to_string(spec.context)},
          {"counted_turns", view.counted_turns},
          {"done", view.done},
          {"exit", view.exit ? Json(store::to_string(*view.exit)) : Json(nullptr)},
          {"awaiting_retry", view.awaiting_retry},
          {"messages", messages_json(view.messages)},
          {"stepped", turns_json(view.stepped)},
          {"turns", turns_json(view.turns)}};
}

} // namespace ptxbench::rollout
