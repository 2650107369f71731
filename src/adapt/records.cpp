#include "adapt/records.hpp"

#include <functional>

namespace ptxbench::adapt {
namespace {

Json optional_number(const std::optional<double>& value) {
  return value ? Json(*value) : Json(nullptr);
}

Json optional_bool(const std::optional<bool>& value) {
  return value ? Json(*value) : Json(nullptr);
}

// Reads the fields of one record object, keeping the first error ("record: field: what").
class Reader {
public:
  Reader(const Json& json, std::string_view what) : m_json(json), m_what(what) {
    if (!json.is_object())
      fail("", "expected a JSON object");
  }

  void text(const char* key, std::string& out) {
    if (const Json* value = find(key, "a string"); value != nullptr)
      value->is_string() ? void(out = value->get<std::string>()) : fail(key, "expected a string");
  }
  void integer(const char* key, std::int64_t& out) {
    if (const Json* value = find(key, "an integer"); value != nullptr)
      value->is_number_integer() ? void(out = value->get<std::int64_t>())
                                 : fail(key, "expected an integer");
  }
  void number_or_null(const char* key, std::optional<double>& out) {
    auto it = m_json.find(key);
    if (it == m_json.end() || it->is_null())
      return out.reset();
    it->is_number() ? void(out = it->get<double>()) : fail(key, "expected a number or null");
  }
  void bool_or_null(const char* key, std::optional<bool>& out) {
    auto it = m_json.find(key);
    if (it == m_json.end() || it->is_null())
      return out.reset();
    it->is_boolean() ? void(out = it->get<bool>()) : fail(key, "expected true, false or null");
  }
  template <class T>
  void object(const char* key, T& out, const std::function<util::Expected<T>(const Json&)>& read) {
    const Json* value = find(key, "an object");
    if (value == nullptr)
      return;
    auto parsed = read(*value);
    parsed ? void(out = std::move(*parsed)) : fail(key, parsed.error().message);
  }

  template <class T> util::Expected<T> result(T value) const {
    if (m_error)
      return *m_error;
    return value;
  }

private:
  const Json* find(const char* key, std::string_view expected) {
    if (m_error || !m_json.is_object())
      return nullptr;
    auto it = m_json.find(key);
    if (it == m_json.end()) {
      fail(key, "missing (expected " + std::string(expected) + ")");
      return nullptr;
    }
    return &*it;
  }
  void fail(std::string_view key, const std::string& what) {
    if (!m_error)
      m_error = util::make_error(util::ErrorKind::invalid_input,
                                 m_what + (key.empty() ? "" : "." + std::string(key)) + ": " +
                                     what);
  }

