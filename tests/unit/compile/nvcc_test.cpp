// These tests run the real nvcc (compile and link only; no GPU needed). Each nvcc run costs a
// few seconds, so there are few of them, each with its own cache folder.
#include "compile/nvcc.hpp"
#include "definitions.hpp"
#include "util/fs.hpp"
#include "util/paths.hpp"
#include "util/read_confinement.hpp"

#include <cstdlib>
#include <gtest/gtest.h>

using namespace ptxbench;
using namespace ptxbench::compile;
using namespace ptxbench::compile::testing;
namespace fs = std::filesystem;

namespace {

// Delegates to the real runner and counts the processes started.
class CountingRunner final : public util::ProcessRunner {
public:
  util::Expected<util::ProcessResult> run(const std::vector<std::string>& argv,
                                          const util::ProcessOptions& options) override {
    ++m_calls;
    return m_real.run(argv, options);
  }
  int calls() const { return m_calls; }

private:
  util::PosixProcessRunner m_real;
  int m_calls = 0;
};

std::string fixture(const std::string& name) {
  auto text = util::read_file(fs::path(PTXBENCH_TEST_DATA) / "compile" / name);
  if (!text)
    throw std::runtime_error(text.error().message);
  return *text;
}

class NvccTest : public ::testing::Test {
protected:
  void SetUp() override {
    if (default_nvcc().empty())
      GTEST_SKIP() << "nvcc not found";
    std::string pattern = (fs::temp_directory_path() / "ptxbench_compile_test_XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    m_cache = pattern;
    ::setenv("PTXBENCH_CACHE", m_cache.c_str(), 1);
  }
  void TearDown() override {
    ::unsetenv("PTXBENCH_CACHE");
    if (!m_cache.empty())
      fs::remove_all(m_cache);
  }

  CompileRequest axpy_request(const std::string& file, Arch arch) const {
    auto signature = make_signature(axpy_definition());
    return CompileRequest::for_candidate(fixture(file), *signature, arch);
  }

  std::size_t cache_entries() const {
    std::size_t count = 0;
    for (const auto& entry : fs::directory_iterator(m_cache / "compile"))
      count += entry.path().filename() != ".staging" ? 1 : 0;
    return count;
  }

  fs::path m_cache;
  CountingRunner m_runner;
};

} // namespace

TEST(Nvcc, ArchFlagsUseGencodeNeverPlainArch) {
  EXPECT_EQ(gencode_flags(Arch::sm_90a),
            (std::vector<std::string>{"-gencode", "arch=compute_90a,code=sm_90a"}));
  EXPECT_EQ(gencode_flags(Arch::sm_100a),
            (std::vector<std::string>{"-gencode", "arch=compute_100a,code=sm_100a"}));
  auto flags = nvcc_flags(Arch::sm_90a);
  for (const auto& flag : flags)
    EXPECT_FALSE(flag.starts_with("-arch")) << flag;
  EXPECT_EQ(flags.back(), "--no-undefined");
  EXPECT_EQ(parse_arch("sm_100a"), Arch::sm_100a);
  EXPECT_EQ(parse_arch("sm_90"), std::nullopt);
}

TEST_F(NvccTest, CorrectCandidateBuildsForHopperAndBlackwellWithPtxasRecords) {
  NvccCompiler compiler(m_runner);
  for (Arch arch : {Arch::sm_90a, Arch::sm_100a}) {
    auto result = compiler.compile(axpy_request("axpy_candidate.cu", arch));
    ASSERT_TRUE(result) << result.error().message;
    ASSERT_TRUE(result->ok) << result->log;
    EXPECT_TRUE(fs::exists(result->library));
    EXPECT_TRUE(result->library.string().starts_with(m_cache.string()));
    ASSERT_EQ(result->kernels.size(), 1u) << result->log;
    const auto& kernel = result->kernels[0];
    EXPECT_EQ(kernel.arch, to_string(arch));
    EXPECT_GT(kernel.registers, 0);
    EXPECT_EQ(kernel.smem_bytes, 512);
    EXPECT_EQ(kernel.barriers, 1);
    EXPECT_NE(kernel.demangled_name.find("axpy_kernel<128>"), std::string::npos)
        << kernel.demangled_name;
  }
}

TEST_F(NvccTest, CandidateIncludingAKnowledgePackHeaderBuilds) {
  // Prompts tell models to write #include "knowledge/sm90a/ptx.cuh" (knowledge/README.md).
  CompileRequest request = axpy_request("axpy_candidate.cu", Arch::sm_90a);
  request.source = "#include \"knowledge/sm90a/ptx.cuh\"\n" + request.source;
  NvccCompiler compiler(m_runner);
  auto result = compiler.compile(request);
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_TRUE(result->ok) << result->log;
}

// Catalogue rows 1 and 24: nvcc reads the toolkit, the system's headers and libraries, the
// knowledge packs and its own build folder, so `.incbin` in an asm statement cannot carry any
// other file into kernel.so: not a file beside the compile cache (here), not another candidate's
// build, not a vendor kernel library of the toolkit (also tried where the toolkit has cuBLASLt).
TEST_F(NvccTest, AnIncbinOfAFileOutsideItsBuildFolderFailsToBuild) {
  if (auto probe = util::make_read_ruleset({}); !probe)
    GTEST_SKIP() << "this kernel has no Landlock: " << probe.error().message;
  const fs::path secret = m_cache / "secret.bin";
  ASSERT_TRUE(util::write_file_atomic(secret, "a library's kernels"));
  std::vector<fs::path> files{secret};
  const fs::path lib = default_nvcc().parent_path().parent_path() / "lib64";
  for (const auto& name : {"libcublasLt.so", "libcublas.so"})
    if (fs::exists(lib / name))
      files.push_back(lib / name);
  NvccCompiler compiler(m_runner);
  auto with_incbin = [&](const fs::path& file) {
    CompileRequest request = axpy_request("axpy_candidate.cu", Arch::sm_90a);
    request.source += "\nasm(\".pushsection .rodata\\n.incbin \\\"" + file.string() +
                      "\\\", 0, 64\\n.popsection\");\n";
    return compiler.compile(request);
  };
  // The same statement builds with a file nvcc may read: the knowledge packs.
  auto allowed = with_incbin(util::data_root() / "knowledge" / "README.md");
  ASSERT_TRUE(allowed) << allowed.error().message;
  EXPECT_TRUE(allowed->ok) << allowed->log;
  for (const fs::path& file : files) {
    ASSERT_TRUE(fs::exists(file));
    auto result = with_incbin(file);
    ASSERT_TRUE(result) << result.error().message;
    EXPECT_FALSE(result->ok) << file;
    // GNU as says "file not found" for a file it may not open.
    EXPECT_NE(result->log.find("Error: file not found: " + file.string()), std::string::npos)
        << result->log;
  }
}

TEST_F(NvccTest, SecondCompileIsACacheHitWithoutRunningNvcc) {
  NvccCompiler compiler(m_runner);
  auto first = compiler.compile(axpy_request("axpy_candidate.cu", Arch::sm_90a));
  ASSERT_TRUE(first && first->ok);
  int calls_after_first = m_runner.calls();
  EXPECT_EQ(calls_after_first, 2); // nvcc --version, then the build

  auto second = compiler.compile(axpy_request("axpy_candidate.cu", Arch::sm_90a));
  ASSERT_TRUE(second && second->ok);
  EXPECT_EQ(m_runner.calls(), calls_after_first);
  EXPECT_TRUE(second->cache_hit);
  EXPECT_FALSE(first->cache_hit);
  EXPECT_EQ(second->cache_key, first->cache_key);
  EXPECT_EQ(second->library, first->library);
  EXPECT_EQ(second->log, first->log);
  ASSERT_EQ(second->kernels.size(), 1u);
  EXPECT_EQ(second->kernels[0].registers, first->kernels[0].registers);
  EXPECT_EQ(cache_entries(), 1u);
}

TEST_F(NvccTest, WrongRunSignatureFailsToLinkAndQuotesTheExpectedSignature) {
  NvccCompiler compiler(m_runner);
  auto result = compiler.compile(axpy_request("axpy_wrong_signature.cu", Arch::sm_90a));
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_FALSE(result->ok);
  EXPECT_TRUE(result->library.empty());
  EXPECT_NE(result->diagnostic.find(
                "void run(const float* x, float alpha, float* y, int64_t N, cudaStream_t stream);"),
            std::string::npos)
      << result->diagnostic;
  ASSERT_FALSE(result->first_errors.empty());
  EXPECT_TRUE(result->first_errors[0].starts_with("undefined reference to `run(")) << result->log;

  auto again = compiler.compile(axpy_request("axpy_wrong_signature.cu", Arch::sm_90a));
  ASSERT_TRUE(again);
  EXPECT_TRUE(again->cache_hit);
  EXPECT_EQ(again->diagnostic, result->diagnostic);
}

TEST_F(NvccTest, SyntaxErrorReportsTheFirstErrorLine) {
  NvccCompiler compiler(m_runner);
  auto result = compiler.compile(axpy_request("axpy_syntax_error.cu", Arch::sm_90a));
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_FALSE(result->ok);
  ASSERT_FALSE(result->first_errors.empty()) << result->log;
  EXPECT_TRUE(result->first_errors[0].starts_with("kernel.cu(7): error: expected a \";\""))
      << result->first_errors[0];
  EXPECT_NE(result->diagnostic.find("kernel.cu(7): error"), std::string::npos);
}

TEST_F(NvccTest, CompileTimeoutIsAnErrorAndIsNotCached) {
  NvccCompiler compiler(m_runner);
  ASSERT_TRUE(compiler.version());
  CompileRequest request = axpy_request("axpy_candidate.cu", Arch::sm_90a);
  request.timeout = std::chrono::milliseconds(50);
  auto result = compiler.compile(request);
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().kind, util::ErrorKind::timeout);
  EXPECT_EQ(cache_entries(), 0u);
  EXPECT_TRUE(fs::is_empty(m_cache / "compile" / ".staging"));
}

