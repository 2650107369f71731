#include "adapt/records.hpp"

#include "trace/json_io.hpp"
#include "util/fs.hpp"
#include "util/json_reader.hpp"
#include "util/strings.hpp"

#include <fmt/core.h>

namespace ptxbench::adapt {
namespace {

using util::Emptiness;
using util::JsonReader;
using util::key_path;

std::string record_text(JsonReader& in, const Json& json, const std::string& path,
                        std::string_view key) {
  return in.string(json, path, key, Emptiness::allowed);
}

// A member that must be present and may be null.
std::optional<double> nullable_record_number(JsonReader& in, const Json& json,
                                             const std::string& path, std::string_view key) {
  return in.required(json, path, key) ? in.nullable_number(json, path, key) : std::nullopt;
}

std::optional<bool> nullable_record_boolean(JsonReader& in, const Json& json,
                                            const std::string& path, std::string_view key) {
  return in.required(json, path, key) ? in.nullable_boolean(json, path, key) : std::nullopt;
}

// The functions below read a record at `path` of the line into `in`, which keeps the first
// problem; the public readers return in.finish(record).
void read_key(JsonReader& in, const Json& json, const std::string& path,
              store::TrajectoryKey& key) {
  if (!in.expect_object(json, path))
    return;
  key.model = record_text(in, json, path, "model");
  key.problem = record_text(in, json, path, "problem");
  key.prompt_variant = record_text(in, json, path, "prompt_variant");
  key.sample = in.integer(json, path, "sample");
  key.condition =
      in.optional_string(json, path, "condition", Emptiness::allowed).value_or(std::string());
  const std::optional<std::string> language =
      in.optional_string(json, path, "language", Emptiness::rejected);
  if (!language)
    return;
  const auto parsed = trace::parse_language(*language);
  if (!parsed)
    in.fail(key_path(path, "language"),
            "expected a candidate language such as \"cuda\" or \"triton\", got " +
                Json(*language).dump());
  key.language = parsed.value_or(key.language);
}

void read_key_member(JsonReader& in, const Json& json, const std::string& path,
                     std::string_view key, store::TrajectoryKey& out) {
  if (const Json* member = in.required(json, path, key))
    read_key(in, *member, key_path(path, key), out);
}

void read_failure(JsonReader& in, const Json& json, const std::string& path, FailureRecord& r) {
  if (!in.expect_object(json, path))
    return;
  r.id = record_text(in, json, path, "id");
  r.occurrences = in.integer(json, path, "occurrences");
  r.run_dir = record_text(in, json, path, "run_dir");
  read_key_member(in, json, path, "trajectory_key", r.trajectory_key);
  r.turn = in.integer(json, path, "turn");
  r.arch = record_text(in, json, path, "arch");
  r.category = record_text(in, json, path, "category");
  r.kernel_source = record_text(in, json, path, "kernel_source");
  r.feedback = record_text(in, json, path, "feedback");
  r.system_prompt = record_text(in, json, path, "system_prompt");
  r.task_prompt = record_text(in, json, path, "task_prompt");
}

template <typename T> Json optional_json(const std::optional<T>& value) {
  return value ? Json(*value) : Json(nullptr);
}

} // namespace

// "language" only for a non-CUDA key and "condition" only for a key with one, so other records
// read and write as before they existed.
Json to_json(const store::TrajectoryKey& key) {
  Json out{{"model", key.model},
           {"problem", key.problem},
           {"prompt_variant", key.prompt_variant},
           {"sample", key.sample}};
  if (key.language != trace::Language::cuda)
    out["language"] = trace::to_string(key.language);
  if (!key.condition.empty())
    out["condition"] = key.condition;
  return out;
}

Json to_json(const FailureRecord& r) {
  return Json{{"id", r.id},
              {"occurrences", r.occurrences},
              {"run_dir", r.run_dir},
              {"trajectory_key", to_json(r.trajectory_key)},
              {"turn", r.turn},
              {"arch", r.arch},
              {"category", r.category},
              {"kernel_source", r.kernel_source},
              {"feedback", r.feedback},
              {"system_prompt", r.system_prompt},
              {"task_prompt", r.task_prompt}};
}

Json to_json(const PairRecord& r) {
  return Json{{"id", r.id},
              {"failure", to_json(r.failure)},
              {"repaired_kernel", r.repaired_kernel},
              {"repair_run_dir", r.repair_run_dir},
              {"repair_trajectory_key", to_json(r.repair_trajectory_key)},
              {"repair_turn", r.repair_turn},
              {"speedup", optional_json(r.speedup)},
              {"target_executed", optional_json(r.target_executed)},
              {"teacher_model", r.teacher_model}};
}

Json to_json(const CorrectRecord& r) {
  return Json{{"id", r.id},
              {"run_dir", r.run_dir},
              {"trajectory_key", to_json(r.trajectory_key)},
              {"turn", r.turn},
              {"arch", r.arch},
              {"kernel_source", r.kernel_source},
              {"reply", r.reply},
              {"speedup", optional_json(r.speedup)},
              {"target_executed", optional_json(r.target_executed)},
              {"system_prompt", r.system_prompt},
              {"task_prompt", r.task_prompt}};
}

Json to_json(const RationaleRecord& r) {
  return Json{{"id", r.id},
              {"kind", r.kind},
              {"status", r.status},
              {"reasoning", r.reasoning},
              {"thinking", r.thinking},
              {"reasoning_model", r.reasoning_model},
              {"prompt_version", r.prompt_version},
              {"temperature", optional_json(r.temperature)},
              {"attempts", r.attempts},
              {"input_tokens", r.input_tokens},
              {"output_tokens", r.output_tokens},
              {"cost_usd", optional_json(r.cost_usd)},
              {"error", r.error}};
}

Json to_json(const RepairTask& t) {
  return Json{{"failure_id", t.failure_id}, {"trajectory_key", to_json(t.trajectory_key)}};
}

util::Expected<store::TrajectoryKey> trajectory_key_from_json(const Json& json) {
  store::TrajectoryKey key;
  JsonReader in("");
  read_key(in, json, "$", key);
  return in.finish(std::move(key));
}

util::Expected<FailureRecord> failure_from_json(const Json& json) {
  FailureRecord r;
  JsonReader in("");
  read_failure(in, json, "$", r);
  return in.finish(std::move(r));
}

util::Expected<PairRecord> pair_from_json(const Json& json) {
  PairRecord r;
  JsonReader in("");
  if (!in.expect_object(json, "$"))
    return in.finish(std::move(r));
  r.id = record_text(in, json, "$", "id");
  if (const Json* failure = in.required(json, "$", "failure"))
    read_failure(in, *failure, "$.failure", r.failure);
  r.repaired_kernel = record_text(in, json, "$", "repaired_kernel");
  r.repair_run_dir = record_text(in, json, "$", "repair_run_dir");
  read_key_member(in, json, "$", "repair_trajectory_key", r.repair_trajectory_key);
  r.repair_turn = in.integer(json, "$", "repair_turn");
  r.speedup = nullable_record_number(in, json, "$", "speedup");
  r.target_executed = nullable_record_boolean(in, json, "$", "target_executed");
  r.teacher_model = record_text(in, json, "$", "teacher_model");
  return in.finish(std::move(r));
}

util::Expected<CorrectRecord> correct_from_json(const Json& json) {
  CorrectRecord r;
  JsonReader in("");
  if (!in.expect_object(json, "$"))
    return in.finish(std::move(r));
  r.id = record_text(in, json, "$", "id");
  r.run_dir = record_text(in, json, "$", "run_dir");
  read_key_member(in, json, "$", "trajectory_key", r.trajectory_key);
  r.turn = in.integer(json, "$", "turn");
  r.arch = record_text(in, json, "$", "arch");
  r.kernel_source = record_text(in, json, "$", "kernel_source");
  r.reply = record_text(in, json, "$", "reply");
  r.speedup = nullable_record_number(in, json, "$", "speedup");
  r.target_executed = nullable_record_boolean(in, json, "$", "target_executed");
  r.system_prompt = record_text(in, json, "$", "system_prompt");
  r.task_prompt = record_text(in, json, "$", "task_prompt");
  return in.finish(std::move(r));
}

util::Expected<RationaleRecord> rationale_from_json(const Json& json) {
  RationaleRecord r;
  JsonReader in("");
  if (!in.expect_object(json, "$"))
    return in.finish(std::move(r));
  r.id = record_text(in, json, "$", "id");
  r.kind = record_text(in, json, "$", "kind");
  r.status = record_text(in, json, "$", "status");
  r.reasoning = record_text(in, json, "$", "reasoning");
  r.thinking = record_text(in, json, "$", "thinking");
  r.reasoning_model = record_text(in, json, "$", "reasoning_model");
  r.prompt_version = record_text(in, json, "$", "prompt_version");
  r.temperature = nullable_record_number(in, json, "$", "temperature");
  r.attempts = in.integer(json, "$", "attempts");
  r.input_tokens = in.integer(json, "$", "input_tokens");
  r.output_tokens = in.integer(json, "$", "output_tokens");
  r.cost_usd = nullable_record_number(in, json, "$", "cost_usd");
  r.error = record_text(in, json, "$", "error");
  return in.finish(std::move(r));
}

util::Expected<RepairTask> repair_task_from_json(const Json& json) {
  RepairTask t;
  JsonReader in("");
  if (!in.expect_object(json, "$"))
    return in.finish(std::move(t));
  t.failure_id = record_text(in, json, "$", "failure_id");
  read_key_member(in, json, "$", "trajectory_key", t.trajectory_key);
  return in.finish(std::move(t));
}

} // namespace ptxbench::adapt
