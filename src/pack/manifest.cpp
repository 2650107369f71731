#include "pack/manifest.hpp"

#include "util/fs.hpp"
#include "util/json_reader.hpp"
#include "util/paths.hpp"

#include <algorithm>
#include <fmt/core.h>
#include <set>

namespace ptxbench::pack {

using util::ErrorKind;
using util::Expected;
using Json = util::Json;

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
// "<file>: <json path>: <problem>" (the fields' types through util::JsonReader).
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

  util::JsonReader reader() const { return util::JsonReader(m_manifest.m_path.string()); }

  // A non-empty string, or when not `required` a string that may be absent (read as "").
  Expected<std::string> string_field(const Json& object, const std::string& where, const char* key,
                                     bool required = true) const {
    util::JsonReader in = reader();
    std::string value =
        required ? in.string(object, where, key, util::Emptiness::rejected)
                 : in.optional_string(object, where, key, util::Emptiness::allowed).value_or("");
    return in.finish(std::move(value));
  }

  // An array of non-empty strings, or when not `required` one that may be absent (read as []).
  Expected<std::vector<std::string>> string_list(const Json& object, const std::string& where,
                                                 const char* key, bool required) const {
    util::JsonReader in = reader();
    std::vector<std::string> list;
    if (required || util::JsonReader::optional(object, key))
      list = in.strings(object, where, key, util::Emptiness::rejected);
    return in.finish(std::move(list));
  }

  // The array `key` of the document, or an error.
  Expected<const Json*> array_of(const Json& doc, const char* key) const {
    util::JsonReader in = reader();
    const Json* list = in.array_member(doc, "$", key);
    return in.finish(list);
  }

  util::Status header(const Json& doc) {
    util::JsonReader in = reader();
    if (in.integer(doc, "$", "schema") != 1 && in.ok())
      in.fail("$.schema", "must be 1");
    PTXBENCH_TRY(in.finish(0));
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
    PTXBENCH_TRY_ASSIGN(auto list, array_of(doc, "components"));
    for (std::size_t i = 0; i < list->size(); ++i) {
      PTXBENCH_TRY_ASSIGN(auto parsed, component((*list)[i], util::index_path("$.components", i)));
      m_manifest.m_components.push_back(std::move(parsed));
    }
    return util::Ok{};
  }

  Expected<Component> component(const Json& entry, const std::string& where) const {
    if (util::JsonReader in = reader(); !in.expect_object(entry, where))
      return in.finish(Component{});
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
    PTXBENCH_TRY_ASSIGN(auto list, array_of(doc, "variants"));
    for (std::size_t i = 0; i < list->size(); ++i) {
      PTXBENCH_TRY_ASSIGN(auto parsed, variant((*list)[i], util::index_path("$.variants", i)));
      m_manifest.m_variants.push_back(std::move(parsed));
    }
    return util::Ok{};
  }

  Expected<Variant> variant(const Json& entry, const std::string& where) const {
    if (util::JsonReader in = reader(); !in.expect_object(entry, where))
      return in.finish(Variant{});
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
    const std::string where = util::key_path("$", key);
    util::JsonReader in = reader();
    const Json* lists =
        required ? in.object_member(doc, "$", key) : in.optional_object(doc, "$", key);
    if (!lists)
      return in.finish(util::Ok{});
    for (const auto& [kind, names] : lists->items()) {
      PTXBENCH_TRY_ASSIGN(auto list, string_list(*lists, where, kind.c_str(), true));
      for (std::size_t i = 0; i < list.size(); ++i) {
        const std::string at = util::index_path(util::key_path(where, kind), i);
        PTXBENCH_TRY(defined_everywhere(list[i], at));
        PTXBENCH_TRY(of_language(list[i], language, at));
      }
      out.emplace_back(kind, list);
    }
    // In the order of the kinds' names, as before the document kept its keys' order.
    std::ranges::sort(out, {}, &KindVariants::value_type::first);
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
  return parse(*text, path);
}

Expected<Manifest> Manifest::parse(std::string_view text, const std::filesystem::path& path) {
  return ManifestParser(path).parse(text);
}

} // namespace ptxbench::pack
