#include "pack/manifest.hpp"

#include "util/fs.hpp"
#include "util/paths.hpp"

#include <algorithm>
#include <fmt/core.h>
#include <nlohmann/json.hpp>
#include <set>

namespace ptxbench::pack {

using util::ErrorKind;
using util::Expected;
using Json = nlohmann::json;

const ComponentKindInfo& info(ComponentKind kind) {
  return kComponentKinds[static_cast<std::size_t>(kind) - 1];
}

std::optional<ComponentKind> parse_component_kind(std::string_view name) {
  for (const ComponentKindInfo& row : kComponentKinds)
    if (row.name == name)
      return row.kind;
  return std::nullopt;
}

std::filesystem::path Manifest::default_path() {
  return util::data_root() / "knowledge" / "packs.json";
}

const std::vector<std::pair<std::string, std::vector<std::string>>>&
Manifest::problem_variants(std::string_view language) const {
  static const std::vector<std::pair<std::string, std::vector<std::string>>> kNone;
  if (language == kTritonLanguage)
    return m_triton_problem_variants;
  return language == kCudaLanguage ? m_problem_variants : kNone;
}

const Component* Manifest::component(std::string_view id) const {
  auto it = std::ranges::find(m_components, id, &Component::id);
  return it == m_components.end() ? nullptr : &*it;
}

Expected<const Variant*> Manifest::variant(std::string_view name, std::string_view arch) const {
  std::string known;
  for (const Variant& v : m_variants) {
    if (v.arch != arch)
      continue;
    if (v.name == name)
      return &v;
    known += (known.empty() ? "" : ", ") + v.name;
  }
  return util::make_error(ErrorKind::not_found,
                          fmt::format("no variant '{}' for {} (known: {})", name, arch,
                                      known.empty() ? "none" : known));
}

std::vector<std::string> Manifest::arches_of(std::string_view name) const {
  std::vector<std::string> arches;
  for (const Variant& v : m_variants)
    if (v.name == name)
      arches.push_back(v.arch);
  return arches;
}

// Reads one packs.json; each method checks one part and returns the first error, phrased as
// "<file>: <json path>: <problem>".
class ManifestParser {
public:
  explicit ManifestParser(std::filesystem::path path) { m_manifest.m_path = std::move(path); }

  Expected<Manifest> parse(std::string_view text) {
    const Json doc = Json::parse(text, nullptr, false);
    if (doc.is_discarded())
      return fail("$", "not valid JSON");
    if (!doc.is_object())
      return fail("$", "must be an object");
    PTXBENCH_TRY(header(doc));
    PTXBENCH_TRY(components(doc));
    PTXBENCH_TRY(variants(doc));
    PTXBENCH_TRY(groups(doc));
    return std::move(m_manifest);
  }

private:
  util::Error error(const std::string& where, const std::string& what,
                    ErrorKind kind = ErrorKind::invalid_input) const {
    return util::make_error(kind,
                            fmt::format("{}: {}: {}", m_manifest.m_path.string(), where, what));
  }
  util::Error fail(const std::string& where, const std::string& what) const {
    return error(where, what);
  }

  Expected<std::string> string_field(const Json& object, const std::string& where, const char* key,
                                     bool required = true) const {
    const std::string path = where + "." + key;
    if (!object.contains(key)) {
      if (!required)
        return std::string();
      return fail(path, "missing");
    }
    if (!object[key].is_string())
      return fail(path, "must be a string");
    std::string value = object[key].get<std::string>();
    if (required && value.empty())
      return fail(path, "must not be empty");
    return value;
  }

  Expected<std::vector<std::string>> string_list(const Json& object, const std::string& where,
                                                 const char* key, bool required) const {
    const std::string path = where + "." + key;
    std::vector<std::string> list;
    if (!object.contains(key)) {
      if (required)
        return fail(path, "missing");
      return list;
    }
    if (!object[key].is_array())
      return fail(path, "must be an array of strings");
    for (std::size_t i = 0; i < object[key].size(); ++i) {
      if (!object[key][i].is_string() || object[key][i].get<std::string>().empty())
        return fail(fmt::format("{}[{}]", path, i), "must be a non-empty string");
      list.push_back(object[key][i].get<std::string>());
    }
    return list;
  }

