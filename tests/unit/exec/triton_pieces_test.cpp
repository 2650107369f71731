// The supervisor's Triton pieces that need no GPU: the child's command line and environment
// per language, the binding of `run`'s parameters, the cubin listing and symbols on cubins
// built here by nvcc (as Triton lays them out in its cache), the static report over them, and
// the launch rules' decisions with cubin kernel names and late cubins.
#include "exec/child_command.hpp"
#include "exec/launch_rules.hpp"
#include "exec/triton_binding.hpp"
#include "exec/triton_cubins.hpp"
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
  ChildLaunch launch;
  launch.candidate_binary = "/b/ptxbench-candidate";
  const ChildCommand command = child_command(launch, 1, 3, 4);
  EXPECT_EQ(command.argv, (std::vector<std::string>{"/b/ptxbench-candidate", "--device", "1",
                                                    "--request-fd", "3", "--reply-fd", "4"}));
  EXPECT_EQ(command.env, std::vector<std::string>{"CUDA_CACHE_DISABLE=1"});
}

TEST(ChildCommand, ATritonCandidatesChildIsThePythonModuleWithItsOwnCacheFolder) {
  ChildLaunch launch;
  launch.language = compile::Language::triton;
  launch.candidate_binary = "/b/ptxbench-candidate";
  launch.python = "/usr/bin/python3.12";
  launch.python_root = "/src/python";
  launch.child_library = "/b/lib/libptxbench_child.so";
  launch.triton_work = "/tmp/eval-7";
  const ChildCommand command = child_command(launch, 0, 3, 4);
  EXPECT_EQ(command.argv,
            (std::vector<std::string>{"/usr/bin/python3.12", "-m", "ptxbench_triton.child",
                                      "--library", "/b/lib/libptxbench_child.so", "--device", "0",
                                      "--request-fd", "3", "--reply-fd", "4"}));
  EXPECT_TRUE(has(command.env, "PYTHONPATH=/src/python"));
  EXPECT_TRUE(has(command.env, "TRITON_CACHE_DIR=/tmp/eval-7/triton-cache"));
  EXPECT_TRUE(has(command.env, "TRITON_HOME=/tmp/eval-7/triton-home"));
  EXPECT_TRUE(has(command.env, "CUDA_CACHE_DISABLE=1"));
  EXPECT_EQ(triton_cache_dir("/tmp/eval-7"), "/tmp/eval-7/triton-cache");
  launch.inherited_pythonpath = "/venv/site";
  EXPECT_TRUE(has(child_command(launch, 0, 3, 4).env, "PYTHONPATH=/src/python:/venv/site"));
}

TEST(ChildCommand, ATritonCandidatesSingleCallIsThePythonModuleWithTheSameWords) {
  ChildLaunch launch;
  launch.language = compile::Language::triton;
  launch.python = "/usr/bin/python3.12";
  launch.python_root = "/src/python";
  launch.child_library = "/b/lib/libptxbench_child.so";
  launch.triton_work = "/tmp/eval-7";
  const auto words =
      protocol::single_call_argv("/b/ptxbench-candidate", 0, "/tmp/s/spec.json", "/tmp/s/in", {});
  const ChildCommand command = child_command(launch, words);
  EXPECT_EQ(command.argv, (std::vector<std::string>{
                              "/usr/bin/python3.12", "-m", "ptxbench_triton.child", "--library",
                              "/b/lib/libptxbench_child.so", "--device", "0", "--single-call",
                              "/tmp/s/spec.json", "--inputs", "/tmp/s/in"}));
  EXPECT_TRUE(has(command.env, "TRITON_CACHE_DIR=/tmp/eval-7/triton-cache"));
  ChildLaunch cuda;
  cuda.candidate_binary = "/b/ptxbench-candidate";
  EXPECT_EQ(child_command(cuda, words).argv, words);
  EXPECT_EQ(child_command(cuda, words).env, std::vector<std::string>{"CUDA_CACHE_DISABLE=1"});
}

trace::Definition gemm_definition() {
  trace::Definition d;
  d.name = "gemm_scaled";
  d.axes = {{"M", trace::Axis::Kind::variable, 0, {}},
            {"N", trace::Axis::Kind::constant, 64, {}},
            {"K", trace::Axis::Kind::constant, 32, {}}};
  d.inputs = {{"A", std::vector<std::string>{"M", "K"}, trace::DType::bfloat16, {}},
              {"alpha", std::nullopt, trace::DType::float32, {}},
              {"B", std::vector<std::string>{"N", "K"}, trace::DType::bfloat16, {}}};
  d.outputs = {{"C", std::vector<std::string>{"M", "N"}, trace::DType::float32, {}}};
  return d;
}

TEST(TritonBinding, ParametersComeInRunsOrderWithWorkloadShapesAndIndices) {
  auto text = triton_binding(gemm_definition(), {4096});
  ASSERT_TRUE(text) << text.error().message;
  const auto j = nlohmann::json::parse(*text);
  EXPECT_EQ(j["params"], nlohmann::json({"A", "alpha", "B", "C", "M"}));
  const auto& args = j["args"];
  ASSERT_EQ(args.size(), 5u);
  EXPECT_EQ(args[0],
            nlohmann::json(
                {{"kind", "tensor"}, {"index", 0}, {"shape", {4096, 32}}, {"dtype", "bfloat16"}}));
  EXPECT_EQ(args[1], nlohmann::json({{"kind", "scalar"}, {"index", 0}, {"dtype", "float32"}}));
  EXPECT_EQ(args[2]["index"], 1);
  EXPECT_EQ(args[3]["index"], 2);
  EXPECT_EQ(args[3]["shape"], nlohmann::json({4096, 64}));
  EXPECT_EQ(args[4], nlohmann::json({{"kind", "axis"}, {"index", 0}}));
}

TEST(TritonBinding, AMissingAxisValueOrAnUnknownDimensionIsInvalidInput) {
  EXPECT_FALSE(triton_binding(gemm_definition(), {}));
  auto definition = gemm_definition();
  definition.inputs[0].shape = std::vector<std::string>{"Q", "K"};
  auto bad = triton_binding(definition, {8});
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("`Q`"), std::string::npos);
  definition.inputs[0].shape = std::vector<std::string>{"8", "K"};
  EXPECT_TRUE(triton_binding(definition, {8}));
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
