// The debugger pass without a GPU (exec/tool_passes.hpp): the pass from cuda-gdb's finished
// process (transcripts in tests/data/measure, see tests/unit/measure/cuda_gdb_report_test.cpp
// for where each comes from), its JSON and text, and run_debugger_pass against a missing tool,
// a stand-in `cuda-gdb` script that prints a transcript (cuda-gdb cannot run here) and one that
// never ends.
#include "exec/tool_passes.hpp"
#include "util/fs.hpp"
#include "util/subprocess.hpp"

#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>

namespace ptxbench::exec {
namespace {

std::string transcript_path(const std::string& name) {
  return std::string(PTXBENCH_TEST_DATA) + "/measure/" + name;
}

std::string transcript(const std::string& name) {
  std::ifstream in(transcript_path(name));
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_FALSE(text.str().empty()) << name;
  return text.str();
}

util::ProcessResult ended(std::string out, int exit_code) {
  util::ProcessResult result;
  result.exit_code = exit_code;
  result.out = std::move(out);
  result.elapsed = std::chrono::milliseconds(4200);
  return result;
}

TEST(DebuggerPass, AKernelFaultBecomesOneSentenceAndItsJson) {
  const DebuggerPass pass =
      debugger_pass_from(ended(transcript("cuda_gdb_warp_illegal_address.txt"), 0));
  ASSERT_TRUE(pass.ran) << pass.reason;
  EXPECT_EQ(pass.finding, "cuda-gdb: Warp Illegal Address in bad_kernel block (3,0,0) thread "
                          "(32,0,0) at kernel.cu:42: `out[i] = 1.f;`");
  const trace::Json json = to_json(pass);
  EXPECT_EQ(json["ran"], true);
  EXPECT_EQ(json["stop"], "cuda_exception");
  EXPECT_EQ(json["signal"], "CUDA_EXCEPTION_14");
  EXPECT_EQ(json["exception"], "Warp Illegal Address");
  EXPECT_EQ(json["kernel"], "bad_kernel");
  EXPECT_EQ(json["block"], "(3,0,0)");
  EXPECT_EQ(json["thread"], "(32,0,0)");
  EXPECT_EQ(json["file"], "kernel.cu");
  EXPECT_EQ(json["line"], 42);
  EXPECT_EQ(json["source_line"], "out[i] = 1.f;");
  EXPECT_EQ(json["pc"], "0x7fffd3a5f630");
  EXPECT_FALSE(json.contains("exit_code"));
  EXPECT_EQ(render_text(pass), "  debugger: " + pass.finding + " (4.2 s)\n");
}

TEST(DebuggerPass, AFailedCallThatEndsNormallyUnderTheDebuggerSaysWhyFromItsReply) {
  protocol::Reply failed =
      protocol::Reply::failure(protocol::ChildError::cuda, "CUDA error after the call");
  const std::string reply = std::string(protocol::kSingleCallReplyPrefix) + encode(failed) + "\n";
  const DebuggerPass pass =
      debugger_pass_from(ended(reply + transcript("cuda_gdb_exited_with_code.txt"), 0));
  ASSERT_TRUE(pass.ran) << pass.reason;
  EXPECT_EQ(pass.report.stop, measure::DebuggerStop::exited);
  EXPECT_NE(pass.finding.find("exited with status 1 under cuda-gdb"), std::string::npos);
  EXPECT_NE(pass.finding.find(": CUDA error after the call"), std::string::npos) << pass.finding;
  EXPECT_EQ(to_json(pass)["exit_code"], 1);
  const DebuggerPass clean =
      debugger_pass_from(ended(transcript("cuda_gdb_exited_normally.txt"), 0));
  EXPECT_EQ(clean.finding, "the call completed under cuda-gdb: no exception");
}

TEST(DebuggerPass, NoStopInTheTranscriptMeansItDidNotRun) {
  const DebuggerPass pass = debugger_pass_from(
      ended("fatal:  One or more CUDA devices cannot be used for debugging.\n", 1));
  EXPECT_FALSE(pass.ran);
  EXPECT_NE(pass.reason.find("printed neither a stop nor the end of the program; it exited "
                             "with status 1: fatal:  One or more CUDA devices"),
            std::string::npos)
      << pass.reason;
  EXPECT_EQ(to_json(pass)["ran"], false);
  EXPECT_EQ(to_json(pass)["reason"], pass.reason);
  EXPECT_EQ(render_text(pass).rfind("  debugger: not run — cuda-gdb printed neither", 0), 0u);
}

TEST(DebuggerPass, AMissingCudaGdbIsNotRunWithTheReason) {
  util::PosixProcessRunner runner;
  const ChildCommand child{{"/bin/true"}, {}};
  const DebuggerPass pass =
      run_debugger_pass(runner, child, std::chrono::seconds(5), std::filesystem::path{});
  EXPECT_FALSE(pass.ran);
  EXPECT_EQ(pass.reason, "cuda-gdb not found (PATH, /usr/local/cuda/bin)");
  EXPECT_EQ(render_text(pass),
            "  debugger: not run — cuda-gdb not found (PATH, /usr/local/cuda/bin)\n");
}

// A stand-in `cuda-gdb`: writes its arguments and one variable of its environment to
// `args_file`, then runs `body`.
std::filesystem::path stand_in(const std::filesystem::path& dir, const std::string& body) {
  const std::filesystem::path script = dir / "cuda-gdb";
  std::ofstream(script) << "#!/bin/sh\nprintf '%s\\n' \"$@\" > " << (dir / "args.txt").string()
                        << "\necho \"mark=$PTXBENCH_DEBUG_MARK\" >> " << (dir / "args.txt").string()
                        << "\n"
                        << body << "\n";
  ::chmod(script.c_str(), 0755);
  return script;
}

struct DebuggerScratch {
  std::filesystem::path path = std::filesystem::temp_directory_path() /
                               ("ptxbench-debugger-test-" + std::to_string(::getpid()));
  DebuggerScratch() { std::filesystem::create_directories(path); }
  ~DebuggerScratch() { std::filesystem::remove_all(path); }
};

TEST(DebuggerPass, TheSingleCallRunsUnderTheDebuggerWithTheChildsEnvironment) {
  DebuggerScratch dir;
  const auto tool =
      stand_in(dir.path, "cat " + transcript_path("cuda_gdb_warp_illegal_address.txt"));
  util::PosixProcessRunner runner;
  const ChildCommand child{{"ptxbench-candidate", "--single-call", "spec.json"},
                           {"PTXBENCH_DEBUG_MARK=child-env"}};
  const DebuggerPass pass = run_debugger_pass(runner, child, std::chrono::seconds(20), tool);
  ASSERT_TRUE(pass.ran) << pass.reason;
  EXPECT_EQ(pass.report.kernel, "bad_kernel");
  auto args = util::read_file(dir.path / "args.txt");
  ASSERT_TRUE(args) << args.error().message;
  EXPECT_EQ(args->rfind("--batch\n--nx\n", 0), 0u) << *args;
  EXPECT_NE(args->find("-ex\nset cuda launch_blocking on\n-ex\nrun\n"), std::string::npos);
  EXPECT_NE(args->find("--args\nptxbench-candidate\n--single-call\nspec.json\nmark=child-env\n"),
            std::string::npos)
      << *args;
}

TEST(DebuggerPass, ADebuggerPastItsDeadlineIsKilledAndNotRun) {
  DebuggerScratch dir;
  const auto tool = stand_in(dir.path, "sleep 30");
  util::PosixProcessRunner runner;
  const auto start = std::chrono::steady_clock::now();
  const DebuggerPass pass = run_debugger_pass(runner, ChildCommand{{"ptxbench-candidate"}, {}},
                                              std::chrono::milliseconds(1500), tool);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(15));
  EXPECT_FALSE(pass.ran);
  EXPECT_EQ(pass.reason, "cuda-gdb passed its deadline of 2 s; its process group was killed");
}

TEST(DebuggerPass, AnEvaluationPrintsTheDebuggerLineAndCarriesItsJson) {
  Evaluation ev;
  ev.gpu_ran = true;
  ev.problem = "gemm_n7168_k5120";
  ev.status = trace::EvaluationStatus::runtime_error;
  ev.message = "CUDA error after the call: cudaErrorIllegalAddress";
  ev.debugger = debugger_pass_from(ended(transcript("cuda_gdb_warp_illegal_address.txt"), 0));
  const std::string text = render_text(ev);
  EXPECT_NE(text.find("  debugger: cuda-gdb: Warp Illegal Address in bad_kernel"),
            std::string::npos)
      << text;
  EXPECT_EQ(extras_json(ev)["debugger"]["kernel"], "bad_kernel");
  EXPECT_EQ(ev.status, trace::EvaluationStatus::runtime_error); // evidence, not a verdict
}

} // namespace
} // namespace ptxbench::exec