TEST_F(NvccTest, ShimForEveryDTypeCompilesAndLinks) {
  trace::Definition d;
  d.name = "all_dtypes";
  d.axes = {var_axis("n")};
  const DType all[] = {DType::float32,       DType::float16,     DType::bfloat16,
                       DType::float8_e4m3fn, DType::float8_e5m2, DType::float4_e2m1,
                       DType::int64,         DType::int32,       DType::int16,
                       DType::int8,          DType::boolean};
  for (DType dtype : all) {
    std::string id = std::to_string(static_cast<int>(dtype));
    d.inputs.push_back(tensor("t" + id, {"n"}, dtype));
    d.inputs.push_back(scalar("s" + id, dtype));
    d.outputs.push_back(tensor("o" + id, {"n"}, dtype));
  }
  auto signature = make_signature(d);
  ASSERT_TRUE(signature) << signature.error().message;
  std::string source;
  for (const auto& header : signature->headers())
    source += "#include <" + header + ">\n";
  source += "__global__ void touch(int* p) { *p = 1; }\n" + signature->one_line() +
            " { touch<<<1, 1, 0, stream>>>(nullptr); }\n";
  NvccCompiler compiler(m_runner);
  auto result = compiler.compile(CompileRequest::for_candidate(source, *signature, Arch::sm_100a));
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_TRUE(result->ok) << result->log;
}
