#include "adapt/records.hpp"

#include "trace/json_io.hpp"
#include "util/fs.hpp"
#include "util/strings.hpp"

#include <fmt/core.h>

namespace ptxbench::adapt {
namespace {

// Reads fields into a record, keeping the first problem found; later reads are no-ops.
class FieldReader {
public:
  explicit FieldReader(const Json& json) : m_json(json) {
    if (!json.is_object())
      m_problem = "expected a JSON object";
  }

  void text(const char* key, std::string& out) { read(key, "a string", out, &Json::is_string); }
  void integer(const char* key, std::int64_t& out) {
    read(key, "an integer", out, &Json::is_number_integer);
  }
  void number(const char* key, std::optional<double>& out) {
    optional(key, "a number or null", out, &Json::is_number);
  }
  void boolean(const char* key, std::optional<bool>& out) {
    optional(key, "true, false or null", out, &Json::is_boolean);
  }
  void key(const char* name, store::TrajectoryKey& out) {
    const Json* value = find(name);
    if (value == nullptr)
      return;
    auto parsed = trajectory_key_from_json(*value);
    if (!parsed)
      return fail(fmt::format("{}: {}", name, parsed.error().message));
    out = std::move(*parsed);
  }
  void failure(const char* name, FailureRecord& out) {
    const Json* value = find(name);
    if (value == nullptr)
      return;
    auto parsed = failure_from_json(*value);
    if (!parsed)
      return fail(fmt::format("{}: {}", name, parsed.error().message));
    out = std::move(*parsed);
  }

  template <typename T> util::Expected<T> finish(T record) const {
    if (m_problem.empty())
      return record;
    return util::make_error(util::ErrorKind::invalid_input, m_problem);
  }

private:
  const Json* find(const char* key) {
    if (!m_problem.empty())
      return nullptr;
    auto it = m_json.find(key);
    if (it == m_json.end()) {
      fail(fmt::format("missing field \"{}\"", key));
      return nullptr;
    }
    return &*it;
  }
  template <typename T>
  void read(const char* key, const char* what, T& out, bool (Json::*is)() const noexcept) {
    const Json* value = find(key);
    if (value == nullptr)
      return;
    if (!((*value).*is)())
      return fail(fmt::format("field \"{}\" must be {}", key, what));
    out = value->get<T>();
  }
  template <typename T>
  void optional(const char* key, const char* what, std::optional<T>& out,
                bool (Json::*is)() const noexcept) {
    const Json* value = find(key);
    if (value == nullptr)
      return;
    if (value->is_null()) {
      out.reset();
      return;
    }
    if (!((*value).*is)())
      return fail(fmt::format("field \"{}\" must be {}", key, what));
    out = value->get<T>();
  }
  void fail(std::string problem) {
    if (m_problem.empty())
      m_problem = std::move(problem);
  }

  const Json& m_json;
  std::string m_problem;
};

template <typename T> Json optional_json(const std::optional<T>& value) {
  return value ? Json(*value) : Json(nullptr);
}

} // namespace

// "language" only for a non-CUDA key, so CUDA records read and write as before it existed.
Json to_json(const store::TrajectoryKey& key) {
  Json out{{"model", key.model},
           {"problem", key.problem},
           {"prompt_variant", key.prompt_variant},
           {"sample", key.sample}};
  if (key.language != trace::Language::cuda)
    out["language"] = trace::to_string(key.language);
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
  FieldReader in(json);
  in.text("model", key.model);
  in.text("problem", key.problem);
  in.text("prompt_variant", key.prompt_variant);
  in.integer("sample", key.sample);
  if (const auto it = json.find("language"); it != json.end()) {
    const auto language =
        it->is_string() ? trace::parse_language(it->get<std::string>()) : std::nullopt;
    if (!language)
      return util::make_error(util::ErrorKind::invalid_input,
                              "trajectory_key.language: expected a candidate language such as "
                              "\"cuda\" or \"triton\"");
    key.language = *language;
  }
  return in.finish(std::move(key));
}

util::Expected<FailureRecord> failure_from_json(const Json& json) {
  FailureRecord r;
  FieldReader in(json);
  in.text("id", r.id);
  in.integer("occurrences", r.occurrences);
  in.text("run_dir", r.run_dir);
  in.key("trajectory_key", r.trajectory_key);
  in.integer("turn", r.turn);
  in.text("arch", r.arch);
  in.text("category", r.category);
  in.text("kernel_source", r.kernel_source);
  in.text("feedback", r.feedback);
  in.text("system_prompt", r.system_prompt);
  in.text("task_prompt", r.task_prompt);
  return in.finish(std::move(r));
}

util::Expected<PairRecord> pair_from_json(const Json& json) {
  PairRecord r;
  FieldReader in(json);
  in.text("id", r.id);
  in.failure("failure", r.failure);
  in.text("repaired_kernel", r.repaired_kernel);
  in.text("repair_run_dir", r.repair_run_dir);
  in.key("repair_trajectory_key", r.repair_trajectory_key);
  in.integer("repair_turn", r.repair_turn);
  in.number("speedup", r.speedup);
  in.boolean("target_executed", r.target_executed);
  in.text("teacher_model", r.teacher_model);
  return in.finish(std::move(r));
}

util::Expected<CorrectRecord> correct_from_json(const Json& json) {
  CorrectRecord r;
  FieldReader in(json);
  in.text("id", r.id);
  in.text("run_dir", r.run_dir);
  in.key("trajectory_key", r.trajectory_key);
  in.integer("turn", r.turn);
  in.text("arch", r.arch);
  in.text("kernel_source", r.kernel_source);
  in.text("reply", r.reply);
  in.number("speedup", r.speedup);
  in.boolean("target_executed", r.target_executed);
  in.text("system_prompt", r.system_prompt);
  in.text("task_prompt", r.task_prompt);
  return in.finish(std::move(r));
}

util::Expected<RationaleRecord> rationale_from_json(const Json& json) {
  RationaleRecord r;
  FieldReader in(json);
  in.text("id", r.id);
  in.text("kind", r.kind);
  in.text("status", r.status);
  in.text("reasoning", r.reasoning);
  in.text("thinking", r.thinking);
  in.text("reasoning_model", r.reasoning_model);
  in.text("prompt_version", r.prompt_version);
  in.number("temperature", r.temperature);
  in.integer("attempts", r.attempts);
  in.integer("input_tokens", r.input_tokens);
  in.integer("output_tokens", r.output_tokens);
  in.number("cost_usd", r.cost_usd);
  in.text("error", r.error);
  return in.finish(std::move(r));
}

util::Expected<RepairTask> repair_task_from_json(const Json& json) {
  RepairTask t;
  FieldReader in(json);
  in.text("failure_id", t.failure_id);
  in.key("trajectory_key", t.trajectory_key);
  return in.finish(std::move(t));
}

} // namespace ptxbench::adapt
