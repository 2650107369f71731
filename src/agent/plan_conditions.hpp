// The plan keys of conditions (plan.hpp: "guidance", "conditions", "parameters"), read by
// parse_plan; internal to the agent module.
#pragma once

#include "agent/plan.hpp"
#include "util/json.hpp"
#include "util/json_reader.hpp"

#include <filesystem>

namespace ptxbench::agent::detail {

// `file` as an absolute path, a relative one read from beside the plan file `origin`: the stored
// plan then names the same file whatever folder a resume starts in.
std::filesystem::path beside(const std::filesystem::path& origin,
                             const std::filesystem::path& file);

// "guidance": {"file", "problems", "sha256"}; nothing when `json` is null.
void read_guidance(util::JsonReader& r, const util::Json* json, const std::filesystem::path& origin,
                   GuidanceSettings& guidance);
// "conditions": a non-empty list; each checked against the plan's models.
void read_conditions(util::JsonReader& r, const util::Json& json, RunPlan& plan);
// "parameters" with `overrides` applied, substituted for "${name}" in models and
// conditions[].models of `json` before anything else is read.
void apply_parameters(util::JsonReader& r, util::Json& json, const PlanParameters& overrides);

} // namespace ptxbench::agent::detail
