// `ptxbench check` and `ptxbench show` end to end: the real binary, the real nvcc and
// cuobjdump, the built-in problems.
#include "support/golden.hpp"
#include "support/ptxbench_cli.hpp"
#include "util/fs.hpp"
#include "util/subprocess.hpp"

#include <cstdlib>
#include <filesystem>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace {

using ptxbench::util::ProcessResult;

ProcessResult run_ptxbench(std::vector<std::string> args) {
  auto result = ptxbench::test_support::run_ptxbench(std::move(args), std::chrono::minutes(3));
  EXPECT_TRUE(result) << result.error().message;
  return *result;
}

std::string kernel(const std::string& name) {
  return std::string(PTXBENCH_TEST_KERNELS) + "/" + name;
}

nlohmann::json check_json(const std::string& kernel_name, const std::string& arch,
                          int exit_code = 0) {
  auto result = run_ptxbench(
      {"check", kernel(kernel_name), "--problem", "gemm_n7168_k5120", "--arch", arch, "--json"});
  EXPECT_EQ(result.exit_code, exit_code) << result.err;
  return nlohmann::json::parse(result.out).at(0);
}

TEST(CheckCli, WgmmaTmaKernelIsStaticallyPresentOnHopper) {
  auto report = check_json("sm90_wgmma_tma_gemm.cu", "sm_90a");
  EXPECT_EQ(report["outcome"], "ok");
  EXPECT_EQ(report["static_verdict"], "present");
  EXPECT_GT(report["build"]["kernels"][0]["registers"].get<int>(), 0);
}

TEST(CheckCli, SimtKernelIsStaticallyAbsentOnBothArchesAndExitsOne) {
  EXPECT_EQ(check_json("simt_gemm.cu", "sm_90a", 1)["static_verdict"], "absent");
  EXPECT_EQ(check_json("simt_gemm.cu", "sm_100a", 1)["static_verdict"], "absent");
}

TEST(CheckCli, AnAbsentVerdictDoesNotSayTheInstructionsAreInTheBinary) {
  auto result = run_ptxbench({"check", kernel("simt_gemm.cu"), "--problem", "gemm_n7168_k5120"});
  EXPECT_EQ(result.exit_code, 1) << result.err;
  EXPECT_NE(result.out.find("target instructions absent"), std::string::npos) << result.out;
  EXPECT_EQ(result.out.find("instructions are in the binary"), std::string::npos) << result.out;
}

TEST(CheckCli, JsonErrorsArePrintedAsJson) {
  auto missing =
      run_ptxbench({"check", "/nonexistent/kernel.cu", "--problem", "gemm_n7168_k5120", "--json"});
  EXPECT_EQ(missing.exit_code, 2);
  const auto error = nlohmann::json::parse(missing.out).at("error");
  EXPECT_EQ(error.at("kind"), "not_found") << missing.out;
  EXPECT_NE(error.at("message").get<std::string>().find("/nonexistent/kernel.cu"),
            std::string::npos);
  auto unknown = run_ptxbench({"check", kernel("simt_gemm.cu"), "--problem", "nope", "--json"});
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_TRUE(nlohmann::json::parse(unknown.out).at("error").contains("message")) << unknown.out;
}

// nvcc echoes the offending line; its escape sequences must not reach the terminal raw.
TEST(CheckCli, TextOutputShowsControlCharactersOfTheCandidateAsEscapes) {
  auto dir = std::filesystem::temp_directory_path() / "ptxbench_check_cli_escapes";
  std::filesystem::create_directories(dir);
  auto source = dir / "escapes.cu";
  ASSERT_TRUE(ptxbench::util::write_file_atomic(
      source, "void run(const void*, const void*, void*, long, void*) { undefined_fn(\"\x1b]0;"
              "owned\x07\x1b[2J\"); }\n"));
  auto result = run_ptxbench({"check", source.string(), "--problem", "gemm_n7168_k5120"});
  EXPECT_EQ(result.exit_code, 1) << result.err;
  EXPECT_NE(result.out.find("undefined_fn"), std::string::npos) << result.out;
  EXPECT_EQ(result.out.find('\x1b'), std::string::npos) << result.out;
  EXPECT_NE(result.out.find("\\x1b[2J"), std::string::npos) << result.out;
}

TEST(CheckCli, TextReportSaysStaticCannotTellDeadCode) {
  auto result =
      run_ptxbench({"check", kernel("sm90_wgmma_dead_branch.cu"), "--problem", "gemm_n7168_k5120"});
  EXPECT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("static verdict (sm_90a): target instructions present"),
            std::string::npos);
  EXPECT_NE(result.out.find("dead code and never-launched kernels look the same"),
            std::string::npos);
}

