// The import rule on real binaries: kernel.so files built by nvcc with the ABI shim (a few
// seconds each, no GPU), one .so built by g++ against another library, and malformed files.
#include "compile/gate.hpp"
#include "compile/imports.hpp"
#include "compile/nvcc.hpp"
#include "definitions.hpp"
#include "support/scratch_dir.hpp"
#include "util/fs.hpp"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <gtest/gtest.h>

using namespace ptxbench;
using namespace ptxbench::compile;
using namespace ptxbench::compile::testing;
namespace fs = std::filesystem;

namespace {

// The axpy candidate of tests/data/compile with `extra` (declarations, a helper) in front and
// `in_run` at the start of run().
std::string candidate(const std::string& extra, const std::string& in_run) {
  return "#include <cuda_runtime.h>\n#include <cstdint>\n" + extra +
         "\n__global__ void axpy_kernel(const float* x, float a, float* y, int64_t n) {\n"
         "  int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x;\n"
         "  if (i < n) y[i] = a * x[i] + y[i];\n}\n"
         "void run(const float* x, float alpha, float* y, int64_t N, cudaStream_t stream) {\n" +
         in_run +
         "\n  axpy_kernel<<<unsigned((N + 127) / 128), 128, 0, stream>>>(x, alpha, y, N);\n}\n";
}

class ImportsTest : public ::testing::Test {
protected:
  void SetUp() override {
    if (default_nvcc().empty())
      GTEST_SKIP() << "nvcc not found";
    ::setenv("PTXBENCH_CACHE", m_scratch.path().c_str(), 1); // a compile cache of its own
    m_dir = m_scratch.path();
  }
  void TearDown() override { ::unsetenv("PTXBENCH_CACHE"); }

  // Builds `source` as the ABI build does and reads the kernel.so's imports.
  BinaryImports built(const std::string& source) {
    NvccCompiler compiler(m_runner);
    auto signature = make_signature(axpy_definition());
    auto result = compiler.compile(CompileRequest::for_candidate(source, *signature, Arch::sm_90a));
    EXPECT_TRUE(result) << (result ? "" : result.error().message);
    EXPECT_TRUE(result && result->ok) << (result ? result->log : "");
    auto imports = read_imports(result->library);
    EXPECT_TRUE(imports) << (imports ? "" : imports.error().message);
    return imports ? *imports : BinaryImports{};
  }

