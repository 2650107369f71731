// The sanitizer, ncu-audit and debugger passes of `ptxbench eval` on a real GPU (label gpu):
// memcheck finds an out-of-bounds write and names its source line, passes a correct wgmma
// kernel; the paper's ncu source-counter audit agrees with the in-process counts; cuda-gdb
// names the kernel, block, thread and line of a wild write and lets a correct call complete.
#include "exec/tool_passes.hpp"
#include "unit/exec/gpu_supervisor.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <sstream>

namespace ptxbench::exec {
namespace {

using Status = trace::EvaluationStatus;
using testing::evaluate;
using testing::quick;
using testing::read_kernel;
using testing::stray_children;
using testing::supervisor;

bool have(const char* tool) {
  return !find_cuda_tool(tool).empty();
}

// 1-based line of the first line of `source` containing `marker`.
int line_of(const std::string& source, const std::string& marker) {
  std::istringstream in(source);
  std::string line;
  for (int number = 1; std::getline(in, line); ++number)
    if (line.find(marker) != std::string::npos)
      return number;
  return 0;
}

TEST(ToolPassesGpu, MemcheckNamesTheSourceLineOfAnOutOfBoundsWrite) {
  if (!have("compute-sanitizer"))
    GTEST_SKIP() << "compute-sanitizer not installed";
  const std::string source = read_kernel("gemm_bad_variants.cu", 11);
  const int line = line_of(source, "out of bounds: one past the end of C");
  ASSERT_GT(line, 0);
  EvalOptions options = quick();
  options.dynamic_counts = false;
  options.sanitize = Sanitize::memcheck;
  const Evaluation ev = evaluate(source, options);
  ASSERT_TRUE(ev.sanitizer);
  ASSERT_TRUE(ev.sanitizer->ran) << ev.sanitizer->reason;
  std::printf("%s", ev.sanitizer->report.log.c_str());
  EXPECT_EQ(ev.status, Status::runtime_error);
  EXPECT_EQ(ev.message.rfind("compute-sanitizer memcheck: Invalid __global__ write", 0), 0u)
      << ev.message;
  EXPECT_NE(ev.message.find(fmt::format("kernel.cu:{}", line)), std::string::npos) << ev.message;
  EXPECT_NE(ev.message.find("tail_write"), std::string::npos) << ev.message;
  ASSERT_TRUE(ev.sanitizer->report.first_error);
  EXPECT_EQ(ev.sanitizer->report.first_error->line, line);
  EXPECT_EQ(ev.sanitizer->report.first_error->access, "write");
  EXPECT_FALSE(ev.sanitizer->call_completed);
  EXPECT_EQ(stray_children(), 0);
  const trace::Json extras = extras_json(ev);
  EXPECT_EQ(extras["sanitizer"]["first_error"]["line"], line);
  EXPECT_EQ(extras["sanitizer"]["clean"], false);
}

TEST(ToolPassesGpu, MemcheckFindsNothingInACorrectWgmmaKernel) {
  if (!have("compute-sanitizer"))
    GTEST_SKIP() << "compute-sanitizer not installed";
  EvalOptions options = quick();
  options.dynamic_counts = false;
  options.sanitize = Sanitize::memcheck;
  const Evaluation ev = evaluate(read_kernel("sm90_wgmma_tma_gemm.cu"), options);
  ASSERT_TRUE(ev.sanitizer);
  ASSERT_TRUE(ev.sanitizer->ran) << ev.sanitizer->reason;
  EXPECT_EQ(ev.status, Status::passed) << ev.message << "\n" << ev.sanitizer->report.log;
  EXPECT_TRUE(ev.sanitizer->report.clean) << ev.sanitizer->report.log;
  EXPECT_EQ(ev.sanitizer->report.error_count, 0u);
  EXPECT_TRUE(ev.sanitizer->finding.empty());
  EXPECT_TRUE(ev.sanitizer->call_completed) << ev.sanitizer->call_outcome;
  EXPECT_NE(render_text(ev).find("sanitizer: memcheck clean"), std::string::npos);
  EXPECT_EQ(stray_children(), 0);
}

TEST(ToolPassesGpu, NcuSourceCountersAgreeWithTheInProcessCountsOfTheWgmmaKernel) {
  if (!have("ncu"))
    GTEST_SKIP() << "ncu not installed";
  EvalOptions options = quick();
  options.audit = Audit::ncu;
  const Evaluation ev = evaluate(read_kernel("sm90_wgmma_tma_gemm.cu"), options);
  ASSERT_EQ(ev.status, Status::passed) << ev.message;
  ASSERT_TRUE(ev.ncu_audit);
  ASSERT_TRUE(ev.ncu_audit->ran) << ev.ncu_audit->reason;
  ASSERT_TRUE(ev.dynamic && ev.dynamic->verdict != DynamicState::unknown)
      << "in-process counts unavailable: " << (ev.dynamic ? ev.dynamic->reason : "no pass");
  const measure::FamilyTotals& ncu = ev.ncu_audit->audit->families;
  // M=8192, N=7168, K=5120; four warps issue each wgmma.m64n128k16 of a 64x128 tile.
  EXPECT_EQ(ncu.gmma, 4ull * 8192 * 7168 * 5120 / (64 * 128 * 16));
  EXPECT_GT(ncu.gmma_thread_true, 0u);
  EXPECT_GT(ncu.tma_load, 0u);
  EXPECT_EQ(ev.ncu_audit->agreement, Agreement::agree) << ev.ncu_audit->agreement_note;
  for (const CountAgreement& c : ev.ncu_audit->counts) {
    ASSERT_TRUE(c.in_process) << c.family;
    EXPECT_EQ(static_cast<double>(c.ncu), *c.in_process) << c.family;
  }
  EXPECT_NE(render_text(ev).find(": agree"), std::string::npos);
  EXPECT_EQ(stray_children(), 0);
}

TEST(ToolPassesGpu, NcuAuditOfASimtKernelCountsNoTargetInstructionsAndAgrees) {
  if (!have("ncu"))
    GTEST_SKIP() << "ncu not installed";
  EvalOptions options = quick();
  options.audit = Audit::ncu;
  const Evaluation ev = evaluate(read_kernel("simt_gemm.cu"), options);
  ASSERT_EQ(ev.status, Status::passed) << ev.message;
  ASSERT_TRUE(ev.ncu_audit && ev.ncu_audit->ran) << ev.ncu_audit->reason;
  EXPECT_EQ(ev.ncu_audit->audit->families.gmma, 0u);
  EXPECT_GT(ev.ncu_audit->audit->instruction_rows, 0u);
  if (ev.dynamic && ev.dynamic->verdict != DynamicState::unknown) {
    EXPECT_EQ(ev.ncu_audit->agreement, Agreement::agree) << ev.ncu_audit->agreement_note;
  }
}

// A kernel that traps (variant 5: __trap(), as a failed device assert does): cuda-gdb stops in it
// and names the kernel, the thread and the line. The log printed is the H200's transcript.
TEST(ToolPassesGpu, CudaGdbNamesTheKernelThreadAndLineOfADeviceTrap) {
  if (!have("cuda-gdb"))
    GTEST_SKIP() << "cuda-gdb not installed";
  const std::string source = read_kernel("gemm_bad_variants.cu", 5);
  const int line = line_of(source, "  __trap();");
  ASSERT_GT(line, 0);
  EvalOptions options = quick();
  options.dynamic_counts = false;
  options.debug = Debug::cuda_gdb;
  const Evaluation ev = evaluate(source, options);
  EXPECT_EQ(ev.status, Status::runtime_error) << ev.message; // the main pass's verdict
  ASSERT_TRUE(ev.debugger);
  ASSERT_TRUE(ev.debugger->ran) << ev.debugger->reason;
  std::printf("%s", ev.debugger->report.log.c_str());
  const measure::DebuggerReport& r = ev.debugger->report;
  EXPECT_EQ(r.stop, measure::DebuggerStop::cuda_exception) << ev.debugger->finding;
  EXPECT_NE(r.kernel.find("trap_kernel"), std::string::npos) << r.kernel;
  EXPECT_EQ(r.block, "(0,0,0)"); // trap_kernel<<<1, 1>>>
  EXPECT_EQ(r.thread, "(0,0,0)");
  EXPECT_EQ(r.line, line) << r.file; // kernel.so is built with -lineinfo
  EXPECT_NE(ev.debugger->finding.find("trap_kernel"), std::string::npos) << ev.debugger->finding;
  EXPECT_NE(render_text(ev).find("  debugger: cuda-gdb: "), std::string::npos);
  EXPECT_EQ(extras_json(ev)["debugger"]["block"], "(0,0,0)");
  EXPECT_EQ(stray_children(), 0);
}

// cuda-gdb 13.0 on the H200 lets a write through a wild pointer pass (the same program faults
// without it): the pass says the failure was not reproduced, not "no exception".
TEST(ToolPassesGpu, AnIllegalAddressCudaGdbDoesNotReproduceIsSaidSo) {
  if (!have("cuda-gdb"))
    GTEST_SKIP() << "cuda-gdb not installed";
  EvalOptions options = quick();
  options.dynamic_counts = false;
  options.debug = Debug::cuda_gdb;
  const Evaluation ev = evaluate(read_kernel("gemm_bad_variants.cu", 4), options);
  EXPECT_EQ(ev.status, Status::runtime_error) << ev.message;
  ASSERT_TRUE(ev.debugger);
  ASSERT_TRUE(ev.debugger->ran) << ev.debugger->reason;
  std::printf("%s", ev.debugger->report.log.c_str());
  if (ev.debugger->report.stop == measure::DebuggerStop::cuda_exception) {
    EXPECT_NE(ev.debugger->finding.find("wild_write"), std::string::npos)
        << ev.debugger->finding; // a cuda-gdb that stops at illegal addresses
  } else {
    EXPECT_EQ(ev.debugger->report.stop, measure::DebuggerStop::exited) << ev.debugger->report.log;
    EXPECT_NE(ev.debugger->finding.find("did not reproduce"), std::string::npos)
        << ev.debugger->finding;
  }
  EXPECT_EQ(stray_children(), 0);
}

TEST(ToolPassesGpu, UnderCudaGdbACorrectCallCompletes) {
  if (!have("cuda-gdb"))
    GTEST_SKIP() << "cuda-gdb not installed";
  EvalOptions options = quick();
  options.dynamic_counts = false;
  options.debug = Debug::cuda_gdb;
  const Evaluation ev = evaluate(read_kernel("simt_gemm.cu"), options);
  EXPECT_EQ(ev.status, Status::passed) << ev.message;
  ASSERT_TRUE(ev.debugger);
  ASSERT_TRUE(ev.debugger->ran) << ev.debugger->reason;
  EXPECT_EQ(ev.debugger->report.stop, measure::DebuggerStop::exited) << ev.debugger->report.log;
  EXPECT_EQ(ev.debugger->finding, "the call completed under cuda-gdb: no exception");
  EXPECT_EQ(stray_children(), 0);
}

} // namespace
} // namespace ptxbench::exec