TEST(CheckCli, BannedLibraryIsRejectedBeforeCompilingWithThePapersMessage) {
  auto dir = std::filesystem::temp_directory_path() / "ptxbench_check_cli";
  std::filesystem::create_directories(dir);
  auto source = dir / "uses_cublas.cu";
  ASSERT_TRUE(ptxbench::util::write_file_atomic(
      source,
      "#include <cublas_v2.h>\nvoid run(const void*, const void*, void*, long, void*) {}\n"));
  auto result = run_ptxbench({"check", source.string(), "--problem", "gemm_n7168_k5120"});
  EXPECT_EQ(result.exit_code, 1);
  EXPECT_NE(result.out.find("ERROR: Your kernel uses cuBLAS library calls"), std::string::npos);
  EXPECT_EQ(result.out.find("compile "), std::string::npos) << "nothing may be compiled";
}

// nvcc echoes the offending source line byte for byte; a kernel file that is not UTF-8 must
// still give a JSON report (with U+FFFD in place of the bad bytes), not an exception.
TEST(CheckCli, CompileErrorOnALineThatIsNotUtf8GivesAJsonReport) {
  auto dir = std::filesystem::temp_directory_path() / "ptxbench_check_cli_utf8";
  std::filesystem::create_directories(dir);
  auto source = dir / "not_utf8.cu";
  ASSERT_TRUE(ptxbench::util::write_file_atomic(
      source, "const char* s = \"\xff\xfe\";\nvoid run(const void*, const void*, void*, long, "
              "void*) { undefined_fn(\"\xff\"); }\n"));
  auto result = run_ptxbench({"check", source.string(), "--problem", "gemm_n7168_k5120", "--json"});
  EXPECT_EQ(result.exit_code, 1) << result.err;
  const auto report = nlohmann::json::parse(result.out).at(0);
  EXPECT_EQ(report["outcome"], "compile_error") << result.out;
  EXPECT_NE(result.out.find("\xef\xbf\xbd"), std::string::npos) << "U+FFFD for the bad bytes";
}

TEST(CheckCli, UnknownProblemIsABadInputWithASuggestion) {
  auto result = run_ptxbench({"check", kernel("simt_gemm.cu"), "--problem", "gemm_n7168"});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_NE(result.err.find("did you mean 'gemm_n7168_k5120'"), std::string::npos) << result.err;
}

TEST(CheckCli, MissingKernelFileIsABadInput) {
  auto result = run_ptxbench({"check", "/nonexistent/kernel.cu", "--problem", "gemm_n7168_k5120"});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_NE(result.err.find("/nonexistent/kernel.cu"), std::string::npos);
}

TEST(CheckCli, AFolderOrABinaryFileIsABadInputNotAnEmptyCandidate) {
  // `check DIR` used to compile an empty file and report a link error with exit 1.
  auto folder = run_ptxbench({"check", PTXBENCH_TEST_KERNELS, "--problem", "gemm_n7168_k5120"});
  EXPECT_EQ(folder.exit_code, 2) << folder.out << folder.err;
  EXPECT_NE(folder.err.find("is a folder"), std::string::npos) << folder.err;
  auto binary = run_ptxbench({"check", PTXBENCH_BINARY, "--problem", "gemm_n7168_k5120"});
  EXPECT_EQ(binary.exit_code, 2) << binary.out << binary.err;
  EXPECT_NE(binary.err.find("is not source text"), std::string::npos) << binary.err;
  EXPECT_TRUE(binary.out.empty()) << "nothing of the binary is echoed";
}

// Issue 17 item 12: a file without NUL bytes that is mostly non-text (here every byte value but
// 0, as an archive or a NUL-free blob has) is refused as binary before nvcc sees it, a .py too;
// a kernel with a Latin-1 literal is still compiled (the UTF-8 test above).
TEST(CheckCli, AMostlyNonTextFileWithoutNulBytesIsRefusedAsBinary) {
  auto dir = std::filesystem::temp_directory_path() / "ptxbench_check_cli_blob";
  std::filesystem::create_directories(dir);
  std::string blob;
  for (int round = 0; round < 8; ++round)
    for (int byte = 1; byte < 256; ++byte)
      blob += static_cast<char>(byte);
  for (const char* name : {"blob.cu", "blob.py"}) {
    ASSERT_TRUE(ptxbench::util::write_file_atomic(dir / name, blob));
    auto result = run_ptxbench({"check", (dir / name).string(), "--problem", "gemm_n7168_k5120"});
    EXPECT_EQ(result.exit_code, 2) << name << result.out << result.err;
    EXPECT_NE(result.err.find("is not source text"), std::string::npos) << result.err;
    EXPECT_NE(result.err.find("control characters or not UTF-8"), std::string::npos) << result.err;
    EXPECT_TRUE(result.out.empty()) << "nothing of the file is echoed";
  }
}

TEST(ShowCli, PrintsTheGeneratedSignatureAndBaseline) {
  auto result = run_ptxbench({"show", "gemm_n7168_k5120"});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  ptxbench::test_support::expect_golden("cli/show_gemm.txt", result.out);
}

} // namespace
