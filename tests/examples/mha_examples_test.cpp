// The expert attention kernels (examples/sm90a/mha_with_lse_d128*.cu forward, mha_bwd_d128*.cu
// backward) without a GPU: `ptxbench check` builds them as the harness does and finds wgmma
// (GMMA) and TMA in their SASS with no spills; each causal file is its plain twin apart from the
// kCausal line; all their PTX comes from the knowledge-pack wrappers.
#include "support/ptxbench_cli.hpp"
#include "util/fs.hpp"

#include <algorithm>
#include <cstdlib>
#include <gtest/gtest.h>
#include <iterator>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

namespace {

using ptxbench::util::ProcessResult;

struct Variant {
  const char* file;
  const char* problem;
};

const Variant kVariants[] = {{"sm90a/mha_with_lse_d128.cu", "mha_with_lse_d128"},
                             {"sm90a/mha_with_lse_d128_causal.cu", "mha_with_lse_d128_causal"},
                             {"sm90a/mha_bwd_d128.cu", "mha_bwd_d128"},
                             {"sm90a/mha_bwd_d128_causal.cu", "mha_bwd_d128_causal"}};

std::string example_path(const char* file) {
  return std::string(PTXBENCH_EXAMPLES) + "/" + file;
}

std::string read_text(const std::string& path) {
  auto text = ptxbench::util::read_file(path);
  EXPECT_TRUE(text) << path;
  return text ? *text : std::string();
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    lines.push_back(line);
  return lines;
}

nlohmann::json check_json(const Variant& v) {
  auto result = ptxbench::test_support::run_ptxbench(
      {"check", example_path(v.file), "--problem", v.problem, "--arch", "sm_90a", "--json"});
  EXPECT_TRUE(result) << result.error().message;
  EXPECT_EQ(result->exit_code, 0) << result->out << result->err;
  return nlohmann::json::parse(result->out).at(0);
}

TEST(MhaExamples, CheckFindsWgmmaAndTmaWithoutSpills) {
  for (const Variant& v : kVariants) {
    SCOPED_TRACE(v.file);
    const nlohmann::json report = check_json(v);
    EXPECT_EQ(report["outcome"], "ok");
    EXPECT_EQ(report["static_verdict"], "present");
    const auto families = report["sass"]["arches"][0]["target_families"];
    EXPECT_NE(std::find(families.begin(), families.end(), "GMMA"), families.end()) << families;
    EXPECT_NE(std::find(families.begin(), families.end(), "TMA"), families.end()) << families;
    ASSERT_FALSE(report["build"]["kernels"].empty());
    for (const auto& kernel : report["build"]["kernels"]) {
      EXPECT_EQ(kernel["spill_store_bytes"], 0) << kernel["name"];
      EXPECT_EQ(kernel["spill_load_bytes"], 0) << kernel["name"];
    }
  }
}

TEST(MhaExamples, CausalFileDiffersOnlyInTheCausalFlag) {
  for (size_t pair = 0; pair < std::size(kVariants); pair += 2) {
    SCOPED_TRACE(kVariants[pair].file);
    const auto plain = lines_of(read_text(example_path(kVariants[pair].file)));
    const auto causal = lines_of(read_text(example_path(kVariants[pair + 1].file)));
    ASSERT_EQ(plain.size(), causal.size());
    std::vector<size_t> differing;
    for (size_t i = 0; i < plain.size(); ++i)
      if (plain[i] != causal[i])
        differing.push_back(i);
    ASSERT_EQ(differing.size(), 1u);
    EXPECT_EQ(plain[differing[0]], "constexpr bool kCausal = false;");
    EXPECT_EQ(causal[differing[0]], "constexpr bool kCausal = true;");
  }
}

TEST(MhaExamples, ReachesPtxOnlyThroughThePackWrappers) {
  for (const Variant& v : kVariants) {
    const std::string text = read_text(example_path(v.file));
    EXPECT_NE(text.find("#include \"knowledge/sm90a/ptx.cuh\""), std::string::npos) << v.file;
    EXPECT_EQ(text.find("asm"), std::string::npos) << v.file << ": inline PTX outside the pack";
  }
}

} // namespace