  util::Status header(const Json& doc) {
    if (!doc.contains("schema") || !doc["schema"].is_number_integer() || doc["schema"] != 1)
      return fail("$.schema", "must be 1");
    PTXBENCH_TRY_ASSIGN(auto prefix, string_field(doc, "$", "include_prefix"));
    m_manifest.m_include_prefix = prefix;
    PTXBENCH_TRY_ASSIGN(auto arches, string_list(doc, "$", "arches", true));
    if (arches.empty())
      return fail("$.arches", "must name at least one architecture");
    m_manifest.m_arches = arches;
    return util::Ok{};
  }

  bool known_arch(std::string_view arch) const {
    return std::ranges::find(m_manifest.m_arches, arch) != m_manifest.m_arches.end();
  }

  util::Status components(const Json& doc) {
    if (!doc.contains("components") || !doc["components"].is_array())
      return fail("$.components", "must be an array");
    for (std::size_t i = 0; i < doc["components"].size(); ++i) {
      PTXBENCH_TRY_ASSIGN(auto parsed,
                          component(doc["components"][i], fmt::format("$.components[{}]", i)));
      m_manifest.m_components.push_back(std::move(parsed));
    }
    return util::Ok{};
  }

  Expected<Component> component(const Json& entry, const std::string& where) const {
    if (!entry.is_object())
      return fail(where, "must be an object");
    PTXBENCH_TRY_ASSIGN(auto id, string_field(entry, where, "id"));
    if (m_manifest.component(id) != nullptr)
      return fail(where + ".id", fmt::format("duplicate component id '{}'", id));
    PTXBENCH_TRY_ASSIGN(auto file, string_field(entry, where, "file"));
    const std::filesystem::path relative(file);
    if (relative.is_absolute() || *file.begin() == '.')
      return fail(where + ".file", "must be a path inside the manifest's folder");
    if (!std::filesystem::is_regular_file(m_manifest.root() / relative))
      return error(where + ".file",
                   fmt::format("'{}' does not exist", (m_manifest.root() / relative).string()),
                   ErrorKind::not_found);
    PTXBENCH_TRY_ASSIGN(auto kind_name, string_field(entry, where, "kind"));
    const std::optional<ComponentKind> kind = parse_component_kind(kind_name);
    if (!kind)
      return fail(
          where + ".kind",
          fmt::format("unknown kind '{}' (params, wrappers, contract, pattern)", kind_name));
    PTXBENCH_TRY_ASSIGN(auto arch, string_field(entry, where, "arch"));
    if (arch != kAnyArch && !known_arch(arch))
      return fail(where + ".arch",
                  fmt::format("unknown arch '{}' (not in $.arches, not '{}')", arch, kAnyArch));
    return Component{id, relative, *kind, arch};
  }

  util::Status variants(const Json& doc) {
    if (!doc.contains("variants") || !doc["variants"].is_array())
      return fail("$.variants", "must be an array");
    for (std::size_t i = 0; i < doc["variants"].size(); ++i) {
      PTXBENCH_TRY_ASSIGN(auto parsed,
                          variant(doc["variants"][i], fmt::format("$.variants[{}]", i)));
      m_manifest.m_variants.push_back(std::move(parsed));
    }
    return util::Ok{};
  }

  Expected<Variant> variant(const Json& entry, const std::string& where) const {
    if (!entry.is_object())
      return fail(where, "must be an object");
    Variant v;
    for (auto [key, target] : {std::pair{"name", &v.name}, std::pair{"arch", &v.arch},
                               std::pair{"description", &v.description}}) {
      PTXBENCH_TRY_ASSIGN(auto value, string_field(entry, where, key));
      *target = value;
    }
    if (!known_arch(v.arch))
      return fail(where + ".arch", fmt::format("unknown arch '{}' (not in $.arches)", v.arch));
    if (m_manifest.variant(v.name, v.arch))
      return fail(where + ".name", fmt::format("duplicate variant '{}' for {}", v.name, v.arch));
    PTXBENCH_TRY_ASSIGN(auto language, string_field(entry, where, "language", false));
    if (!language.empty())
      v.language = language;
    if (v.language != kCudaLanguage && v.language != kTritonLanguage)
      return fail(where + ".language",
                  fmt::format("unknown language '{}' (cuda, triton)", v.language));
    PTXBENCH_TRY_ASSIGN(auto extends, string_field(entry, where, "extends", false));
    v.extends = extends;
    if (!v.extends.empty()) {
      auto parent = m_manifest.variant(v.extends, v.arch);
      if (!parent)
        return fail(where + ".extends",
                    fmt::format("'{}' is not an earlier variant of {}", v.extends, v.arch));
      if ((*parent)->language != v.language)
        return fail(where + ".language",
                    fmt::format("'{}' is a {} variant; a variant extends one of its own language",
                                v.extends, (*parent)->language));
      v.components = (*parent)->components;
    }
    PTXBENCH_TRY_ASSIGN(auto own, string_list(entry, where, "components", v.extends.empty()));
    v.own = own;
    PTXBENCH_TRY(append_components(v, where));
    if (v.components.empty())
      return fail(where + ".components", "a variant needs components");
    return v;
  }

