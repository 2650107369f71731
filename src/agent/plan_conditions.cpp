// Reading the plan keys of conditions (plan.hpp): "guidance", "conditions", "parameters", and
// what a condition means for a trajectory.
#include "agent/plan_conditions.hpp"

#include <algorithm>
#include <array>
#include <set>
#include <string>

namespace ptxbench::agent {
namespace {

using util::Emptiness;
using util::Json;
using util::JsonReader;
using util::key_path;

constexpr std::array<std::string_view, 3> kGuidanceKeys{"file", "problems", "sha256"};
constexpr std::array<std::string_view, 4> kConditionKeys{"name", "guidance", "retrieval", "models"};
// By Retrieval value (none = 0); stored plans spell retrieval so.
constexpr std::array<std::string_view, 3> kRetrievalNames{"none", "notes", "notes+kernel"};
static_assert(static_cast<std::size_t>(Retrieval::notes_and_kernel) + 1 == kRetrievalNames.size(),
              "kRetrievalNames must name every Retrieval");

void check_condition(JsonReader& r, const RunPlan& plan, const Condition& condition,
                     const std::string& path) {
  for (std::size_t i = 0; i < condition.models.size(); ++i)
    if (std::ranges::find(plan.models, condition.models[i]) == plan.models.end())
      r.fail(key_path(path, "models") + "[" + std::to_string(i) + "]",
             "\"" + condition.models[i] + "\" is not one of the plan's models");
}

// Replaces "${name}" in the strings of `list` (at `path`) by the parameter's value.
void substitute(JsonReader& r, Json& list, const std::string& path,
                const PlanParameters& parameters) {
  if (!list.is_array())
    return;
  for (std::size_t i = 0; i < list.size(); ++i) {
    if (!list[i].is_string())
      continue;
    std::string text = list[i].get<std::string>();
    if (!text.starts_with("${") || !text.ends_with("}"))
      continue;
    const std::string name = text.substr(2, text.size() - 3);
    const auto found = parameters.find(name);
    if (found == parameters.end())
      return r.fail(path + "[" + std::to_string(i) + "]",
                    "\"" + text + "\" names no parameter of $.parameters");
    list[i] = found->second;
  }
}

} // namespace

namespace detail {

std::filesystem::path beside(const std::filesystem::path& origin,
                             const std::filesystem::path& file) {
  if (file.is_absolute())
    return file;
  return std::filesystem::absolute(origin.parent_path() / file).lexically_normal();
}

void read_guidance(JsonReader& r, const Json* json, const std::filesystem::path& origin,
                   GuidanceSettings& guidance) {
  if (json == nullptr)
    return;
  const std::string path = "$.guidance";
  r.allow_only(*json, path, kGuidanceKeys);
  const std::filesystem::path file(r.string(*json, path, "file", Emptiness::rejected));
  guidance.file = file.empty() ? file : beside(origin, file);
  if (auto problems = r.optional_strings(*json, path, "problems"))
    guidance.problems = std::move(*problems);
  guidance.sha256 =
      r.optional_string(*json, path, "sha256", Emptiness::rejected).value_or(std::string());
}

void read_conditions(JsonReader& r, const Json& json, RunPlan& plan) {
  const Json* list = JsonReader::optional(json, "conditions");
  if (list == nullptr)
    return;
  if (!list->is_array() || list->empty())
    return r.fail("$.conditions", "expected a non-empty list of conditions");
  std::set<std::string> names;
  for (std::size_t i = 0; i < list->size() && r.ok(); ++i) {
    const std::string path = "$.conditions[" + std::to_string(i) + "]";
    const Json& item = (*list)[i];
    if (!r.expect_object(item, path))
      return;
    r.allow_only(item, path, kConditionKeys);
    Condition condition;
    condition.name = r.string(item, path, "name", Emptiness::rejected);
    if (condition.name.find_first_of("/ \t\n") != std::string::npos)
      r.fail(key_path(path, "name"), "a condition name has no '/' or white space");
    if (r.ok() && !names.insert(condition.name).second)
      r.fail(key_path(path, "name"), "\"" + condition.name + "\" names two conditions");
    condition.guidance = r.boolean(item, path, "guidance") ? Guidance::on : Guidance::off;
    const std::string retrieval = r.string(item, path, "retrieval", Emptiness::rejected);
    if (auto parsed = parse_retrieval(retrieval))
      condition.retrieval = *parsed;
    else if (r.ok())
      r.fail(key_path(path, "retrieval"),
             "unknown retrieval \"" + retrieval + "\": expected none, notes or notes+kernel");
    if (auto models = r.optional_strings(item, path, "models"))
      condition.models = std::move(*models);
    if (r.ok())
      check_condition(r, plan, condition, path);
    plan.conditions.push_back(std::move(condition));
  }
}

// The plan's parameters with the overrides applied, substituted into models and
// conditions[].models.
void apply_parameters(JsonReader& r, Json& json, const PlanParameters& overrides) {
  PlanParameters parameters;
  if (const Json* declared = r.optional_object(json, "$", "parameters"))
    for (const auto& [name, value] : declared->items()) {
      if (!value.is_string() || value.get<std::string>().empty())
        return r.fail(key_path("$.parameters", name), "expected a non-empty string");
      parameters[name] = value.get<std::string>();
    }
  for (const auto& [name, value] : overrides) {
    if (!parameters.contains(name))
      return r.fail("$.parameters",
                    "--set " + name + ": the plan declares no parameter \"" + name + "\"");
    parameters[name] = value;
  }
  if (json.contains("models"))
    substitute(r, json["models"], "$.models", parameters);
  if (json.contains("conditions") && json["conditions"].is_array())
    for (std::size_t i = 0; i < json["conditions"].size(); ++i)
      if (json["conditions"][i].is_object() && json["conditions"][i].contains("models"))
        substitute(r, json["conditions"][i]["models"],
                   "$.conditions[" + std::to_string(i) + "].models", parameters);
}

} // namespace detail

std::string_view to_string(Retrieval retrieval) {
  return kRetrievalNames[static_cast<std::size_t>(retrieval)];
}

std::optional<Retrieval> parse_retrieval(std::string_view name) {
  for (std::size_t i = 0; i < kRetrievalNames.size(); ++i)
    if (kRetrievalNames[i] == name)
      return static_cast<Retrieval>(i);
  return std::nullopt;
}

std::vector<Condition> effective_conditions(const RunPlan& plan) {
  if (!plan.conditions.empty())
    return plan.conditions;
  Condition implicit;
  implicit.guidance = plan.guidance.file.empty() ? Guidance::off : Guidance::on;
  if (!plan.notes.file.empty())
    implicit.retrieval = plan.notes.mode == 2 ? Retrieval::notes_and_kernel : Retrieval::notes;
  return {implicit};
}

bool guidance_applies(const RunPlan& plan, const Condition& condition, std::string_view problem) {
  if (condition.guidance == Guidance::off || plan.guidance.file.empty())
    return false;
  return plan.guidance.problems.empty() ||
         std::ranges::any_of(plan.guidance.problems, [&](const std::string& prefix) {
           return problem.starts_with(prefix);
         });
}

} // namespace ptxbench::agent
