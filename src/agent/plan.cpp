#include "agent/plan.hpp"

#include "agent/plan_conditions.hpp"
#include "agent/prompt.hpp"
#include "agent/remote_executor.hpp"
#include "fleet/broker.hpp"
#include "pack/listing.hpp"
#include "util/fs.hpp"
#include "util/json_reader.hpp"

#include <algorithm>
#include <set>

namespace ptxbench::agent {
namespace {

using util::Emptiness;
using util::Json;
using util::JsonReader;
using util::key_path;

constexpr std::array<std::string_view, 20> kPlanKeys{"models",
                                                     "problems",
                                                     "prompt_variants",
                                                     "trajectories",
                                                     "turns",
                                                     "target_speedup",
                                                     "context",
                                                     "arch",
                                                     "jobs",
                                                     "registry",
                                                     "eval",
                                                     "max_infra_retries",
                                                     "eval_attempts",
                                                     "eval_retry_delay_s",
                                                     "repairs",
                                                     "language",
                                                     "repair_notes",
                                                     "guidance",
                                                     "conditions",
                                                     "parameters"};
constexpr std::array<std::string_view, 7> kNotesKeys{
    "file", "mode", "top_k", "max_notes", "min_similarity", "definition_prefixes", "held_out"};
constexpr std::array<std::string_view, 5> kRepairKeys{"id", "problem", "variant", "kernel",
                                                      "error"};
constexpr std::array<std::string_view, 8> kEvalKeys{
    "sets", "trials", "warmup", "iterations", "timeout_s", "service", "memcheck", "broker"};
constexpr std::array<std::string_view, 3> kSuites{"primary", "generalization", "all"};

int as_int(std::optional<std::int64_t> value, int fallback) {
  return value ? static_cast<int>(*value) : fallback;
}

void read_eval(JsonReader& r, const Json* json, const std::string& path, EvalSettings& eval) {
  if (json == nullptr)
    return;
  r.allow_only(*json, path, kEvalKeys);
  eval.sets = as_int(r.optional_integer(*json, path, "sets", 1), eval.sets);
  eval.trials = as_int(r.optional_integer(*json, path, "trials", 1), eval.trials);
  eval.warmup = as_int(r.optional_integer(*json, path, "warmup", 0), eval.warmup);
  eval.iterations = as_int(r.optional_integer(*json, path, "iterations", 1), eval.iterations);
  eval.timeout_s = r.optional_number(*json, path, "timeout_s", {1, 86400}).value_or(eval.timeout_s);
  eval.memcheck = r.optional_boolean(*json, path, "memcheck").value_or(eval.memcheck);
  if (auto service = r.optional_strings(*json, path, "service")) {
    if (auto urls = check_service_urls(*service); !urls)
      r.fail(key_path(path, "service"), urls.error().message);
    eval.service = std::move(*service);
  }
  if (auto broker = r.optional_string(*json, path, "broker", Emptiness::rejected)) {
    if (auto url = fleet::check_broker_url(*broker); !url)
      r.fail(key_path(path, "broker"), url.error().message);
    eval.broker = std::move(*broker);
  }
  if (!eval.service.empty() && !eval.broker.empty())
    r.fail(key_path(path, "broker"), "eval.service and eval.broker exclude each other");
}

void read_notes(JsonReader& r, const Json* json, const std::filesystem::path& origin,
                NotesSettings& notes) {
  if (json == nullptr)
    return;
  const std::string path = "$.repair_notes";
  r.allow_only(*json, path, kNotesKeys);
  const std::filesystem::path file(
      r.optional_string(*json, path, "file", Emptiness::rejected).value_or(std::string()));
  notes.file = file.empty() ? file : detail::beside(origin, file);
  notes.mode = as_int(r.optional_integer(*json, path, "mode", 1), notes.mode);
  if (notes.mode != 1 && notes.mode != 2)
    r.fail(key_path(path, "mode"), "expected 1 (notes) or 2 (best fixed kernel and notes)");
  notes.top_k = as_int(r.optional_integer(*json, path, "top_k", 1), notes.top_k);
  notes.max_notes = as_int(r.optional_integer(*json, path, "max_notes", 1), notes.max_notes);
  notes.min_similarity =
      r.optional_number(*json, path, "min_similarity", {0, 1e9}).value_or(notes.min_similarity);
  if (auto prefixes = r.optional_strings(*json, path, "definition_prefixes"))
    notes.definition_prefixes = std::move(*prefixes);
  if (auto held_out = r.optional_strings(*json, path, "held_out"))
    for (const std::string& dir : *held_out) {
      const std::filesystem::path run(dir);
      notes.held_out.push_back(detail::beside(origin, run));
    }
}

void read_loop(JsonReader& r, const Json& json, LoopOptions& loop) {
  loop.max_turns = as_int(r.optional_integer(json, "$", "turns", 1), loop.max_turns);
  loop.max_infra_retries =
      as_int(r.optional_integer(json, "$", "max_infra_retries", 0), loop.max_infra_retries);
  loop.eval_attempts =
      as_int(r.optional_integer(json, "$", "eval_attempts", 1), loop.eval_attempts);
  if (auto delay = r.optional_number(json, "$", "eval_retry_delay_s", {0, 3600}))
    loop.eval_retry_delay = std::chrono::milliseconds(static_cast<long long>(*delay * 1000));
  if (auto target = r.optional_number(json, "$", "target_speedup", {0, 1e6}))
    loop.target_speedup = *target > 0 ? std::optional<double>(*target) : std::nullopt;
  if (auto context = r.optional_string(json, "$", "context", Emptiness::rejected)) {
    if (auto policy = parse_context_policy(*context))
      loop.context = *policy;
    else
      r.fail("$.context", "expected \"full\" or \"latest-pair\"");
  }
  if (auto arch = r.optional_string(json, "$", "arch", Emptiness::rejected)) {
    if (auto parsed = compile::parse_arch(*arch))
      loop.arch = *parsed;
    else
      r.fail("$.arch", "expected \"sm_90a\" or \"sm_100a\"");
  }
  if (auto language = r.optional_string(json, "$", "language", Emptiness::rejected)) {
    if (auto parsed = compile::parse_language(*language))
      loop.language = *parsed;
    else
      r.fail("$.language", "expected \"cuda\" or \"triton\"");
  }
}

void read_repairs(JsonReader& r, const Json& plan, std::vector<RepairTask>& repairs) {
  const Json* list = JsonReader::optional(plan, "repairs");
  if (list == nullptr)
    return;
  if (!list->is_array())
    return r.fail("$.repairs", "expected a list of repairs");
  for (std::size_t i = 0; i < list->size(); ++i) {
    const std::string path = "$.repairs[" + std::to_string(i) + "]";
    const Json& item = (*list)[i];
    if (!r.expect_object(item, path))
      return;
    r.allow_only(item, path, kRepairKeys);
    RepairTask repair;
    repair.id = r.string(item, path, "id", util::Emptiness::rejected);
    repair.problem = r.string(item, path, "problem", util::Emptiness::rejected);
    repair.variant = r.string(item, path, "variant", util::Emptiness::rejected);
    repair.kernel = r.string(item, path, "kernel", util::Emptiness::rejected);
    repair.error = r.string(item, path, "error", util::Emptiness::allowed);
    if (!r.ok())
      return;
    repairs.push_back(std::move(repair));
  }
}

util::Status check_variant(const RunPlan& plan, const std::string& name,
                           const pack::Manifest& manifest) {
  if (name == pack::kNoPackVariant)
    return util::Ok{};
  PTXBENCH_TRY(find_variant(manifest, name, plan.loop.arch, frontend::of(plan.loop.language)));
  return util::Ok{};
}

util::Expected<std::vector<PlannedTrajectory>>
expand_repairs(const RunPlan& plan, const suite::Suite& suite, const pack::Manifest& manifest) {
  std::set<std::string_view> ids;
  for (const RepairTask& repair : plan.repairs)
    if (!ids.insert(repair.id).second)
      return util::make_error(util::ErrorKind::invalid_input,
                              "the plan lists repair \"" + repair.id + "\" twice");
  std::vector<PlannedTrajectory> out;
  for (const std::string& model : plan.models)
    for (std::size_t i = 0; i < plan.repairs.size(); ++i) {
      const RepairTask& repair = plan.repairs[i];
      PTXBENCH_TRY_ASSIGN(auto problem, suite.find(repair.problem));
      PTXBENCH_TRY(check_variant(plan, repair.variant, manifest));
      out.push_back(
          {store::TrajectoryKey{model, repair.problem, repair.variant, static_cast<std::int64_t>(i),
                                compile::to_trace(plan.loop.language)},
           problem, repair.variant, &repair, effective_conditions(plan).front(),
           guidance_applies(plan, effective_conditions(plan).front(), repair.problem)});
    }
  return out;
}

// The variants one problem runs with, from the plan's names and keywords.
util::Expected<std::vector<std::string>>
variants_for(const RunPlan& plan, const suite::Problem& problem, const pack::Manifest& manifest) {
  std::vector<std::string> out;
  std::string_view kind = suite::info(problem.kind).name;
  for (const std::string& name : plan.prompt_variants) {
    if (name == pack::kPaperVariants) {
      bool found = false;
      for (const auto& [group, variants] :
           manifest.problem_variants(compile::to_string(plan.loop.language)))
        if (group == kind) {
          out.insert(out.end(), variants.begin(), variants.end());
          found = !variants.empty();
        }
      if (!found)
        out.push_back(default_variant(manifest, problem, frontend::of(plan.loop.language)));
    } else if (name == pack::kDefaultVariant) {
      out.push_back(default_variant(manifest, problem, frontend::of(plan.loop.language)));
    } else {
      out.push_back(name);
    }
  }
  for (const std::string& name : out)
    PTXBENCH_TRY(check_variant(plan, name, manifest));
  return out;
}

util::Expected<std::vector<const suite::Problem*>> problems_for(const RunPlan& plan,
                                                                const suite::Suite& suite) {
  std::vector<const suite::Problem*> out;
  for (const std::string& name : plan.problems) {
    if (std::ranges::find(kSuites, name) != kSuites.end()) {
      for (const auto& problem : suite.problems())
        if (name == "all" || problem.suite == name)
          out.push_back(&problem);
      continue;
    }
    PTXBENCH_TRY_ASSIGN(auto problem, suite.find(name));
    out.push_back(problem);
  }
  return out;
}

} // namespace

util::Expected<RunPlan> parse_plan(std::string_view text, const std::filesystem::path& origin,
                                   const PlanParameters& overrides) {
  util::Json json = util::Json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded() || !json.is_object())
    return util::make_error(util::ErrorKind::invalid_input,
                            origin.string() + ": not a JSON object");
  RunPlan plan;
  JsonReader r(origin.string());
  r.allow_only(json, "$", kPlanKeys);
  detail::apply_parameters(r, json, overrides);
  if (auto models = r.optional_strings(json, "$", "models"))
    plan.models = std::move(*models);
  else if (r.ok())
    r.fail("$.models", "missing: name at least one model of the registry");
  if (auto problems = r.optional_strings(json, "$", "problems"))
    plan.problems = std::move(*problems);
  if (auto variants = r.optional_strings(json, "$", "prompt_variants"))
    plan.prompt_variants = std::move(*variants);
  plan.trajectories = as_int(r.optional_integer(json, "$", "trajectories", 1), plan.trajectories);
  plan.jobs = as_int(r.optional_integer(json, "$", "jobs", 1), plan.jobs);
  if (auto registry = r.optional_string(json, "$", "registry", Emptiness::rejected)) {
    std::filesystem::path path(*registry);
    plan.registry = path.is_absolute() ? path : origin.parent_path() / path;
  }
  read_loop(r, json, plan.loop);
  read_eval(r, r.optional_object(json, "$", "eval"), "$.eval", plan.eval);
  read_repairs(r, json, plan.repairs);
  read_notes(r, r.optional_object(json, "$", "repair_notes"), origin, plan.notes);
  detail::read_guidance(r, r.optional_object(json, "$", "guidance"), origin, plan.guidance);
  if (r.ok())
    detail::read_conditions(r, json, plan);
  if (r.ok() && !plan.conditions.empty() && !plan.repairs.empty())
    r.fail("$.conditions", "a repair run has no conditions");
  return r.finish(std::move(plan));
}

