// Reading cuda-gdb's batch transcript (measure/cuda_gdb_report.hpp). The host transcripts
// (cuda_gdb_host_sigsegv.txt, cuda_gdb_exited_*.txt) are GNU gdb 13.1's real output for the same
// command without the CUDA settings, which cuda-gdb prints alike. The kernel transcripts are not
// from an H200: cuda_gdb_warp_illegal_address.txt is written after the format of NVIDIA's
// CUDA-GDB manual, cuda_gdb_inlined_frame.txt and cuda_gdb_no_lineinfo.txt after transcripts
// users posted of real faults (NVIDIA/FasterTransformer#241, kysucix/gipuma#18). The GPU test
// tests/unit/exec/tool_passes_gpu.cpp checks the format on the H200. cuda_gdb_h200_device_trap.txt
// is cuda-gdb 13.0's real transcript on the H200 (driver 580.159) of a kernel that calls __trap()
// (bench/results/fleet_h200.md); there, an illegal address did not stop under cuda-gdb at all.
#include "measure/cuda_gdb_report.hpp"

#include <algorithm>
#include <fstream>
#include <gtest/gtest.h>
#include <sstream>

namespace ptxbench::measure {
namespace {

std::string transcript(const std::string& name) {
  std::ifstream in(std::string(PTXBENCH_TEST_DATA) + "/measure/" + name);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_FALSE(text.str().empty()) << name;
  return text.str();
}

TEST(CudaGdbReport, AWarpIllegalAddressNamesKernelBlockThreadAndSourceLine) {
  const DebuggerReport r = parse_cuda_gdb_output(transcript("cuda_gdb_warp_illegal_address.txt"));
  EXPECT_EQ(r.stop, DebuggerStop::cuda_exception);
  EXPECT_EQ(r.signal, "CUDA_EXCEPTION_14");
  EXPECT_EQ(r.exception, "Warp Illegal Address");
  EXPECT_EQ(r.kernel, "bad_kernel");
  EXPECT_EQ(r.launch, "<<<(4,1,1),(128,1,1)>>>");
  EXPECT_EQ(r.block, "(3,0,0)");
  EXPECT_EQ(r.thread, "(32,0,0)");
  EXPECT_EQ(r.file, "kernel.cu"); // the trigger line's, not the frame's full path
  EXPECT_EQ(r.line, 42);
  EXPECT_EQ(r.source_line, "out[i] = 1.f;");
  EXPECT_EQ(r.pc, "0x7fffd3a5f630"); // where the exception was triggered
  EXPECT_EQ(describe_stop(r), "cuda-gdb: Warp Illegal Address in bad_kernel block (3,0,0) thread "
                              "(32,0,0) at kernel.cu:42: `out[i] = 1.f;`");
}

TEST(CudaGdbReport, ADeviceTrapOnTheH200IsTheKernelsStopWithItsThreadAndLine) {
  const DebuggerReport r = parse_cuda_gdb_output(transcript("cuda_gdb_h200_device_trap.txt"));
  EXPECT_EQ(r.stop, DebuggerStop::cuda_exception) << "SIGTRAP with the focus on a CUDA thread";
  EXPECT_EQ(r.signal, "SIGTRAP");
  EXPECT_EQ(r.exception, "Trace/breakpoint trap");
  EXPECT_EQ(r.kernel, "trap_kernel");
  EXPECT_EQ(r.block, "(0,0,0)");
  EXPECT_EQ(r.thread, "(0,0,0)");
  EXPECT_EQ(r.line, 5);
  EXPECT_EQ(r.source_line, "__global__ void trap_kernel() { __trap(); }");
  EXPECT_EQ(describe_stop(r), "cuda-gdb: Trace/breakpoint trap in trap_kernel block (0,0,0) "
                              "thread (0,0,0) at wild.cu:5: `__global__ void trap_kernel() { "
                              "__trap(); }`");
}

TEST(CudaGdbReport, AnInlinedDeviceFunctionLeavesTheKernelToTheBacktrace) {
  const DebuggerReport r = parse_cuda_gdb_output(transcript("cuda_gdb_inlined_frame.txt"));
  EXPECT_EQ(r.stop, DebuggerStop::cuda_exception);
  EXPECT_EQ(r.function, "operator*");
  EXPECT_EQ(r.kernel, "fastertransformer::embeddingLookupPosEncoding<__half>");
  EXPECT_EQ(r.block, "(0,0,0)");
  EXPECT_EQ(r.thread, "(384,0,0)");
  EXPECT_EQ(r.file, "cuda_fp16.hpp");
  EXPECT_EQ(r.line, 255);
  // The frame went on to a line of its own ("    at …:255"); its source line is still found.
  EXPECT_EQ(r.source_line.rfind("__device__ __forceinline__ __half operator*", 0), 0u)
      << r.source_line;
}

TEST(CudaGdbReport, WithoutLineInformationTheKernelAndPcRemain) {
  const DebuggerReport r = parse_cuda_gdb_output(transcript("cuda_gdb_no_lineinfo.txt"));
  EXPECT_EQ(r.stop, DebuggerStop::cuda_exception);
  EXPECT_EQ(r.signal, "CUDA_EXCEPTION_5");
  EXPECT_EQ(r.kernel, "gipuma_init_cu2<float>(GlobalState&)");
  EXPECT_EQ(r.thread, "(0,6,0)");
  EXPECT_TRUE(r.file.empty());
  EXPECT_EQ(r.line, 0);
  EXPECT_EQ(r.pc, "0xc8c690");
  EXPECT_EQ(describe_stop(r), "cuda-gdb: Warp Out-of-range Address in "
                              "gipuma_init_cu2<float>(GlobalState&) block (0,0,0) thread (0,6,0) "
                              "at PC 0xc8c690");
}

TEST(CudaGdbReport, AHostSignalNamesTheHostFrame) {
  const DebuggerReport r = parse_cuda_gdb_output(transcript("cuda_gdb_host_sigsegv.txt"));
  EXPECT_EQ(r.stop, DebuggerStop::host_signal);
  EXPECT_EQ(r.signal, "SIGSEGV");
  EXPECT_EQ(r.exception, "Segmentation fault");
  EXPECT_TRUE(r.kernel.empty());
  EXPECT_TRUE(r.block.empty());
  EXPECT_EQ(r.function, "run");
  EXPECT_EQ(r.line, 5);
  EXPECT_EQ(describe_stop(r), "cuda-gdb: the host code received SIGSEGV (Segmentation fault) in "
                              "run at kernel.cu:5: `p[n] = a[0];`");
}

TEST(CudaGdbReport, AProgramThatEndsIsAnExitWithItsCode) {
  const DebuggerReport normal = parse_cuda_gdb_output(transcript("cuda_gdb_exited_normally.txt"));
  EXPECT_EQ(normal.stop, DebuggerStop::exited);
  EXPECT_EQ(normal.exit_code, 0);
  EXPECT_EQ(describe_stop(normal), "the call completed under cuda-gdb: no exception");
  const DebuggerReport failed = parse_cuda_gdb_output(transcript("cuda_gdb_exited_with_code.txt"));
  EXPECT_EQ(failed.stop, DebuggerStop::exited);
  EXPECT_EQ(failed.exit_code, 1);
  // GDB prints the code in octal.
  EXPECT_EQ(parse_cuda_gdb_output("[Inferior 1 (process 7) exited with code 012]\n").exit_code, 10);
  EXPECT_NE(describe_stop(failed).find("exited with status 1 under cuda-gdb"), std::string::npos);
}

TEST(CudaGdbReport, ATranscriptWithoutAStopIsUnknownAndSaysNothing) {
  const DebuggerReport r = parse_cuda_gdb_output(
      "fatal:  One or more CUDA devices cannot be used for debugging.  Please consult the list "
      "of supported CUDA devices for more details.\n");
  EXPECT_EQ(r.stop, DebuggerStop::unknown);
  EXPECT_EQ(describe_stop(r), "");
  EXPECT_FALSE(r.log.empty());
}

TEST(CudaGdbReport, TheLogKeepsTheFirstLinesOnly) {
  std::string text;
  for (int i = 0; i < 500; ++i)
    text += "[New Thread 0x7ffff39ff000 (LWP " + std::to_string(i) + ")]\n";
  const DebuggerReport r = parse_cuda_gdb_output(text);
  EXPECT_EQ(static_cast<std::size_t>(std::count(r.log.begin(), r.log.end(), '\n')),
            kMaxDebuggerLogLines);
}

TEST(CudaGdbReport, TheCommandRunsTheProgramInBatchModeAndAsksForKernelsAndBacktrace) {
  const std::vector<std::string> argv = cuda_gdb_command(
      "/usr/local/cuda/bin/cuda-gdb", {"ptxbench-candidate", "--single-call", "s"});
  const std::vector<std::string> expected{"/usr/local/cuda/bin/cuda-gdb",
                                          "--batch",
                                          "--nx",
                                          "-ex",
                                          "set pagination off",
                                          "-ex",
                                          "set confirm off",
                                          "-ex",
                                          "set startup-with-shell off",
                                          "-ex",
                                          "set cuda launch_blocking on",
                                          "-ex",
                                          "run",
                                          "-ex",
                                          "info cuda kernels",
                                          "-ex",
                                          "bt",
                                          "--args",
                                          "ptxbench-candidate",
                                          "--single-call",
                                          "s"};
  EXPECT_EQ(argv, expected);
}

} // namespace
} // namespace ptxbench::measure
