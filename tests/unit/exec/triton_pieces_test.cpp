// The supervisor's Triton pieces that need no GPU: the child's command line and environment
// per candidate (a spare's, a CUDA and a Triton candidate's), the cubin listing and symbols on
// cubins built here by nvcc (as Triton lays them out in its cache), the static report over them,
// and the launch rules' decisions with cubin kernel names and late cubins.
#include "exec/child_command.hpp"
#include "exec/cubin_folder.hpp"
#include "exec/launch_rules.hpp"
#include "frontend/cuda/cuda_frontend.hpp"
#include "frontend/triton/triton_frontend.hpp"
#include "protocol/child_arguments.hpp"
#include "sass/report.hpp"
#include "support/scratch_dir.hpp"
#include "util/subprocess.hpp"

#include <algorithm>
#include <fstream>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace ptxbench::exec {
namespace {

bool has(const std::vector<std::string>& words, const std::string& word) {
  return std::find(words.begin(), words.end(), word) != words.end();
}

TEST(ChildCommand, ACudaCandidatesChildIsPtxbenchCandidateWithoutTheDriversJitCache) {
  const frontend::CudaCandidate candidate("/cache/kernel.so");
  ChildLaunch launch;
  launch.paths.candidate_binary = "/b/ptxbench-candidate";
  for (const frontend::Candidate* served : {static_cast<const frontend::Candidate*>(nullptr),
                                            static_cast<const frontend::Candidate*>(&candidate)}) {
    launch.candidate = served; // a spare, then the candidate's own
    const ChildCommand command = child_command(launch, 1, 3, 4);
    EXPECT_EQ(command.argv, (std::vector<std::string>{"/b/ptxbench-candidate", "--device", "1",
                                                      "--request-fd", "3", "--reply-fd", "4"}));
    EXPECT_EQ(command.env, std::vector<std::string>{"CUDA_CACHE_DISABLE=1"});
  }
}

frontend::ChildPaths python_paths() {
  frontend::ChildPaths paths;
  paths.candidate_binary = "/b/ptxbench-candidate";
  paths.python = "/usr/bin/python3.12";
  paths.python_root = "/src/python";
  paths.child_library = "/b/lib/libptxbench_child.so";
  return paths;
}

TEST(ChildCommand, ATritonCandidatesChildIsThePythonModuleWithItsOwnCacheFolder) {
  const frontend::TritonCandidate candidate("/tmp/eval-7", {}, {});
  ChildLaunch launch{python_paths(), &candidate};
  const ChildCommand command = child_command(launch, 0, 3, 4);
  EXPECT_EQ(command.argv,
            (std::vector<std::string>{"/usr/bin/python3.12", "-m", "ptxbench_triton.child",
                                      "--library", "/b/lib/libptxbench_child.so", "--device", "0",
                                      "--request-fd", "3", "--reply-fd", "4"}));
  EXPECT_TRUE(has(command.env, "PYTHONPATH=/src/python"));
  EXPECT_TRUE(has(command.env, "TRITON_CACHE_DIR=/tmp/eval-7/triton-cache"));
  EXPECT_TRUE(has(command.env, "TRITON_HOME=/tmp/eval-7/triton-home"));
  EXPECT_TRUE(has(command.env, "CUDA_CACHE_DISABLE=1"));
  EXPECT_EQ(candidate.warm_up_cubins(), std::filesystem::path("/tmp/eval-7/triton-cache"));
  EXPECT_EQ(candidate.library(), "/tmp/eval-7/kernel.py");
  launch.paths.inherited_pythonpath = "/venv/site";
  EXPECT_TRUE(has(child_command(launch, 0, 3, 4).env, "PYTHONPATH=/src/python:/venv/site"));
}

TEST(ChildCommand, ATritonCandidatesSingleCallIsThePythonModuleWithTheSameWords) {
  const frontend::TritonCandidate candidate("/tmp/eval-7", {}, {});
  const ChildLaunch launch{python_paths(), &candidate};
  const auto words =
      protocol::single_call_argv("/b/ptxbench-candidate", 0, "/tmp/s/spec.json", "/tmp/s/in", {});
  const ChildCommand command = child_command(launch, words);
  EXPECT_EQ(command.argv, (std::vector<std::string>{
                              "/usr/bin/python3.12", "-m", "ptxbench_triton.child", "--library",
                              "/b/lib/libptxbench_child.so", "--device", "0", "--single-call",
                              "/tmp/s/spec.json", "--inputs", "/tmp/s/in"}));
  EXPECT_TRUE(has(command.env, "TRITON_CACHE_DIR=/tmp/eval-7/triton-cache"));
  const frontend::CudaCandidate cuda_candidate("/cache/kernel.so");
  const ChildLaunch cuda{python_paths(), &cuda_candidate};
  EXPECT_EQ(child_command(cuda, words).argv, words);
  EXPECT_EQ(child_command(cuda, words).env, std::vector<std::string>{"CUDA_CACHE_DISABLE=1"});
}

// Two kernels built by nvcc as Triton would lay them out: <cache>/<hash>/<name>.cubin, beside
// the JSON and PTX files Triton also writes.
class TritonCubins : public ::testing::Test {
protected:
  void build(const std::string& kernel, const std::filesystem::path& out) {
    util::PosixProcessRunner runner;
    std::filesystem::create_directories(out.parent_path());
    auto done = runner.run({"nvcc", "-cubin", "-arch=sm_90a", "-o", out.string(),
                            std::string(PTXBENCH_TEST_KERNELS) + "/" + kernel},
                           {});
    ASSERT_TRUE(done) << done.error().message;
    ASSERT_TRUE(done->succeeded()) << done->err;
  }
  test_support::ScratchDir m_dir;
};

TEST_F(TritonCubins, TheListingHoldsOnlyCubinsSortedAndTheirSymbolsNameTheKernels) {
  const auto cache = m_dir.path() / "triton-cache";
  build("sm90_wgmma_tma_gemm.cu", cache / "h2" / "gemm.cubin");
  build("simt_gemm.cu", cache / "h1" / "simt.cubin");
  std::ofstream(cache / "h1" / "simt.json") << "{}";
  std::ofstream(cache / "h1" / "simt.ptx") << "";
  const auto cubins = list_cubins(cache);
  ASSERT_EQ(cubins.size(), 2u);
  EXPECT_EQ(cubins[0], cache / "h1" / "simt.cubin");
  EXPECT_EQ(cubins[1], cache / "h2" / "gemm.cubin");
  const auto names = cubin_kernel_names(cubins);
  ASSERT_FALSE(names.empty());
  for (const std::string& name : names)
    EXPECT_NE(name.find("gemm"), std::string::npos) << name;
  EXPECT_TRUE(list_cubins(m_dir.path() / "absent").empty());
}

TEST_F(TritonCubins, ACubinThatAppearsLaterIsNew) {
  const auto cache = m_dir.path() / "triton-cache";
  build("simt_gemm.cu", cache / "h1" / "simt.cubin");
  const auto before = list_cubins(cache);
  EXPECT_TRUE(new_cubins(before, list_cubins(cache)).empty());
  build("simt_gemm.cu", cache / "h9" / "simt.cubin");
  const auto added = new_cubins(before, list_cubins(cache));
  ASSERT_EQ(added.size(), 1u);
  EXPECT_EQ(added[0], cache / "h9" / "simt.cubin");
}

TEST_F(TritonCubins, TheStaticReportOverTheCacheFindsTheGemmsTargetInstructions) {
  const auto cache = m_dir.path() / "triton-cache";
  build("sm90_wgmma_tma_gemm.cu", cache / "h2" / "gemm.cubin");
  build("simt_gemm.cu", cache / "h1" / "simt.cubin");
  util::PosixProcessRunner runner;
  auto cuobjdump = sass::locate_cuobjdump(sass::ToolSearch::from_environment());
  ASSERT_TRUE(cuobjdump) << cuobjdump.error().message;
  const sass::Disassembler disassembler(runner, *cuobjdump, std::chrono::seconds(120), {});
  auto report = sass::analyze_binaries(disassembler, list_cubins(cache));
  ASSERT_TRUE(report) << report.error().message;
  const sass::ArchReport* arch = sass::find_arch(*report, "sm_90a");
  ASSERT_NE(arch, nullptr);
  EXPECT_EQ(arch->functions.size(), cubin_kernel_names(list_cubins(cache)).size());
}

LaunchEvidence triton_evidence(std::vector<std::string> kernels) {
  LaunchEvidence e;
  for (int set = 0; set < 3; ++set)
    e.correctness.push_back({set, false, kernels, 1.0});
  e.correctness.push_back({2, true, kernels, 0.95});
  e.timed.push_back({kernels, 150});
  e.timed_ms = 1.02;
  return e;
}

TEST(TritonLaunchRules, KernelsNamedByTheCubinsAreTheCandidatesOwn) {
  auto evidence = triton_evidence({"gemm_persistent"});
  evidence.cubin_functions = std::vector<std::string>{"gemm_persistent"};
  EXPECT_FALSE(judge_launches(evidence, nullptr));
}

TEST(TritonLaunchRules, ATorchMatmulBesideTheTritonKernelIsForeignAndNamed) {
  const std::string cublas = "nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_TNT";
  auto evidence = triton_evidence({"gemm_kernel", cublas});
  evidence.cubin_functions = std::vector<std::string>{"gemm_kernel"};
  auto broken = judge_launches(evidence, nullptr);
  ASSERT_TRUE(broken);
  EXPECT_EQ(broken->rule, Rule::foreign_kernel);
  EXPECT_EQ(broken->kernels, std::vector<std::string>{cublas});
  EXPECT_NE(broken->message.find("kernels Triton compiled for it"), std::string::npos);
  EXPECT_NE(broken->message.find(cublas), std::string::npos);
}

TEST(TritonLaunchRules, WithoutCubinsEveryKernelIsForeign) {
  auto evidence = triton_evidence({"gemm_persistent"});
  evidence.cubin_functions = std::vector<std::string>{};
  auto broken = judge_launches(evidence, nullptr);
  ASSERT_TRUE(broken);
  EXPECT_EQ(broken->rule, Rule::foreign_kernel);
}

TEST(TritonLaunchRules, ACubinCompiledAfterTheWarmUpIsInconsistentWork) {
  auto evidence = triton_evidence({"gemm_persistent"});
  evidence.cubin_functions = std::vector<std::string>{"gemm_persistent"};
  evidence.late_cubins = {"h9/gemm_persistent.cubin"};
  auto broken = judge_launches(evidence, nullptr);
  ASSERT_TRUE(broken);
  EXPECT_EQ(broken->rule, Rule::inconsistent_work);
  EXPECT_NE(broken->message.find("h9/gemm_persistent.cubin"), std::string::npos);
}

} // namespace
} // namespace ptxbench::exec