  test_support::ScratchDir m_scratch;
  fs::path m_dir;
  util::PosixProcessRunner m_runner;
};

TEST_F(ImportsTest, AnHonestKernelImportsOnlyTheRuntimeAndPassesTheRule) {
  // The knowledge packs' TMA helper looks up cuTensorMapEncodeTiled this way: allowed.
  const BinaryImports imports = built(
      candidate("", "  void* fn = nullptr; cudaDriverEntryPointQueryResult q{};\n"
                    "  cudaGetDriverEntryPointByVersion(\"cuTensorMapEncodeTiled\", &fn, 12000, "
                    "cudaEnableDefault, &q);"));
  EXPECT_FALSE(imports.needed.empty());
  EXPECT_NE(std::find(imports.undefined_symbols.begin(), imports.undefined_symbols.end(),
                      "cudaGetDriverEntryPointByVersion"),
            imports.undefined_symbols.end());
  const auto forbidden = find_forbidden_import(imports);
  EXPECT_FALSE(forbidden) << forbidden->message();
}

TEST_F(ImportsTest, TheLoaderUnderAnAsmLabelPassesTheGateButNotTheImportRule) {
  // The hole of the verdict issue: the source never spells dlopen or dlsym.
  const std::string source =
      candidate("extern \"C\" void* open_library(const char*, int) __asm__(\"dl\" \"open\");\n"
                "extern \"C\" void* find_symbol(void*, const char*) __asm__(\"dl\" \"sym\");\n",
                "  static void* lib = open_library(\"libcu\" \"blas.so.13\", 2);\n"
                "  if (lib) (void)find_symbol(lib, \"cu\" \"blasGemmEx\");");
  EXPECT_FALSE(find_banned_library(source)) << "the source gate cannot see this";
  const auto forbidden = find_forbidden_import(built(source));
  ASSERT_TRUE(forbidden);
  EXPECT_EQ(forbidden->rule, ImportRule::dynamic_loading);
  EXPECT_TRUE(forbidden->name == "dlopen" || forbidden->name == "dlsym") << forbidden->name;
  EXPECT_NE(forbidden->message().find("banned-library rule"), std::string::npos);
  EXPECT_NE(forbidden->message().find("`" + forbidden->name + "`"), std::string::npos)
      << forbidden->message();
}

TEST_F(ImportsTest, ModuleLoadingAndProcessCallsAreCaughtByTheirSymbols) {
  const auto module = find_forbidden_import(
      built(candidate("#include <cuda.h>\n"
                      "extern \"C\" CUresult load_code(CUmodule*, const void*) "
                      "__asm__(\"cuModule\" \"LoadData\");\n",
                      "  CUmodule m; static const char ptx[] = \"\"; (void)load_code(&m, ptx);")));
  ASSERT_TRUE(module);
  EXPECT_EQ(module->rule, ImportRule::module_loading);
  EXPECT_EQ(module->name, "cuModuleLoadData");
  const auto process = find_forbidden_import(
      built(candidate("extern \"C\" int shell(const char*) __asm__(\"sys\" \"tem\");\n",
                      "  (void)shell(\"true\");")));
  ASSERT_TRUE(process);
  EXPECT_EQ(process->rule, ImportRule::process);
  EXPECT_EQ(process->name, "system");
}

// The ways to the reply pipe, the harness's files and the child's own code (classes 10, 24
// and 25 of peers-and-cheats.md §2): raw descriptor writes, file streams, signals.
TEST_F(ImportsTest, FileDescriptorAndSignalCallsAreCaughtByTheirSymbols) {
  const auto write = find_forbidden_import(
      built(candidate("extern \"C\" long put(int, const void*, unsigned long) "
                      "__asm__(\"wri\" \"te\");\n",
                      "  (void)put(5, \"{}\\n\", 3);")));
  ASSERT_TRUE(write);
  EXPECT_EQ(write->rule, ImportRule::files);
  EXPECT_EQ(write->name, "write");
  EXPECT_NE(write->message().find("file descriptors"), std::string::npos) << write->message();
  const auto stream = find_forbidden_import(built(candidate(
      "#include <fstream>\n", "  std::ofstream out(\"/proc/self/fd/5\"); out << \"{}\";")));
  ASSERT_TRUE(stream);
  EXPECT_EQ(stream->rule, ImportRule::files);
  const auto signal = find_forbidden_import(
      built(candidate("#include <unistd.h>\n"
                      "extern \"C\" int end_it(int, int) __asm__(\"ki\" \"ll\");\n",
                      "  (void)end_it(getppid(), 9);")));
  ASSERT_TRUE(signal);
  EXPECT_EQ(signal->rule, ImportRule::files);
  EXPECT_EQ(signal->name, "kill");
}

TEST_F(ImportsTest, ALibraryBeyondTheRuntimeIsRejectedByName) {
  // g++ links a shared object against libsqlite3, as a kernel.so linked against cuBLAS would be.
  const fs::path source = m_dir / "uses_sqlite.cpp";
  ASSERT_TRUE(util::write_file_atomic(source,
                                      "extern \"C\" const char* sqlite3_libversion();\n"
                                      "const char* version() { return sqlite3_libversion(); }\n"));
  const fs::path so = m_dir / "uses_sqlite.so";
  auto linked = m_runner.run({"g++", "-shared", "-fPIC", "-Wl,--no-as-needed", source.string(),
                              "-o", so.string(), "-lsqlite3"},
                             util::ProcessOptions{});
  ASSERT_TRUE(linked && linked->succeeded()) << (linked ? linked->err : linked.error().message);
  auto imports = read_imports(so);
  ASSERT_TRUE(imports) << imports.error().message;
  const auto forbidden = find_forbidden_import(*imports);
  ASSERT_TRUE(forbidden);
  EXPECT_EQ(forbidden->rule, ImportRule::library);
  EXPECT_TRUE(forbidden->name.starts_with("libsqlite3.so")) << forbidden->name;
}

TEST(Imports, MalformedFilesAreErrorsNotCrashes) {
  auto as_bytes = [](const std::string& text) {
    return std::as_bytes(std::span(text.data(), text.size()));
  };
  EXPECT_FALSE(read_imports(as_bytes("")));
  EXPECT_FALSE(read_imports(as_bytes("not an elf file at all, just text")));
  // A real ELF header cut short, and one whose section table points past the end.
  auto self = util::read_file("/proc/self/exe");
  ASSERT_TRUE(self);
  EXPECT_FALSE(read_imports(as_bytes(self->substr(0, 64))));
  std::string corrupt = self->substr(0, 4096);
  const std::uint64_t far = 1ull << 40;
  std::memcpy(corrupt.data() + 0x28, &far, sizeof far); // e_shoff
  EXPECT_FALSE(read_imports(as_bytes(corrupt)));
  // An executable is not a shared object (ET_EXEC or a PIE: the test binary may be either).
  auto test_binary = read_imports(as_bytes(*self));
  if (test_binary) {
    EXPECT_FALSE(test_binary->undefined_symbols.empty());
  }
}

TEST(Imports, EntryPointNamesThatLoadCodeAreTheOnesRefused) {
  for (const char* name :
       {"cuModuleLoadData", "cuModuleLoadDataEx", "cuModuleGetFunction", "cuLibraryLoadData",
        "cuLinkCreate_v2", "cuGetProcAddress_v2", "cudaLibraryLoadData", "cuKernelGetFunction"})
    EXPECT_TRUE(loads_gpu_code(name)) << name;
  for (const char* name : {"cuTensorMapEncodeTiled", "cuLaunchKernelEx", "cuCtxGetCurrent",
                           "cuGetErrorString", "cuFuncSetAttribute", "__cudaGetKernel"})
    EXPECT_FALSE(loads_gpu_code(name)) << name;
}

} // namespace