  util::Status append_components(Variant& v, const std::string& where) const {
    for (std::size_t i = 0; i < v.own.size(); ++i) {
      const std::string path = fmt::format("{}.components[{}]", where, i);
      const Component* c = m_manifest.component(v.own[i]);
      if (c == nullptr)
        return fail(path, fmt::format("unknown component '{}'", v.own[i]));
      if (c->arch != kAnyArch && c->arch != v.arch)
        return fail(path, fmt::format("component '{}' is for {}, the variant for {}", c->id,
                                      c->arch, v.arch));
      if (std::ranges::find(v.components, c->id) != v.components.end())
        return fail(path, fmt::format("component '{}' listed twice", c->id));
      v.components.push_back(c->id);
    }
    return util::Ok{};
  }

  // A variant name every architecture of the manifest defines.
  util::Status defined_everywhere(const std::string& name, const std::string& where) const {
    for (const std::string& arch : m_manifest.m_arches)
      if (!m_manifest.variant(name, arch))
        return fail(where, fmt::format("variant '{}' is not defined for {}", name, arch));
    return util::Ok{};
  }

  // A variant of `language` on every architecture.
  util::Status of_language(const std::string& name, std::string_view language,
                           const std::string& where) const {
    for (const std::string& arch : m_manifest.m_arches)
      if (auto found = m_manifest.variant(name, arch); found && (*found)->language != language)
        return fail(where, fmt::format("variant '{}' is a {} variant, this list is for {}", name,
                                       (*found)->language, language));
    return util::Ok{};
  }

  using KindVariants = std::vector<std::pair<std::string, std::vector<std::string>>>;

  util::Status kind_lists(const Json& doc, const char* key, std::string_view language,
                          bool required, KindVariants& out) const {
    const std::string where = std::string("$.") + key;
    if (!doc.contains(key)) {
      if (required)
        return fail(where, "missing");
      return util::Ok{};
    }
    if (!doc[key].is_object())
      return fail(where, "must be an object: problem kind -> variant names");
    for (const auto& [kind, names] : doc[key].items()) {
      PTXBENCH_TRY_ASSIGN(auto list, string_list(doc[key], where, kind.c_str(), true));
      for (std::size_t i = 0; i < list.size(); ++i) {
        const std::string at = fmt::format("{}.{}[{}]", where, kind, i);
        PTXBENCH_TRY(defined_everywhere(list[i], at));
        PTXBENCH_TRY(of_language(list[i], language, at));
      }
      out.emplace_back(kind, list);
    }
    return util::Ok{};
  }

  util::Status groups(const Json& doc) {
    PTXBENCH_TRY_ASSIGN(auto ablations, string_list(doc, "$", "ablations", true));
    for (std::size_t i = 0; i < ablations.size(); ++i)
      PTXBENCH_TRY(defined_everywhere(ablations[i], fmt::format("$.ablations[{}]", i)));
    m_manifest.m_ablations = ablations;
    PTXBENCH_TRY(
        kind_lists(doc, "problem_variants", kCudaLanguage, true, m_manifest.m_problem_variants));
    return kind_lists(doc, "triton_problem_variants", kTritonLanguage, false,
                      m_manifest.m_triton_problem_variants);
  }

  Manifest m_manifest;
};

Expected<Manifest> Manifest::load(const std::filesystem::path& path) {
  auto text = util::read_file(path);
  if (!text)
    return util::make_error(text.error().kind, fmt::format("{}: cannot read the manifest: {}",
                                                           path.string(), text.error().message));
  return ManifestParser(path).parse(*text);
}

} // namespace ptxbench::pack
