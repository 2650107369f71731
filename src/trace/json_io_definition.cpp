// Definition <-> JSON (§1.2). Axes, inputs and outputs keep file order: it is the calling
// convention. Read-side checks: non-empty names, known dtypes and axis kinds, shape names that
// are axes, output names distinct from input names, a reference with a top-level `def run`.
// The reference is not parsed as Python and constraints are stored verbatim (§1.8).
#include "trace/json_io.hpp"
#include "trace/json_reading.hpp"

namespace ptxbench::trace {
namespace {

Axis read_axis(JsonReader& reader, const Json& json, const std::string& path) {
  Axis axis;
  if (!reader.expect_object(json, path))
    return axis;
  const Json* type = JsonReader::optional(json, "type");
  std::string kind = type ? reader.string_at(*type, key_path(path, "type"), Emptiness::allowed)
                          : std::string("const");
  axis.description = reader.nullable_string(json, path, "description");
  if (kind == "var") {
    axis.kind = Axis::Kind::variable;
  } else if (kind == "const") {
    axis.kind = Axis::Kind::constant;
    if (const Json* value = reader.required(json, path, "value"))
      axis.value = reader.integer_at(*value, key_path(path, "value"));
    if (axis.value < 0)
      reader.fail(key_path(path, "value"), "must be >= 0");
  } else if (reader.ok()) {
    reader.fail(key_path(path, "type"), "unknown axis type \"" + kind + "\"");
  }
  return axis;
}

std::optional<std::vector<std::string>> read_shape(JsonReader& reader, const Json& json,
                                                   const std::string& path) {
  const Json* shape = reader.required(json, path, "shape");
  if (!shape || shape->is_null())
    return std::nullopt;
  std::string shape_path = key_path(path, "shape");
  if (!shape->is_array()) {
    reader.fail(shape_path, "expected an array of axis names or null");
    return std::nullopt;
  }
  std::vector<std::string> names;
  for (std::size_t i = 0; i < shape->size(); ++i)
    names.push_back(reader.string_at((*shape)[i], index_path(shape_path, i), Emptiness::rejected));
  return names;
}

TensorSpec read_tensor(JsonReader& reader, const Json& json, const std::string& path) {
  TensorSpec spec;
  if (!reader.expect_object(json, path))
    return spec;
  spec.shape = read_shape(reader, json, path);
  std::string dtype = reader.string(json, path, "dtype", Emptiness::allowed);
  if (auto parsed = parse_dtype(dtype))
    spec.dtype = *parsed;
  else if (reader.ok())
    reader.fail(key_path(path, "dtype"), "unknown dtype \"" + dtype + "\"");
  spec.description = reader.nullable_string(json, path, "description");
  return spec;
}

// The members of the object at `key`, each read by `read_one` and named by its key; an empty key
// is an error naming `what`.
template <typename T, typename ReadOne>
std::vector<T> read_named(JsonReader& reader, const Json& json, std::string_view key,
                          std::string_view what, ReadOne read_one) {
  std::vector<T> values;
  const Json* map = reader.object_member(json, "$", key);
  if (!map)
    return values;
  const std::string map_path = key_path("$", key);
  for (const auto& [name, member] : map->items()) {
    if (name.empty())
      reader.fail(map_path, "empty " + std::string(what) + " name");
    values.push_back(read_one(reader, member, key_path(map_path, name)));
    values.back().name = name;
  }
  return values;
}

void check_shapes(JsonReader& reader, const Definition& def, const std::vector<TensorSpec>& specs,
                  std::string_view group) {
  for (const TensorSpec& spec : specs) {
    if (!spec.shape)
      continue;
    for (std::size_t i = 0; i < spec.shape->size(); ++i) {
      const std::string& axis = (*spec.shape)[i];
      if (def.find_axis(axis))
        continue;
      std::string path = index_path(key_path(key_path("$", group), spec.name) + ".shape", i);
      reader.fail(path, "\"" + axis + "\" is not an axis of the definition");
    }
  }
}

bool has_top_level_run(std::string_view source) {
  for (std::size_t start = 0; start <= source.size();) {
    std::size_t end = std::min(source.find('\n', start), source.size());
    std::string_view line = source.substr(start, end - start);
    if (line.starts_with("def run(") || line.starts_with("def run ("))
      return true;
    start = end + 1;
  }
  return false;
}

void check_definition(JsonReader& reader, const Definition& def) {
  check_shapes(reader, def, def.inputs, "inputs");
  check_shapes(reader, def, def.outputs, "outputs");
  for (const TensorSpec& output : def.outputs)
    if (def.find_input(output.name))
      reader.fail(key_path("$.outputs", output.name),
                  "output name \"" + output.name + "\" is also an input name");
  if (!has_top_level_run(def.reference))
    reader.fail("$.reference", "has no top-level \"def run(\"");
}

void read_definition(JsonReader& reader, const Json& json, Definition& def) {
  def.name = reader.string(json, "$", "name", Emptiness::rejected);
  def.op_type = reader.string(json, "$", "op_type", Emptiness::rejected);
  def.axes = read_named<Axis>(reader, json, "axes", "axis", read_axis);
  def.inputs = read_named<TensorSpec>(reader, json, "inputs", "tensor", read_tensor);
  def.outputs = read_named<TensorSpec>(reader, json, "outputs", "tensor", read_tensor);
  def.reference = reader.string(json, "$", "reference", Emptiness::rejected);
  def.tags = reader.string_list(json, "$", "tags", Emptiness::rejected);
  def.description = reader.nullable_string(json, "$", "description");
  def.constraints = reader.string_list(json, "$", "constraints", Emptiness::rejected);
}

} // namespace

util::Expected<Definition> definition_from_json(const Json& document, const std::string& origin) {
  return JsonReader::read_root<Definition>(document, origin, read_definition, check_definition);
}

namespace {

Json axis_json(const Axis& axis) {
  Json json = Json::object();
  json["type"] = axis.kind == Axis::Kind::constant ? "const" : "var";
  if (axis.kind == Axis::Kind::constant)
    json["value"] = axis.value;
  if (axis.description)
    json["description"] = *axis.description;
  return json;
}

Json tensors_json(const std::vector<TensorSpec>& specs) {
  Json map = Json::object();
  for (const TensorSpec& spec : specs) {
    Json json = Json::object();
    json["shape"] = spec.shape ? Json(*spec.shape) : Json(nullptr);
    json["dtype"] = to_string(spec.dtype);
    if (spec.description)
      json["description"] = *spec.description;
    map[spec.name] = std::move(json);
  }
  return map;
}

} // namespace

Json to_json(const Definition& def) {
  Json json = Json::object();
  json["name"] = def.name;
  json["op_type"] = def.op_type;
  json["axes"] = Json::object();
  for (const Axis& axis : def.axes)
    json["axes"][axis.name] = axis_json(axis);
  json["inputs"] = tensors_json(def.inputs);
  json["outputs"] = tensors_json(def.outputs);
  json["reference"] = def.reference;
  if (!def.tags.empty())
    json["tags"] = def.tags;
  if (def.description)
    json["description"] = *def.description;
  if (!def.constraints.empty())
    json["constraints"] = def.constraints;
  return json;
}

} // namespace ptxbench::trace
