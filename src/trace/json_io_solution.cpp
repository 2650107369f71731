// Solution <-> JSON and the solution content hash (§1.4). Read-side checks: non-empty names,
// a known language and binding, at least one target, an entry point "<file>::<symbol>" with
// exactly one "::" whose file is among the sources, at least one source, unique relative
// source paths without "..", non-empty contents. The legacy `build_commands` key is ignored;
// a missing `destination_passing_style` means true (upstream's default since #125).
#include "trace/json_io.hpp"
#include "trace/json_reading.hpp"
#include "util/hash.hpp"

#include <filesystem>

namespace ptxbench::trace {
namespace {

constexpr std::string_view kSeparator = "::";

void check_entry_point(JsonReader& reader, const std::string& entry_point) {
  std::size_t at = entry_point.find(kSeparator);
  bool one = at != std::string::npos && at > 0 && at + kSeparator.size() < entry_point.size() &&
             entry_point.find(kSeparator, at + 1) == std::string::npos;
  if (!one)
    reader.fail("$.spec.entry_point",
                '"' + entry_point + R"(" is not "<file>::<symbol>" with exactly one "::")");
}

void read_language(JsonReader& reader, const Json& spec, BuildSpec& build) {
  std::string language = reader.string(spec, "$.spec", "language", Emptiness::allowed);
  if (auto parsed = parse_language(language))
    build.language = *parsed;
  else if (reader.ok())
    reader.fail("$.spec.language", "unknown language \"" + language + "\"");
}

void read_binding(JsonReader& reader, const Json& spec, BuildSpec& build) {
  auto binding = reader.nullable_string(spec, "$.spec", "binding");
  if (!binding)
    return;
  if (auto parsed = parse_binding(*binding))
    build.binding = *parsed;
  else
    reader.fail("$.spec.binding", "unknown binding \"" + *binding + "\"");
}

BuildSpec read_spec(JsonReader& reader, const Json& json) {
  BuildSpec build;
  const Json* spec = reader.object_member(json, "$", "spec");
  if (!spec)
    return build;
  read_language(reader, *spec, build);
  reader.required(*spec, "$.spec", "target_hardware");
  build.target_hardware =
      reader.string_list(*spec, "$.spec", "target_hardware", Emptiness::allowed);
  if (reader.ok() && build.target_hardware.empty())
    reader.fail("$.spec.target_hardware", "must list at least one target");
  build.entry_point = reader.string(*spec, "$.spec", "entry_point", Emptiness::rejected);
  if (reader.ok())
    check_entry_point(reader, build.entry_point);
  build.dependencies = reader.string_list(*spec, "$.spec", "dependencies", Emptiness::allowed);
  build.destination_passing_style =
      reader.optional_boolean(*spec, "$.spec", "destination_passing_style").value_or(true);
  read_binding(reader, *spec, build);
  return build;
}

bool is_safe_relative(const std::string& path) {
  std::filesystem::path p(path);
  if (p.is_absolute() || p.has_root_name())
    return false;
  for (const auto& component : p)
    if (component == "..")
      return false;
  return true;
}

SourceFile read_source(JsonReader& reader, const Json& json, const std::string& path) {
  SourceFile source;
  if (!reader.expect_object(json, path))
    return source;
  source.path = reader.string(json, path, "path", Emptiness::rejected);
  if (reader.ok() && !is_safe_relative(source.path))
    reader.fail(key_path(path, "path"),
                '"' + source.path + R"(" must be a relative path without "..")");
  source.content = reader.string(json, path, "content", Emptiness::rejected);
  return source;
}

std::vector<SourceFile> read_sources(JsonReader& reader, const Json& json) {
  std::vector<SourceFile> sources;
  const Json* list = reader.required(json, "$", "sources");
  if (!list)
    return sources;
  if (!list->is_array() || list->empty()) {
    reader.fail("$.sources", "expected a non-empty array of source files");
    return sources;
  }
  for (std::size_t i = 0; i < list->size(); ++i) {
    std::string path = index_path("$.sources", i);
    sources.push_back(read_source(reader, (*list)[i], path));
    for (std::size_t j = 0; j < i && reader.ok(); ++j)
      if (sources[j].path == sources[i].path)
        reader.fail(key_path(path, "path"), "duplicate source path \"" + sources[i].path + "\"");
  }
  return sources;
}

void check_entry_file(JsonReader& reader, const Solution& solution) {
  const std::string& entry = solution.spec.entry_point;
  std::string file = entry.substr(0, entry.find(kSeparator));
  for (const SourceFile& source : solution.sources)
    if (source.path == file)
      return;
  reader.fail("$.spec.entry_point", "entry file \"" + file + "\" is not among the sources");
}

Json spec_json(const BuildSpec& build) {
  Json json = Json::object();
  json["language"] = to_string(build.language);
  json["target_hardware"] = build.target_hardware;
  json["entry_point"] = build.entry_point;
  json["dependencies"] = build.dependencies;
  json["destination_passing_style"] = build.destination_passing_style;
  if (build.binding != Binding::none)
    json["binding"] = to_string(build.binding);
  return json;
}

void read_solution(JsonReader& reader, const Json& json, Solution& solution) {
  solution.name = reader.string(json, "$", "name", Emptiness::rejected);
  solution.definition = reader.string(json, "$", "definition", Emptiness::rejected);
  solution.author = reader.string(json, "$", "author", Emptiness::rejected);
  solution.spec = read_spec(reader, json);
  solution.sources = read_sources(reader, json);
  solution.description = reader.nullable_string(json, "$", "description");
}

} // namespace

util::Expected<Solution> solution_from_json(const Json& document, const std::string& origin) {
  return JsonReader::read_root<Solution>(document, origin, read_solution, check_entry_file);
}

Json to_json(const Solution& solution) {
  Json json = Json::object();
  json["name"] = solution.name;
  json["definition"] = solution.definition;
  json["author"] = solution.author;
  json["spec"] = spec_json(solution.spec);
  json["sources"] = Json::array();
  for (const SourceFile& source : solution.sources) {
    Json file = Json::object();
    file["path"] = source.path;
    file["content"] = source.content;
    json["sources"].push_back(std::move(file));
  }
  if (solution.description)
    json["description"] = *solution.description;
  return json;
}

std::string solution_hash(const Solution& solution) {
  std::string text = solution.definition;
  text += to_string(solution.spec.language);
  text += solution.spec.entry_point;
  text += to_string(solution.spec.binding);
  for (const std::string& dependency : solution.spec.dependencies)
    text += dependency;
  for (const SourceFile& source : solution.sources) {
    text += source.path;
    text += source.content;
  }
  return util::sha1_hex(text);
}

std::string unique_solution_name(const Solution& solution) {
  return solution.name + "_" + solution_hash(solution).substr(0, 8);
}

} // namespace ptxbench::trace
