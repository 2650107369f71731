// Workload and Trace <-> JSON (§1.3, §1.5). An InputSpec's `type` may be absent (upstream's
// defaults make `{}` random and `{"value": 3}` scalar; a path or tensor_key makes it
// safetensors); we always write it. The legacy `seed` key and unknown keys are ignored; the
// fork's `outputs` map of stored reference outputs is read and written back when present.
// Checks against the definition live in validate_workload, since a Workload alone does not
// know its definition.
#include "trace/json_io.hpp"
#include "trace/json_reading.hpp"

namespace ptxbench::trace {
namespace {

SafetensorsInput read_safetensors(JsonReader& reader, const Json& json, const std::string& path) {
  SafetensorsInput blob;
  blob.path = reader.string(json, path, "path", Emptiness::rejected);
  blob.tensor_key = reader.string(json, path, "tensor_key", Emptiness::rejected);
  return blob;
}

ScalarInput read_scalar(JsonReader& reader, const Json& json, const std::string& path) {
  ScalarInput scalar{std::int64_t{0}};
  const Json* value = reader.required(json, path, "value");
  if (!value)
    return scalar;
  if (value->is_boolean())
    scalar.value = value->get<bool>();
  else if (value->is_number_float())
    scalar.value = value->get<double>();
  else if (value->is_number())
    scalar.value = reader.integer_at(*value, key_path(path, "value"));
  else
    reader.fail(key_path(path, "value"), "expected a number or a boolean");
  return scalar;
}

std::string implied_input_type(const Json& json) {
  if (json.contains("path") || json.contains("tensor_key"))
    return "safetensors";
  return json.contains("value") ? "scalar" : "random";
}

InputSpec read_input(JsonReader& reader, const Json& json, const std::string& path) {
  if (!reader.expect_object(json, path))
    return RandomInput{};
  const Json* type_json = JsonReader::optional(json, "type");
  std::string type = type_json
                         ? reader.string_at(*type_json, key_path(path, "type"), Emptiness::allowed)
                         : implied_input_type(json);
  if (type == "random")
    return RandomInput{};
  if (type == "scalar")
    return read_scalar(reader, json, path);
  if (type == "safetensors")
    return read_safetensors(reader, json, path);
  reader.fail(key_path(path, "type"), "unknown input type \"" + type + "\"");
  return RandomInput{};
}

std::vector<std::pair<std::string, std::int64_t>> read_axis_values(JsonReader& reader,
                                                                   const Json& json) {
  std::vector<std::pair<std::string, std::int64_t>> axes;
  const Json* map = reader.object_member(json, "$", "axes");
  if (!map)
    return axes;
  for (const auto& [name, value] : map->items()) {
    std::int64_t size = reader.integer_at(value, key_path("$.axes", name));
    if (size < 0)
      reader.fail(key_path("$.axes", name), "must be >= 0");
    axes.emplace_back(name, size);
  }
  return axes;
}

void read_outputs(JsonReader& reader, const Json& json, Workload& workload) {
  const Json* map = JsonReader::optional(json, "outputs");
  if (!map || map->is_null() || !reader.expect_object(*map, "$.outputs"))
    return;
  workload.outputs.emplace();
  for (const auto& [name, member] : map->items()) {
    std::string path = key_path("$.outputs", name);
    if (reader.expect_object(member, path))
      workload.outputs->emplace_back(name, read_safetensors(reader, member, path));
  }
}

Workload read_workload(JsonReader& reader, const Json& json) {
  Workload workload;
  if (!reader.expect_object(json, "$"))
    return workload;
  workload.axes = read_axis_values(reader, json);
  if (const Json* inputs = reader.object_member(json, "$", "inputs"))
    for (const auto& [name, member] : inputs->items())
      workload.inputs.emplace_back(name, read_input(reader, member, key_path("$.inputs", name)));
  workload.uuid = reader.string(json, "$", "uuid", Emptiness::rejected);
  read_outputs(reader, json, workload);
  return workload;
}

Json safetensors_json(const SafetensorsInput& blob) {
  return Json{{"type", "safetensors"}, {"path", blob.path}, {"tensor_key", blob.tensor_key}};
}

Json input_json(const InputSpec& spec) {
  if (const auto* blob = std::get_if<SafetensorsInput>(&spec))
    return safetensors_json(*blob);
  const auto* scalar = std::get_if<ScalarInput>(&spec);
  if (!scalar)
    return Json{{"type", "random"}};
  Json value = std::visit([](auto v) { return Json(v); }, scalar->value);
  return Json{{"type", "scalar"}, {"value", std::move(value)}};
}

// Re-roots the path of a nested reader's error under `prefix` (e.g. "$.workload").
util::Error nest(util::Error error, const std::string& origin, const std::string& prefix) {
  std::string head = origin + ": $";
  if (error.message.starts_with(head))
    error.message.insert(head.size(), prefix);
  return error;
}

void check_axis_values(JsonReader& reader, const Workload& workload, const Definition& def) {
  for (const Axis& axis : def.axes) {
    if (axis.kind != Axis::Kind::variable)
      continue;
    auto value = workload.axis_value(axis.name);
    if (!value)
      reader.fail("$.workload.axes", "missing var axis \"" + axis.name + "\"");
    else if (*value <= 0)
      reader.fail(key_path("$.workload.axes", axis.name), "must be > 0");
  }
  for (const auto& [name, value] : workload.axes) {
    const Axis* axis = def.find_axis(name);
    if (!axis || axis->kind != Axis::Kind::variable)
      reader.fail(key_path("$.workload.axes", name), "\"" + name + "\" is not a var axis");
  }
}

void check_input_names(JsonReader& reader, const Workload& workload, const Definition& def) {
  for (const TensorSpec& input : def.inputs) {
    bool given = false;
    for (const auto& entry : workload.inputs)
      given = given || entry.first == input.name;
    if (!given)
      reader.fail("$.workload.inputs", "missing input \"" + input.name + "\"");
  }
  for (const auto& [name, spec] : workload.inputs)
    if (!def.find_input(name))
      reader.fail(key_path("$.workload.inputs", name), "\"" + name + "\" is not an input");
}

} // namespace

util::Expected<Workload> workload_from_json(const Json& json, const std::string& origin) {
  JsonReader reader(origin);
  Workload workload = read_workload(reader, json);
  return reader.finish(std::move(workload));
}

Json to_json(const Workload& workload) {
  Json json = Json::object();
  json["axes"] = Json::object();
  for (const auto& [name, value] : workload.axes)
    json["axes"][name] = value;
  json["inputs"] = Json::object();
  for (const auto& [name, spec] : workload.inputs)
    json["inputs"][name] = input_json(spec);
  json["uuid"] = workload.uuid;
  if (workload.outputs) {
    json["outputs"] = Json::object();
    for (const auto& [name, blob] : *workload.outputs)
      json["outputs"][name] = safetensors_json(blob);
  }
  return json;
}

util::Expected<Trace> trace_from_json(const Json& json, const std::string& origin) {
  JsonReader reader(origin);
  Trace trace;
  if (!reader.expect_object(json, "$"))
    return reader.finish(std::move(trace));
  trace.definition = reader.string(json, "$", "definition", Emptiness::rejected);
  trace.solution = reader.nullable_string(json, "$", "solution");
  if (trace.solution && trace.solution->empty())
    reader.fail("$.solution", "must not be empty");
  const Json* workload = reader.required(json, "$", "workload");
  if (!reader.ok())
    return reader.finish(std::move(trace));
  auto read = workload_from_json(*workload, origin);
  if (!read)
    return nest(read.take_error(), origin, ".workload");
  trace.workload = std::move(*read);
  const Json* evaluation = JsonReader::optional(json, "evaluation");
  if (!evaluation || evaluation->is_null())
    return trace;
  auto evaluated = evaluation_from_json(*evaluation, origin);
  if (!evaluated)
    return nest(evaluated.take_error(), origin, ".evaluation");
  trace.evaluation = std::move(*evaluated);
  return trace;
}

Json to_json(const Trace& trace) {
  Json json = Json::object();
  json["definition"] = trace.definition;
  json["workload"] = to_json(trace.workload);
  json["solution"] = trace.solution ? Json(*trace.solution) : Json(nullptr);
  json["evaluation"] = trace.evaluation ? to_json(*trace.evaluation) : Json(nullptr);
  return json;
}

util::Status validate_workload(const Workload& workload, const Definition& def,
                               const std::string& origin) {
  JsonReader reader(origin);
  check_axis_values(reader, workload, def);
  check_input_names(reader, workload, def);
  return reader.finish(util::Ok{});
}

} // namespace ptxbench::trace