util::Expected<RunPlan> load_plan(const std::filesystem::path& path,
                                  const PlanParameters& overrides) {
  PTXBENCH_TRY_ASSIGN(auto text, util::read_file(path));
  return parse_plan(text, path, overrides);
}

util::Json plan_to_json(const RunPlan& plan) {
  util::Json json;
  json["models"] = plan.models;
  json["problems"] = plan.problems;
  json["prompt_variants"] = plan.prompt_variants;
  json["trajectories"] = plan.trajectories;
  json["turns"] = plan.loop.max_turns;
  json["target_speedup"] = plan.loop.target_speedup.value_or(0.0);
  json["context"] = std::string(to_string(plan.loop.context));
  json["arch"] = std::string(compile::to_string(plan.loop.arch));
  json["language"] = std::string(compile::to_string(plan.loop.language));
  json["jobs"] = plan.jobs;
  json["max_infra_retries"] = plan.loop.max_infra_retries;
  json["eval_attempts"] = plan.loop.eval_attempts;
  json["eval_retry_delay_s"] = static_cast<double>(plan.loop.eval_retry_delay.count()) / 1000.0;
  if (!plan.registry.empty())
    json["registry"] = plan.registry.string();
  json["eval"] = {{"sets", plan.eval.sets},           {"trials", plan.eval.trials},
                  {"warmup", plan.eval.warmup},       {"iterations", plan.eval.iterations},
                  {"timeout_s", plan.eval.timeout_s}, {"memcheck", plan.eval.memcheck}};
  if (!plan.eval.service.empty())
    json["eval"]["service"] = plan.eval.service;
  if (!plan.eval.broker.empty())
    json["eval"]["broker"] = plan.eval.broker;
  for (const RepairTask& repair : plan.repairs)
    json["repairs"].push_back({{"id", repair.id},
                               {"problem", repair.problem},
                               {"variant", repair.variant},
                               {"kernel", repair.kernel},
                               {"error", repair.error}});
  if (!plan.notes.file.empty())
    json["repair_notes"] = {{"file", plan.notes.file.string()},
                            {"mode", plan.notes.mode},
                            {"top_k", plan.notes.top_k},
                            {"max_notes", plan.notes.max_notes},
                            {"min_similarity", plan.notes.min_similarity}};
  if (!plan.notes.definition_prefixes.empty())
    json["repair_notes"]["definition_prefixes"] = plan.notes.definition_prefixes;
  for (const auto& dir : plan.notes.held_out)
    json["repair_notes"]["held_out"].push_back(dir.string());
  if (!plan.guidance.file.empty()) {
    json["guidance"] = {{"file", plan.guidance.file.string()}};
    if (!plan.guidance.problems.empty())
      json["guidance"]["problems"] = plan.guidance.problems;
    if (!plan.guidance.sha256.empty())
      json["guidance"]["sha256"] = plan.guidance.sha256;
  }
  for (const Condition& condition : plan.conditions) {
    util::Json item{{"name", condition.name},
                    {"guidance", condition.guidance == Guidance::on},
                    {"retrieval", std::string(to_string(condition.retrieval))}};
    if (!condition.models.empty())
      item["models"] = condition.models;
    json["conditions"].push_back(std::move(item));
  }
  return json;
}

