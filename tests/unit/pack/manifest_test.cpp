#include "pack/compose.hpp"
#include "pack/manifest.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <initializer_list>
#include <string>
#include <unistd.h>
#include <utility>

namespace ptxbench::pack {
namespace {

const Manifest& real_manifest() {
  static const Manifest manifest = [] {
    auto loaded = Manifest::load(Manifest::default_path());
    if (!loaded)
      throw util::Fatal(loaded.error().message);
    return std::move(loaded).value();
  }();
  return manifest;
}

TEST(PackManifest, RealManifestLoadsWithBothArches) {
  const Manifest& m = real_manifest();
  EXPECT_EQ(m.arches(), (std::vector<std::string>{"sm_90a", "sm_100a"}));
  EXPECT_FALSE(m.components().empty());
  EXPECT_FALSE(m.variants().empty());
}

TEST(PackManifest, EveryComponentFileExists) {
  const Manifest& m = real_manifest();
  for (const Component& c : m.components())
    EXPECT_TRUE(std::filesystem::is_regular_file(m.root() / c.file)) << c.id;
}

TEST(PackManifest, EveryVariantComposesWithAHeadingPerComponent) {
  const Manifest& m = real_manifest();
  for (const Variant& v : m.variants()) {
    auto composed = compose(m, v);
    ASSERT_TRUE(composed) << v.name << ": " << composed.error().message;
    ASSERT_EQ(composed->sections.size(), v.components.size()) << v.name;
    for (const Section& s : composed->sections) {
      EXPECT_TRUE(s.text.starts_with("## ")) << s.component->id;
      const bool header = s.component->file.extension() == ".cuh";
      EXPECT_EQ(s.text.find("```cpp\n") != std::string::npos, header) << s.component->id;
    }
    EXPECT_GT(composed->size.approx_tokens, 0u) << v.name;
    EXPECT_EQ(composed->size.approx_tokens, (composed->size.bytes + 3) / 4);
  }
}

TEST(PackManifest, EveryArchHasTheBaseAndEveryComponentKind) {
  const Manifest& m = real_manifest();
  for (const std::string& arch : m.arches()) {
    auto base = m.variant("base", arch);
    ASSERT_TRUE(base) << base.error().message;
    for (const ComponentKindInfo& kind : kComponentKinds) {
      if (kind.kind == ComponentKind::pattern)
        continue;
      EXPECT_TRUE(std::ranges::any_of(
          (*base)->components,
          [&](const std::string& id) { return m.component(id)->kind == kind.kind; }))
          << arch << " base lacks " << kind.name;
    }
  }
}

TEST(PackManifest, AblationVariantsAreStrictPrefixesOfEachOther) {
  const Manifest& m = real_manifest();
  ASSERT_EQ(m.ablations(), (std::vector<std::string>{"params-only", "params+wrappers",
                                                     "params+wrappers+contracts"}));
  for (const std::string& arch : m.arches()) {
    std::vector<std::string> previous;
    for (const std::string& name : m.ablations()) {
      auto v = m.variant(name, arch);
      ASSERT_TRUE(v) << v.error().message;
      const std::vector<std::string>& current = (*v)->components;
      ASSERT_GT(current.size(), previous.size()) << arch << " " << name;
      EXPECT_TRUE(std::equal(previous.begin(), previous.end(), current.begin()))
          << arch << " " << name;
      previous = current;
    }
    EXPECT_EQ(m.component(previous.front())->kind, ComponentKind::params);
    EXPECT_EQ(m.component(previous.back())->kind, ComponentKind::contract);
    EXPECT_EQ((*m.variant("base", arch))->components, previous) << arch;
  }
}

TEST(PackManifest, ProblemKindsHaveThreeVariantsStartingFromBase) {
  const Manifest& m = real_manifest();
  ASSERT_EQ(m.problem_variants().size(), 3u);
  for (const auto& [kind, names] : m.problem_variants()) {
    ASSERT_EQ(names.size(), 3u) << kind;
    for (const std::string& arch : m.arches()) {
      EXPECT_EQ((*m.variant(names[0], arch))->components, (*m.variant("base", arch))->components);
      for (const std::string& name : names) {
        const auto& components = (*m.variant(name, arch))->components;
        const auto& base = (*m.variant("base", arch))->components;
        EXPECT_TRUE(std::equal(base.begin(), base.end(), components.begin())) << name;
      }
    }
  }
}

class BadManifest : public ::testing::Test {
protected:
  void SetUp() override {
    m_dir = std::filesystem::temp_directory_path() /
            ("ptxbench_pack_test_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(m_dir / "a");
    std::ofstream(m_dir / "a" / "params.md") << "# params\n";
    std::ofstream(m_dir / "a" / "w.cuh") << "// w\n";
  }
  void TearDown() override { std::filesystem::remove_all(m_dir); }

  // The error of a valid manifest with each `from` replaced by its `to`; "" when it loads.
  std::string load_error(const std::string& from, const std::string& to) {
    return load_error({{from, to}});
  }
  std::string load_error(std::initializer_list<std::pair<std::string, std::string>> edits) {
    std::string text = R"({"schema": 1, "include_prefix": "knowledge", "arches": ["sm_90a"],
      "components": [
        {"id": "p", "file": "a/params.md", "kind": "params", "arch": "sm_90a"},
        {"id": "w", "file": "a/w.cuh", "kind": "wrappers", "arch": "any"}],
      "variants": [
        {"name": "params-only", "arch": "sm_90a", "description": "d", "components": ["p"]},
        {"name": "base", "arch": "sm_90a", "description": "d", "extends": "params-only",
         "components": ["w"]}],
      "ablations": ["params-only"],
      "problem_variants": {"gemm": ["base"]}})";
    for (const auto& [from, to] : edits) {
      if (from.empty())
        continue;
      const auto at = text.find(from);
      EXPECT_NE(at, std::string::npos) << from;
      if (at != std::string::npos)
        text.replace(at, from.size(), to);
    }
    const std::filesystem::path path = m_dir / "packs.json";
    std::ofstream(path) << text;
    auto loaded = Manifest::load(path);
    if (loaded)
      return "";
    EXPECT_NE(loaded.error().message.find(path.string()), std::string::npos)
        << loaded.error().message;
    return loaded.error().message;
  }