  const Json& m_json;
  std::string m_what;
  std::optional<util::Error> m_error;
};

} // namespace

Json to_json(const store::TrajectoryKey& key) {
  return {{"model", key.model},
          {"problem", key.problem},
          {"prompt_variant", key.prompt_variant},
          {"sample", key.sample}};
}

Json to_json(const FailureRecord& r) {
  return {{"id", r.id},
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
  return {{"id", r.id},
          {"failure", to_json(r.failure)},
          {"repaired_kernel", r.repaired_kernel},
          {"repair_run_dir", r.repair_run_dir},
          {"repair_trajectory_key", to_json(r.repair_trajectory_key)},
          {"repair_turn", r.repair_turn},
          {"speedup", optional_number(r.speedup)},
          {"target_executed", optional_bool(r.target_executed)},
          {"teacher_model", r.teacher_model}};
}

Json to_json(const CorrectRecord& r) {
  return {{"id", r.id},
          {"run_dir", r.run_dir},
          {"trajectory_key", to_json(r.trajectory_key)},
          {"turn", r.turn},
          {"arch", r.arch},
          {"kernel_source", r.kernel_source},
          {"reply", r.reply},
          {"speedup", optional_number(r.speedup)},
          {"target_executed", optional_bool(r.target_executed)},
          {"system_prompt", r.system_prompt},
          {"task_prompt", r.task_prompt}};
}

Json to_json(const RationaleRecord& r) {
  return {{"id", r.id},
          {"kind", r.kind},
          {"status", r.status},
          {"reasoning", r.reasoning},
          {"thinking", r.thinking},
          {"reasoning_model", r.reasoning_model},
          {"prompt_version", r.prompt_version},
          {"temperature", optional_number(r.temperature)},
          {"attempts", r.attempts},
          {"input_tokens", r.input_tokens},
          {"output_tokens", r.output_tokens},
          {"cost_usd", optional_number(r.cost_usd)},
          {"error", r.error}};
}

util::Expected<store::TrajectoryKey> trajectory_key_from_json(const Json& json) {
  Reader f(json, "trajectory_key");
  store::TrajectoryKey key;
  f.text("model", key.model);
  f.text("problem", key.problem);
  f.text("prompt_variant", key.prompt_variant);
  f.integer("sample", key.sample);
  return f.result(std::move(key));
}

util::Expected<FailureRecord> failure_from_json(const Json& json) {
  Reader f(json, "FailureRecord");
  FailureRecord r;
  f.text("id", r.id);
  f.integer("occurrences", r.occurrences);
  f.text("run_dir", r.run_dir);
  f.object<store::TrajectoryKey>("trajectory_key", r.trajectory_key, trajectory_key_from_json);
  f.integer("turn", r.turn);
  f.text("arch", r.arch);
  f.text("category", r.category);
  f.text("kernel_source", r.kernel_source);
  f.text("feedback", r.feedback);
  f.text("system_prompt", r.system_prompt);
  f.text("task_prompt", r.task_prompt);
  return f.result(std::move(r));
}

util::Expected<PairRecord> pair_from_json(const Json& json) {
  Reader f(json, "PairRecord");
  PairRecord r;
  f.text("id", r.id);
  f.object<FailureRecord>("failure", r.failure, failure_from_json);
  f.text("repaired_kernel", r.repaired_kernel);
  f.text("repair_run_dir", r.repair_run_dir);
  f.object<store::TrajectoryKey>("repair_trajectory_key", r.repair_trajectory_key,
                                 trajectory_key_from_json);
  f.integer("repair_turn", r.repair_turn);
  f.number_or_null("speedup", r.speedup);
  f.bool_or_null("target_executed", r.target_executed);
  f.text("teacher_model", r.teacher_model);
  return f.result(std::move(r));
}

util::Expected<CorrectRecord> correct_from_json(const Json& json) {
  Reader f(json, "CorrectRecord");
  CorrectRecord r;
  f.text("id", r.id);
  f.text("run_dir", r.run_dir);
  f.object<store::TrajectoryKey>("trajectory_key", r.trajectory_key, trajectory_key_from_json);
  f.integer("turn", r.turn);
  f.text("arch", r.arch);
  f.text("kernel_source", r.kernel_source);
  f.text("reply", r.reply);
  f.number_or_null("speedup", r.speedup);
  f.bool_or_null("target_executed", r.target_executed);
  f.text("system_prompt", r.system_prompt);
  f.text("task_prompt", r.task_prompt);
  return f.result(std::move(r));
}

util::Expected<RationaleRecord> rationale_from_json(const Json& json) {
  Reader f(json, "RationaleRecord");
  RationaleRecord r;
  f.text("id", r.id);
  f.text("kind", r.kind);
  f.text("status", r.status);
  f.text("reasoning", r.reasoning);
  f.text("thinking", r.thinking);
  f.text("reasoning_model", r.reasoning_model);
  f.text("prompt_version", r.prompt_version);
  f.number_or_null("temperature", r.temperature);
  f.integer("attempts", r.attempts);
  f.integer("input_tokens", r.input_tokens);
  f.integer("output_tokens", r.output_tokens);
  f.number_or_null("cost_usd", r.cost_usd);
  f.text("error", r.error);
  return f.result(std::move(r));
}

} // namespace ptxbench::adapt
