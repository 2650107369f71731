// Every expert kernel in examples/<arch>/<problem>.cu, without a GPU: the real `ptxbench check`
// builds it as the harness does (its #include "knowledge/..." resolved by the harness) for the
// architecture of its folder and must report the target instructions present, the
// architecture's tensor-core family among them, and no spills.
#include "support/ptxbench_cli.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

struct ArchFolder {
  const char* folder;
  const char* arch;
  std::vector<const char*> families; // each must be among the target families found
};

const ArchFolder kArchFolders[] = {{"sm90a", "sm_90a", {"GMMA", "TMA"}},
                                   {"sm100a", "sm_100a", {"TCGEN05"}}};

std::vector<fs::path> kernels_in(const fs::path& dir) {
  std::vector<fs::path> files;
  if (fs::is_directory(dir))
    for (const auto& entry : fs::directory_iterator(dir))
      if (entry.path().extension() == ".cu")
        files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

nlohmann::json check_json(const fs::path& kernel, const char* arch) {
  auto result = ptxbench::test_support::run_ptxbench(
      {"check", kernel.string(), "--problem", kernel.stem().string(), "--arch", arch, "--json"},
      std::chrono::minutes(10));
  if (!result) {
    ADD_FAILURE() << result.error().message;
    return {};
  }
  EXPECT_EQ(result->exit_code, 0) << result->out << result->err;
  const auto parsed = nlohmann::json::parse(result->out, nullptr, false);
  if (!parsed.is_array() || parsed.empty()) {
    ADD_FAILURE() << "not a JSON array: " << result->out.substr(0, 2000);
    return {};
  }
  return parsed.at(0);
}

void expect_present(const nlohmann::json& report, const ArchFolder& folder) {
  ASSERT_TRUE(report.is_object());
  EXPECT_EQ(report["outcome"], "ok") << report["build"].value("diagnostic", "");
  EXPECT_EQ(report["static_verdict"], "present");
  const auto& families = report["sass"]["arches"][0]["target_families"];
  for (const char* family : folder.families)
    EXPECT_NE(std::find(families.begin(), families.end(), family), families.end())
        << family << " not in " << families;
  ASSERT_FALSE(report["build"]["kernels"].empty());
  for (const auto& kernel : report["build"]["kernels"]) {
    EXPECT_EQ(kernel["spill_store_bytes"], 0) << kernel["name"];
    EXPECT_EQ(kernel["spill_load_bytes"], 0) << kernel["name"];
  }
}

TEST(ExampleKernels, EveryExampleHasItsArchitecturesTargetInstructions) {
  int checked = 0;
  for (const ArchFolder& folder : kArchFolders)
    for (const fs::path& kernel : kernels_in(fs::path(PTXBENCH_EXAMPLES) / folder.folder)) {
      SCOPED_TRACE(kernel.string());
      expect_present(check_json(kernel, folder.arch), folder);
      ++checked;
    }
  // examples/sm90a/gemm_n7168_k5120.cu and examples/sm100a/gemm_n7168_k5120.cu at least.
  EXPECT_GE(checked, 2);
}

TEST(ExampleKernels, GemmExamplesIncludeThePackInsteadOfCopyingIt) {
  for (const char* file : {"sm90a/gemm_n7168_k5120.cu", "sm100a/gemm_n7168_k5120.cu"}) {
    std::ifstream in(fs::path(PTXBENCH_EXAMPLES) / file);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    ASSERT_FALSE(text.empty()) << file;
    const std::string arch = std::string(file).substr(0, std::string(file).find('/'));
    EXPECT_NE(text.find("#include \"knowledge/" + arch + "/ptx.cuh\""), std::string::npos) << file;
    EXPECT_EQ(text.find("asm volatile"), std::string::npos) << file << " carries its own PTX";
  }
}

} // namespace
