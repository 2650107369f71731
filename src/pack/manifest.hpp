// The knowledge-pack manifest (knowledge/packs.json): the components a prompt can hold
// (parameters, wrapper headers, contracts, scheduling patterns; one file each, per architecture)
// and the named prompt variants per architecture that list them in prompt order.
//
// A variant either lists its components or `extends` an earlier variant of the same
// architecture and appends components to it, so `base+pattern` variants and the ablation chain
// (params-only -> params+wrappers -> params+wrappers+contracts) are prefixes by construction.
// A variant's `language` ("cuda", the default, or "triton") says which candidate language its
// prompt is for; `problem_variants` lists CUDA variants, `triton_problem_variants` Triton ones.
// Loading is all-or-nothing: every error names the manifest file and the JSON path of the
// offending value ("$.variants[3].components[1]"), and every component file must exist.
#pragma once

#include "util/enum_table.hpp"
#include "util/error.hpp"

#include <array>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ptxbench::pack {

// Persisted in packs.json by name.
enum class ComponentKind : std::uint8_t { params = 1, wrappers = 2, contract = 3, pattern = 4 };

struct ComponentKindInfo {
  ComponentKind kind;
  std::string_view name;    // the manifest spelling
  std::string_view heading; // the heading a composed prompt gives it
};

inline constexpr std::array kComponentKinds{
    ComponentKindInfo{ComponentKind::params, "params", "Architecture parameters"},
    ComponentKindInfo{ComponentKind::wrappers, "wrappers", "PTX wrappers"},
    ComponentKindInfo{ComponentKind::contract, "contract", "Architecture contract"},
    ComponentKindInfo{ComponentKind::pattern, "pattern", "Scheduling pattern"},
};

consteval bool component_kinds_complete() {
  for (std::size_t i = 0; i < kComponentKinds.size(); ++i)
    if (static_cast<std::size_t>(kComponentKinds[i].kind) != i + 1)
      return false;
  return true;
}
static_assert(component_kinds_complete(), "kComponentKinds must list every kind in value order");
static_assert(util::no_enumerator_after<ComponentKind, kComponentKinds.size()>(),
              "kComponentKinds lacks a row for an enumerator after its last");

const ComponentKindInfo& info(ComponentKind kind);
std::optional<ComponentKind> parse_component_kind(std::string_view name);

// A component's `arch` may be this value: usable by variants of every architecture.
inline constexpr std::string_view kAnyArch = "any";

struct Component {
  std::string id;
  std::filesystem::path file; // relative to the manifest's folder
  ComponentKind kind;
  std::string arch; // "sm_90a", "sm_100a" or kAnyArch
};

// The candidate language a variant's prompt is for: "cuda" unless packs.json says "triton".
inline constexpr std::string_view kCudaLanguage = "cuda";
inline constexpr std::string_view kTritonLanguage = "triton";

struct Variant {
  std::string name;
  std::string arch;
  std::string language{kCudaLanguage}; // kCudaLanguage or kTritonLanguage; a child's = parent's
  std::string description;
  std::string extends;                 // empty, or an earlier variant of the same arch
  std::vector<std::string> own;        // component ids this variant adds, in order
  std::vector<std::string> components; // all component ids, parents' first
};

class Manifest {
public:
  static util::Expected<Manifest> load(const std::filesystem::path& path);
  // The manifest `text` as if read from `path` (component files are looked up beside it); an
  // error names `path` and the JSON path of what is wrong.
  static util::Expected<Manifest> parse(std::string_view text, const std::filesystem::path& path);
  // util::data_root() / "knowledge" / "packs.json".
  static std::filesystem::path default_path();

  const std::filesystem::path& path() const { return m_path; }
  // The folder component files are relative to.
  std::filesystem::path root() const { return m_path.parent_path(); }
  // What a kernel writes before a header's file to #include it ("knowledge").
  const std::string& include_prefix() const { return m_include_prefix; }
  const std::vector<std::string>& arches() const { return m_arches; }
  const std::vector<Component>& components() const { return m_components; }
  const std::vector<Variant>& variants() const { return m_variants; }

  // The Table 3 ablation chain, shortest first (each a prefix of the next).
  const std::vector<std::string>& ablations() const { return m_ablations; }
  // Problem kind ("gemm", "mha_forward", "mha_backward") -> its prompt variants, in order.
  const std::vector<std::pair<std::string, std::vector<std::string>>>& problem_variants() const {
    return m_problem_variants;
  }
  // The same for a candidate language: problem_variants() for CUDA, `triton_problem_variants`
  // of packs.json for Triton, none for a language packs.json has no variants of.
  const std::vector<std::pair<std::string, std::vector<std::string>>>&
  problem_variants(std::string_view language) const;

  const Component* component(std::string_view id) const;
  // not_found naming the known variants of `arch`.
  util::Expected<const Variant*> variant(std::string_view name, std::string_view arch) const;
  // The architectures that define a variant called `name`.
  std::vector<std::string> arches_of(std::string_view name) const;

private:
  friend class ManifestParser;
  std::filesystem::path m_path;
  std::string m_include_prefix;
  std::vector<std::string> m_arches;
  std::vector<Component> m_components;
  std::vector<Variant> m_variants;
  std::vector<std::string> m_ablations;
  std::vector<std::pair<std::string, std::vector<std::string>>> m_problem_variants;
  std::vector<std::pair<std::string, std::vector<std::string>>> m_triton_problem_variants;
};

} // namespace ptxbench::pack