exec::EvalOptions eval_options(const RunPlan& plan) {
  exec::EvalOptions options;
  options.arch = plan.loop.arch;
  options.language = plan.loop.language;
  options.sets = plan.eval.sets;
  options.trials = plan.eval.trials;
  options.warmup = plan.eval.warmup;
  options.iterations = plan.eval.iterations;
  options.timeout = std::chrono::milliseconds(static_cast<long long>(plan.eval.timeout_s * 1000));
  options.sanitize = plan.eval.memcheck ? exec::Sanitize::memcheck : exec::Sanitize::off;
  return options;
}

util::Expected<std::vector<PlannedTrajectory>>
expand(const RunPlan& plan, const suite::Suite& suite, const pack::Manifest& manifest) {
  if (!plan.repairs.empty())
    return expand_repairs(plan, suite, manifest);
  PTXBENCH_TRY_ASSIGN(auto problems, problems_for(plan, suite));
  const std::vector<Condition> conditions = effective_conditions(plan);
  for (const Condition& condition : conditions) {
    if (condition.retrieval != Retrieval::none && plan.notes.file.empty())
      return util::make_error(util::ErrorKind::invalid_input,
                              "condition \"" + condition.name +
                                  "\" retrieves repair notes: name the corpus (the plan's "
                                  "repair_notes.file, or run --notes FILE)");
    if (condition.guidance == Guidance::on && plan.guidance.file.empty())
      return util::make_error(util::ErrorKind::invalid_input,
                              "condition \"" + condition.name +
                                  "\" gives guidance: name the file (the plan's guidance.file, "
                                  "or run --guidance FILE)");
  }
  std::vector<PlannedTrajectory> out;
  for (const std::string& model : plan.models)
    for (const suite::Problem* problem : problems) {
      PTXBENCH_TRY_ASSIGN(auto variants, variants_for(plan, *problem, manifest));
      for (const std::string& variant : variants) {
        std::int64_t sample = 0;
        for (const Condition& condition : conditions) {
          if (!condition.models.empty() &&
              std::ranges::find(condition.models, model) == condition.models.end())
            continue;
          for (int i = 0; i < plan.trajectories; ++i, ++sample) {
            store::TrajectoryKey key{model,
                                     problem->name(),
                                     variant,
                                     sample,
                                     compile::to_trace(plan.loop.language),
                                     condition.name};
            out.push_back({std::move(key), problem, variant, nullptr, condition,
                           guidance_applies(plan, condition, problem->name())});
          }
        }
      }
    }
  return out;
}

} // namespace ptxbench::agent
