// `ptxbench eval` as a user runs it, on any machine: the GPU is hidden from the child process
// (CUDA_VISIBLE_DEVICES=""), so these tests see the CPU-only behaviour everywhere.
#include "trace/json_io.hpp"
#include "util/fs.hpp"
#include "util/subprocess.hpp"

#include <filesystem>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <string>
#include <unistd.h>

namespace ptxbench {
namespace {

const std::string kProblem = "gemm_n7168_k5120";

util::ProcessResult eval(std::vector<std::string> args) {
  args.insert(args.begin(), {PTXBENCH_BINARY, "eval"});
  util::PosixProcessRunner runner;
  util::ProcessOptions options;
  options.extra_env = {"CUDA_VISIBLE_DEVICES="};
  auto result = runner.run(args, options);
  if (!result)
    throw std::runtime_error(result.error().message);
  return *result;
}

std::string kernel(const std::string& name) {
  return std::string(PTXBENCH_TEST_KERNELS) + "/" + name;
}

std::filesystem::path temp_file(const std::string& name, const std::string& content) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("ptxbench-eval-test-" + std::to_string(::getpid()) + "-" + name);
  EXPECT_TRUE(util::write_file_atomic(path, content));
  return path;
}

TEST(EvalCli, WithoutAGpuItChecksStaticallyAndExitsThree) {
  const auto result = eval({kernel("sm90_wgmma_tma_gemm.cu"), "--problem", kProblem});
  EXPECT_EQ(result.exit_code, 3) << result.out << result.err;
  EXPECT_NE(result.out.find("need a GPU"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("static present"), std::string::npos) << result.out;
}

TEST(EvalCli, JsonWithoutAGpuHasNoStatusButAStaticReport) {
  const auto result = eval({kernel("simt_gemm.cu"), "--problem", kProblem, "--json"});
  EXPECT_EQ(result.exit_code, 3) << result.err;
  const auto json = nlohmann::json::parse(result.out);
  EXPECT_TRUE(json["status"].is_null());
  EXPECT_EQ(json["check"]["outcome"], "ok");
  EXPECT_TRUE(json["trace"]["evaluation"].is_null());
  EXPECT_TRUE(json["trace"]["solution"].get<std::string>().starts_with(kProblem + "_"));
}

TEST(EvalCli, UnknownProblemIsBadInput) {
  const auto result = eval({kernel("simt_gemm.cu"), "--problem", "gemm_nope"});
  EXPECT_EQ(result.exit_code, 2) << result.err;
}

TEST(EvalCli, UnknownAuditIsBadInput) {
  const auto result = eval({kernel("simt_gemm.cu"), "--problem", kProblem, "--audit", "nsys"});
  EXPECT_EQ(result.exit_code, 2) << result.out << result.err;
  EXPECT_NE(result.err.find("unknown --audit 'nsys'"), std::string::npos) << result.err;
}

TEST(EvalCli, AnUnknownCountsCacheModeOrANegativeSeedIsBadInput) {
  auto result =
      eval({kernel("simt_gemm.cu"), "--problem", kProblem, "--counts-cache", "sometimes"});
  EXPECT_EQ(result.exit_code, 2) << result.out << result.err;
  EXPECT_NE(result.err.find("unknown --counts-cache 'sometimes' (on, off)"), std::string::npos)
      << result.err;
  result = eval({kernel("simt_gemm.cu"), "--problem", kProblem, "--seed", "-3"});
  EXPECT_EQ(result.exit_code, 2) << result.out << result.err;
  EXPECT_NE(result.err.find("--seed"), std::string::npos) << result.err;
}

TEST(EvalCli, SanitizeAndAuditWithoutAGpuSayTheyNeedOne) {
  const auto result =
      eval({kernel("simt_gemm.cu"), "--problem", kProblem, "--sanitize", "--audit", "ncu"});
  EXPECT_EQ(result.exit_code, 3) << result.out << result.err;
  EXPECT_NE(result.out.find("timing, the memory check, the ncu audit and dynamic instruction "
                            "counts need a GPU"),
            std::string::npos)
      << result.out;
}

TEST(EvalCli, DebugWithoutAGpuSaysItNeedsOne) {
  const auto result = eval({kernel("simt_gemm.cu"), "--problem", kProblem, "--debug"});
  EXPECT_EQ(result.exit_code, 3) << result.out << result.err;
  EXPECT_NE(result.out.find("timing, the debugger pass and dynamic instruction counts need a GPU"),
            std::string::npos)
      << result.out;
}

TEST(EvalCli, MissingKernelFileIsBadInput) {
  const auto result = eval({"/nonexistent/kernel.cu", "--problem", kProblem});
  EXPECT_EQ(result.exit_code, 2) << result.err;
}

TEST(EvalCli, WrongRunSignatureIsCompileErrorNamingTheExpectedSignature) {
  const auto result = eval({kernel("gemm_wrong_signature.cu"), "--problem", kProblem});
  EXPECT_EQ(result.exit_code, 1) << result.out << result.err;
  EXPECT_NE(result.out.find("COMPILE_ERROR"), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("const __nv_bfloat16* A"), std::string::npos) << result.out;
}

TEST(EvalCli, BannedLibraryIsCompileErrorWithTheGateMessageInTheTrace) {
  const auto source = temp_file("cublas.cu", "#include <cublas_v2.h>\nvoid run() {}\n");
  const auto trace_file = temp_file("traces.jsonl", "");
  const auto result =
      eval({source.string(), "--problem", kProblem, "--trace-out", trace_file.string()});
  EXPECT_EQ(result.exit_code, 1) << result.out << result.err;
  auto traces = trace::load_traces_jsonl(trace_file);
  ASSERT_TRUE(traces) << traces.error().message;
  ASSERT_EQ(traces->size(), 1u);
  const auto& evaluation = traces->front().evaluation;
  ASSERT_TRUE(evaluation);
  EXPECT_EQ(evaluation->status, trace::EvaluationStatus::compile_error);
  EXPECT_NE(evaluation->log.find("cuBLAS"), std::string::npos) << evaluation->log;
  EXPECT_FALSE(evaluation->correctness);
  std::filesystem::remove(source);
  std::filesystem::remove(trace_file);
}

} // namespace
} // namespace ptxbench