  std::filesystem::path m_dir;
};

TEST_F(BadManifest, TheTemplateItselfLoads) {
  EXPECT_EQ(load_error("", ""), "");
}

TEST_F(BadManifest, InvalidJsonIsReported) {
  EXPECT_NE(load_error("\"schema\": 1,", "\"schema\": 1,,").find("$: not valid JSON"),
            std::string::npos);
}

TEST_F(BadManifest, AWrongTypedFieldNamesItsJsonPath) {
  EXPECT_NE(load_error("\"components\": [\"w\"]", "\"components\": [\"w\", 3]")
                .find("$.variants[1].components[1]: expected a string, got integer"),
            std::string::npos);
  EXPECT_NE(load_error("\"schema\": 1", "\"schema\": \"1\"")
                .find("$.schema: expected an integer, got string"),
            std::string::npos);
  EXPECT_NE(load_error("\"gemm\": [\"base\"]", "\"gemm\": \"base\"")
                .find("$.problem_variants.gemm: expected an array, got string"),
            std::string::npos);
}

TEST_F(BadManifest, UnknownComponentNamesTheJsonPath) {
  const std::string e = load_error("\"components\": [\"w\"]", "\"components\": [\"nope\"]");
  EXPECT_NE(e.find("$.variants[1].components[0]: unknown component 'nope'"), std::string::npos)
      << e;
}

TEST_F(BadManifest, MissingFileIsNotFoundWithItsPath) {
  const std::string e = load_error("a/w.cuh", "a/missing.cuh");
  EXPECT_NE(e.find("$.components[1].file"), std::string::npos) << e;
  EXPECT_NE(e.find("missing.cuh' does not exist"), std::string::npos) << e;
}

TEST_F(BadManifest, UnknownKindIsRejected) {
  EXPECT_NE(load_error("\"kind\": \"params\"", "\"kind\": \"docs\"")
                .find("$.components[0].kind: unknown kind 'docs'"),
            std::string::npos);
}

TEST_F(BadManifest, ComponentOfAnotherArchIsRejected) {
  const std::string e =
      load_error({{"\"arches\": [\"sm_90a\"]", "\"arches\": [\"sm_90a\", \"sm_100a\"]"},
                  {"\"arch\": \"any\"", "\"arch\": \"sm_100a\""}});
  EXPECT_NE(e.find("$.variants[1].components[0]: component 'w' is for sm_100a, the variant for "
                   "sm_90a"),
            std::string::npos)
      << e;
}

TEST_F(BadManifest, AnUnknownLanguageIsRejected) {
  const std::string e =
      load_error("\"name\": \"base\", \"arch\": \"sm_90a\",",
                 "\"name\": \"base\", \"arch\": \"sm_90a\", \"language\": \"rust\",");
  EXPECT_NE(e.find("$.variants[1].language: unknown language 'rust' (cuda, triton)"),
            std::string::npos)
      << e;
}

TEST_F(BadManifest, AVariantExtendsOnlyOneOfItsOwnLanguage) {
  const std::string e =
      load_error("\"name\": \"base\", \"arch\": \"sm_90a\",",
                 "\"name\": \"base\", \"arch\": \"sm_90a\", \"language\": \"triton\",");
  EXPECT_NE(e.find("$.variants[1].language: 'params-only' is a cuda variant"), std::string::npos)
      << e;
}

TEST_F(BadManifest, TritonProblemVariantsMustBeTritonVariants) {
  const std::string e = load_error("\"problem_variants\": {\"gemm\": [\"base\"]}",
                                   "\"problem_variants\": {\"gemm\": [\"base\"]}, "
                                   "\"triton_problem_variants\": {\"gemm\": [\"base\"]}");
  EXPECT_NE(e.find("$.triton_problem_variants.gemm[0]: variant 'base' is a cuda variant, this "
                   "list is for triton"),
            std::string::npos)
      << e;
}

TEST(PackManifest, TheShippedTritonVariantsAreTritonOnBothArches) {
  const Manifest& m = real_manifest();
  const auto& lists = m.problem_variants(kTritonLanguage);
  ASSERT_EQ(lists.size(), 3u);
  for (const auto& [kind, names] : lists)
    for (const std::string& name : names)
      for (const char* arch : {"sm_90a", "sm_100a"}) {
        auto variant = m.variant(name, arch);
        ASSERT_TRUE(variant) << name << " " << arch;
        EXPECT_EQ((*variant)->language, kTritonLanguage) << name;
      }
  auto cuda = m.variant("gemm-0", "sm_90a");
  ASSERT_TRUE(cuda);
  EXPECT_EQ((*cuda)->language, kCudaLanguage);
}

TEST(PackManifest, ALanguageWithoutVariantsHasNoProblemVariants) {
  const Manifest& m = real_manifest();
  EXPECT_EQ(&m.problem_variants(kCudaLanguage), &m.problem_variants());
  EXPECT_TRUE(m.problem_variants("toy").empty());
}

TEST_F(BadManifest, GroupVariantMissingForAnArchIsRejected) {
  const std::string e =
      load_error("\"arches\": [\"sm_90a\"]", "\"arches\": [\"sm_90a\", \"sm_100a\"]");
  EXPECT_NE(e.find("$.ablations[0]: variant 'params-only' is not defined for sm_100a"),
            std::string::npos)
      << e;
}

TEST_F(BadManifest, ExtendingAnUnknownVariantIsRejected) {
  EXPECT_NE(load_error("\"extends\": \"params-only\"", "\"extends\": \"later\"")
                .find("$.variants[1].extends: 'later' is not an earlier variant of sm_90a"),
            std::string::npos);
}

TEST_F(BadManifest, DuplicateComponentIdIsRejected) {
  EXPECT_NE(load_error("{\"id\": \"w\"", "{\"id\": \"p\"")
                .find("$.components[1].id: duplicate component id 'p'"),
            std::string::npos);
}

TEST_F(BadManifest, MissingGroupsAreRejected) {
  EXPECT_NE(load_error("\"problem_variants\"", "\"problem_kinds\"")
                .find("$: missing required key \"problem_variants\""),
            std::string::npos);
}

TEST_F(BadManifest, PathsLeavingTheFolderAreRejected) {
  EXPECT_NE(load_error("a/params.md", "../params.md").find("$.components[0].file"),
            std::string::npos);
}

} // namespace
} // namespace ptxbench::pack
