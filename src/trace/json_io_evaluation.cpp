// Evaluation <-> JSON (§1.5).
//
// Correctness errors may be NaN or +Infinity: they are written as the strings "NaN" and
// "Infinity" and read from numbers, from those strings in any case ("nan", "inf", "infinity",
// with an optional sign) and from bare tokens (turned into strings by parse_json_text).
// Performance fields must be finite and >= 0, on read and on write. The presence table —
// PASSED needs correctness and performance, INCORRECT_NUMERICAL needs correctness and no
// performance, every other status neither — is checked on read and enforced on write. Our
// `ptxbench` extras object goes after the standard keys; other readers drop it.
#include "trace/json_io.hpp"
#include "trace/json_reading.hpp"
#include "util/json_number.hpp"

#include <cmath>

namespace ptxbench::trace {
namespace {

double read_error_value(JsonReader& reader, const Json& json, const std::string& path,
                        std::string_view key) {
  const Json* member = JsonReader::optional(json, key);
  if (!member)
    return 0.0;
  std::string at = key_path(path, key);
  double value = reader.number_or_nonfinite_at(*member, at, util::NonFiniteSpelling::any_case);
  if (value < 0)
    reader.fail(at, "must be >= 0 or NaN");
  return value;
}

Correctness read_correctness(JsonReader& reader, const Json& json, const std::string& path) {
  Correctness correctness;
  if (!reader.expect_object(json, path))
    return correctness;
  correctness.max_relative_error = read_error_value(reader, json, path, "max_relative_error");
  correctness.max_absolute_error = read_error_value(reader, json, path, "max_absolute_error");
  const Json* extra = JsonReader::optional(json, "extra");
  if (extra && !extra->is_null()) {
    if (reader.expect_object(*extra, key_path(path, "extra")))
      correctness.extra = *extra;
  }
  return correctness;
}

double read_latency(JsonReader& reader, const Json& json, const std::string& path,
                    std::string_view key) {
  const Json* member = JsonReader::optional(json, key);
  if (!member)
    return 0.0;
  double value = reader.number_at(*member, key_path(path, key));
  if (!std::isfinite(value) || value < 0)
    reader.fail(key_path(path, key), "must be a finite number >= 0");
  return value;
}

Performance read_performance(JsonReader& reader, const Json& json, const std::string& path) {
  Performance performance;
  if (!reader.expect_object(json, path))
    return performance;
  performance.latency_ms = read_latency(reader, json, path, "latency_ms");
  performance.reference_latency_ms = read_latency(reader, json, path, "reference_latency_ms");
  performance.speedup_factor = read_latency(reader, json, path, "speedup_factor");
  return performance;
}

Environment read_environment(JsonReader& reader, const Json& json) {
  Environment environment;
  const Json* object = reader.object_member(json, "$", "environment");
  if (!object)
    return environment;
  environment.hardware = reader.string(*object, "$.environment", "hardware", Emptiness::rejected);
  const Json* libs = JsonReader::optional(*object, "libs");
  if (!libs || libs->is_null() || !reader.expect_object(*libs, "$.environment.libs"))
    return environment;
  for (const auto& [name, version] : libs->items())
    environment.libs.emplace_back(
        name, reader.string_at(version, key_path("$.environment.libs", name), Emptiness::allowed));
  return environment;
}

// The presence table, as the first violation in words (empty if none).
std::string presence_violation(const Evaluation& evaluation) {
  bool passed = evaluation.status == EvaluationStatus::passed;
  bool numerical = evaluation.status == EvaluationStatus::incorrect_numerical;
  std::string status(to_string(evaluation.status));
  if ((passed || numerical) && !evaluation.correctness)
    return "status " + status + " requires correctness";
  if (passed && !evaluation.performance)
    return "status PASSED requires performance";
  if (!passed && evaluation.performance)
    return "status " + status + " must have null performance";
  if (!passed && !numerical && evaluation.correctness)
    return "status " + status + " must have null correctness";
  return {};
}

void read_status(JsonReader& reader, const Json& json, Evaluation& evaluation) {
  std::string status = reader.string(json, "$", "status", Emptiness::allowed);
  if (auto parsed = parse_status(status))
    evaluation.status = *parsed;
  else if (reader.ok())
    reader.fail("$.status", "unknown status \"" + status + "\"");
}

Json correctness_json(const Correctness& correctness) {
  Json json = Json::object();
  json["max_relative_error"] = util::number_json(correctness.max_relative_error);
  json["max_absolute_error"] = util::number_json(correctness.max_absolute_error);
  json["extra"] = correctness.extra ? *correctness.extra : Json(nullptr);
  return json;
}

Json performance_json(const Performance& performance) {
  Json json = Json::object();
  json["latency_ms"] = performance.latency_ms;
  json["reference_latency_ms"] = performance.reference_latency_ms;
  json["speedup_factor"] = performance.speedup_factor;
  return json;
}

Json environment_json(const Environment& environment) {
  Json json = Json::object();
  json["hardware"] = environment.hardware;
  json["libs"] = Json::object();
  for (const auto& [name, version] : environment.libs)
    json["libs"][name] = version;
  return json;
}

bool valid_error_value(double value) {
  return std::isnan(value) || value >= 0;
}

bool valid_latency(double value) {
  return std::isfinite(value) && value >= 0;
}

void read_evaluation(JsonReader& reader, const Json& json, Evaluation& evaluation) {
  read_status(reader, json, evaluation);
  evaluation.environment = read_environment(reader, json);
  evaluation.timestamp = reader.string(json, "$", "timestamp", Emptiness::rejected);
  if (const Json* log = JsonReader::optional(json, "log"))
    evaluation.log = reader.string_at(*log, "$.log", Emptiness::allowed);
  const Json* correctness = JsonReader::optional(json, "correctness");
  if (correctness && !correctness->is_null())
    evaluation.correctness = read_correctness(reader, *correctness, "$.correctness");
  const Json* performance = JsonReader::optional(json, "performance");
  if (performance && !performance->is_null())
    evaluation.performance = read_performance(reader, *performance, "$.performance");
  const Json* extras = JsonReader::optional(json, "ptxbench");
  if (extras && !extras->is_null())
    evaluation.ptxbench = *extras;
}

void check_presence(JsonReader& reader, const Evaluation& evaluation) {
  if (std::string violation = presence_violation(evaluation); !violation.empty())
    reader.fail("$", violation);
}

} // namespace

util::Expected<Evaluation> evaluation_from_json(const Json& document, const std::string& origin) {
  return JsonReader::read_root<Evaluation>(document, origin, read_evaluation, check_presence);
}

util::Status check_writable(const Evaluation& evaluation) {
  auto invalid = [](const std::string& what) {
    return util::make_error(util::ErrorKind::invalid_input, "evaluation: " + what);
  };
  if (std::string violation = presence_violation(evaluation); !violation.empty())
    return invalid(violation);
  if (evaluation.environment.hardware.empty())
    return invalid("empty environment.hardware");
  if (evaluation.timestamp.empty())
    return invalid("empty timestamp");
  const auto& c = evaluation.correctness;
  if (c && !(valid_error_value(c->max_relative_error) && valid_error_value(c->max_absolute_error)))
    return invalid("correctness errors must be >= 0, NaN or +Infinity");
  const auto& p = evaluation.performance;
  if (p && !(valid_latency(p->latency_ms) && valid_latency(p->reference_latency_ms) &&
             valid_latency(p->speedup_factor)))
    return invalid("performance values must be finite and >= 0");
  return util::Ok{};
}

Json to_json(const Evaluation& evaluation) {
  if (auto writable = check_writable(evaluation); !writable)
    throw util::Fatal(writable.error().message);
  Json json = Json::object();
  json["status"] = to_string(evaluation.status);
  json["environment"] = environment_json(evaluation.environment);
  json["timestamp"] = evaluation.timestamp;
  json["log"] = evaluation.log;
  json["correctness"] =
      evaluation.correctness ? correctness_json(*evaluation.correctness) : Json(nullptr);
  json["performance"] =
      evaluation.performance ? performance_json(*evaluation.performance) : Json(nullptr);
  if (evaluation.ptxbench)
    json["ptxbench"] = *evaluation.ptxbench;
  return json;
}

} // namespace ptxbench::trace
