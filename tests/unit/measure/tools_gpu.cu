// ncu audit and compute-sanitizer on small real programs. The ncu target is this test binary
// itself, re-run with a disabled probe test that calls the wgmma GEMM inside an NVTX range.
#include "measure/ncu_audit.hpp"
#include "measure/sanitizer.hpp"
#include "unit/measure/gpu_helpers.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <nvtx3/nvToolsExt.h>

namespace ptxbench::measure {
namespace {

std::string tool_or_skip(const std::string& name) {
  const auto path = util::find_on_path(name);
  if (!path.empty())
    return path.string();
  const std::string fallback = "/usr/local/cuda/bin/" + name;
  return std::filesystem::exists(fallback) ? fallback : std::string();
}

// Run only as the child of NcuAudit below.
TEST(MeasureProbe, DISABLED_WgmmaGemmInNvtxRange) {
  testing::GemmBuffers gemm(128);
  sm90_wgmma_tma_gemm_run(gemm.a.as<__nv_bfloat16>(), gemm.b.as<__nv_bfloat16>(),
                          gemm.c.as<__nv_bfloat16>(), gemm.M, nullptr); // warm-up, outside
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  nvtxRangePushA("ptxbench_eval");
  sm90_wgmma_tma_gemm_run(gemm.a.as<__nv_bfloat16>(), gemm.b.as<__nv_bfloat16>(),
                          gemm.c.as<__nv_bfloat16>(), gemm.M, nullptr);
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  nvtxRangePop();
}

TEST(NcuAudit, SourcePageOfWgmmaGemmShowsExecutedGmmaAndTma) {
  const std::string ncu = tool_or_skip("ncu");
  if (ncu.empty())
    GTEST_SKIP() << "ncu not installed";
  NcuAuditOptions options;
  options.ncu = ncu;
  const std::vector<std::string> app{std::filesystem::read_symlink("/proc/self/exe").string(),
                                     "--gtest_also_run_disabled_tests",
                                     "--gtest_filter=MeasureProbe.DISABLED_WgmmaGemmInNvtxRange"};
  util::PosixProcessRunner runner;
  util::ProcessOptions process;
  process.extra_env = {"PTXBENCH_MEASURE_PROBE=1"};
  auto result = runner.run(ncu_audit_command(app, options), process);
  ASSERT_TRUE(result);
  testing::save_fixture("ncu_source_wgmma_gemm.csv", result->out);
  testing::save_fixture("ncu_source_wgmma_gemm.stderr", result->err);
  std::printf("ncu exit %d, %lld ms\n", result->exit_code,
              static_cast<long long>(result->elapsed.count()));
  ASSERT_TRUE(result->succeeded()) << result->err.substr(0, 2000);
  auto audit = parse_ncu_source_csv(result->out);
  ASSERT_TRUE(audit) << audit.error().message << "\n" << result->out.substr(0, 3000);
  std::printf("rows %zu, GMMA %llu (true %llu), UTMALDG %llu, UTMASTG %llu\n",
              audit->instruction_rows, (unsigned long long)audit->families.gmma,
              (unsigned long long)audit->families.gmma_thread_true,
              (unsigned long long)audit->families.tma_load,
              (unsigned long long)audit->families.tma_store);
  EXPECT_EQ(audit->families.gmma, 4ull * 128 * testing::kGemmN * testing::kGemmK / (64 * 128 * 16));
  EXPECT_GT(audit->families.gmma_thread_true, 0u);
  EXPECT_GT(audit->families.tma_load, 0u);
  EXPECT_GT(audit->families.tma_thread_true, 0u);
}

constexpr const char* kOobProgram = R"(#include <cstdio>
__global__ void oob_write(int* data, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  data[i] = i; // line 4: writes past the end when the grid covers more than n
}
int main(int argc, char**) {
  int* data = nullptr;
  cudaMalloc(&data, 1000 * sizeof(int));
  oob_write<<<argc > 1 ? 8 : 3, 256>>>(data, 1000);
  cudaError_t e = cudaDeviceSynchronize();
  std::printf("status %s\n", cudaGetErrorName(e));
  return e == cudaSuccess ? 0 : 1;
}
)";

TEST(Sanitizer, OutOfBoundsWriteIsReportedWithKernelAndSourceLine) {
  const std::string sanitizer = tool_or_skip("compute-sanitizer");
  const std::string nvcc = tool_or_skip("nvcc");
  if (sanitizer.empty() || nvcc.empty())
    GTEST_SKIP() << "compute-sanitizer or nvcc missing";
  const auto dir = std::filesystem::temp_directory_path() / "ptxbench_measure_oob";
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "oob.cu") << kOobProgram;
  util::PosixProcessRunner runner;
  auto built = runner.run({nvcc, "-lineinfo", "-gencode", "arch=compute_90a,code=sm_90a",
                           (dir / "oob.cu").string(), "-o", (dir / "oob").string()},
                          {});
  ASSERT_TRUE(built && built->succeeded()) << (built ? built->err : built.error().message);
  SanitizerOptions options;
  options.sanitizer = sanitizer;
  auto raw = runner.run(sanitizer_command({(dir / "oob").string(), "big"}, options), {});
  ASSERT_TRUE(raw);
  testing::save_fixture("sanitizer_memcheck_oob.txt", raw->out + raw->err);
  auto report = run_sanitizer(runner, {(dir / "oob").string(), "big"}, options);
  ASSERT_TRUE(report) << report.error().message;
  std::printf("%s", report->log.c_str());
  EXPECT_FALSE(report->clean);
  EXPECT_EQ(report->exit_code, kSanitizerErrorExitCode);
  ASSERT_TRUE(report->first_error);
  EXPECT_EQ(report->first_error->access, "write");
  EXPECT_EQ(report->first_error->space, "__global__");
  EXPECT_EQ(report->first_error->kernel.rfind("oob_write", 0), 0u);
  EXPECT_EQ(std::filesystem::path(report->first_error->file).filename(), "oob.cu");
  EXPECT_EQ(report->first_error->line, 4);
  EXPECT_FALSE(report->first_error->address.empty());
  auto clean = run_sanitizer(runner, {(dir / "oob").string()}, options);
  ASSERT_TRUE(clean);
  testing::save_fixture("sanitizer_memcheck_clean.txt", clean->log);
  EXPECT_TRUE(clean->clean) << clean->log;
  std::printf("sanitizer wall: %.0f ms (error run), %.0f ms (clean run)\n", report->wall_ms,
              clean->wall_ms);
}

} // namespace
} // namespace ptxbench::measure
