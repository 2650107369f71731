// The feedback a model gets after a failed build: our own diagnostic (the expected `run`
// signature) beside the compiler's error lines, and no line twice.
#include "agent/feedback.hpp"
#include "exec/check.hpp"
#include "exec/evaluation.hpp"

#include <gtest/gtest.h>
#include <string>

namespace ptxbench::agent {
namespace {

exec::CheckReport failed_build(std::string diagnostic, std::vector<std::string> errors) {
  exec::CheckReport report;
  report.outcome = exec::CheckOutcome::compile_error;
  compile::CompileResult build;
  build.diagnostic = std::move(diagnostic);
  build.first_errors = std::move(errors);
  build.log = "the whole nvcc log";
  report.build = std::move(build);
  return report;
}

std::size_t count(const std::string& text, const std::string& part) {
  std::size_t n = 0;
  for (std::size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1))
    ++n;
  return n;
}

TEST(CompileFeedback, TheExpectedSignatureComesWithTheLinkerLine) {
  const std::string signature_message =
      "Link error: the host function `run` is not defined with the expected signature. Define "
      "it exactly as\n    void run(const float* x);";
  const auto report = failed_build(signature_message, {"undefined reference to `run(int)'"});
  const std::string feedback = check_feedback(report);
  EXPECT_NE(feedback.find("Define it exactly as"), std::string::npos) << feedback;
  EXPECT_NE(feedback.find("undefined reference to `run(int)'"), std::string::npos) << feedback;
  const std::string text = exec::render_text(report);
  EXPECT_NE(text.find("Define it exactly as"), std::string::npos) << text;
}

TEST(CompileFeedback, ADiagnosticThatRepeatsTheFirstErrorIsNotShownTwice) {
  const std::string error =
      "ptxas error   : Instruction 'wgmma.fence' not supported on .target 'sm_100a'";
  const auto report =
      failed_build("Compilation failed:\n" + error, {error, "ptxas error   : other"});
  EXPECT_TRUE(report.build->diagnostic_restates_first_error());
  EXPECT_EQ(count(check_feedback(report), error), 1u) << check_feedback(report);
  EXPECT_EQ(count(exec::render_text(report), error), 1u) << exec::render_text(report);
}

TEST(CompileFeedback, WithoutErrorLinesTheDiagnosticIsShown) {
  const auto report = failed_build("nvcc failed with exit status 1 and printed no error line.", {});
  EXPECT_FALSE(report.build->diagnostic_restates_first_error());
  EXPECT_NE(check_feedback(report).find("printed no error line"), std::string::npos);
}

// An evaluation whose kernel built and ran on the GPU (its status and message are the test's).
exec::Evaluation built_and_run() {
  exec::Evaluation ev;
  ev.gpu_ran = true;
  ev.check.outcome = exec::CheckOutcome::ok;
  compile::CompileResult build;
  build.ok = true;
  ev.check.build = build;
  return ev;
}

TEST(EvaluationFeedback, TheSecretSeedAndTheCandidatesLogNeverReachTheModel) {
  // The catalogue's class 27: the model learns its verdict, never what would let it predict
  // or read the inputs of a later evaluation.
  exec::Evaluation ev = built_and_run();
  ev.status = trace::EvaluationStatus::incorrect_numerical;
  ev.message = "correctness call on input set 1: 5 of 100 elements wrong";
  ev.seed = 0x1234'5678'9abc'def0;
  ev.child_log = "the candidate printed this";
  const std::string feedback = evaluation_feedback(ev);
  EXPECT_NE(feedback.find("5 of 100 elements wrong"), std::string::npos) << feedback;
  EXPECT_EQ(feedback.find(std::to_string(ev.seed)), std::string::npos) << feedback;
  EXPECT_EQ(feedback.find("123456789abcdef0"), std::string::npos) << feedback;
  EXPECT_EQ(feedback.find("the candidate printed this"), std::string::npos) << feedback;
}

TEST(EvaluationFeedback, TheDebuggersSentenceReachesTheModelButNotANotRunReason) {
  exec::Evaluation ev = built_and_run();
  ev.status = trace::EvaluationStatus::runtime_error;
  ev.message = "CUDA error after the call: cudaErrorIllegalAddress";
  exec::DebuggerPass pass;
  pass.ran = true;
  pass.finding = "cuda-gdb: Warp Illegal Address in bad_kernel block (3,0,0) thread (32,0,0) at "
                 "kernel.cu:42: `out[i] = 1.f;`";
  ev.debugger = pass;
  const std::string feedback = evaluation_feedback(ev);
  EXPECT_NE(feedback.find("Debugger (one call): " + pass.finding + "\n"), std::string::npos)
      << feedback;
  ev.debugger = exec::DebuggerPass{};
  ev.debugger->reason = "cuda-gdb not found (PATH, /usr/local/cuda/bin)";
  EXPECT_EQ(evaluation_feedback(ev).find("Debugger"), std::string::npos);
}

TEST(Feedback, ExtractionFeedbackAsksForTheFenceOfTheRunsLanguage) {
  util::Error error{util::ErrorKind::extraction, "no block"};
  std::string triton = extraction_feedback(error, frontend::of(compile::Language::triton));
  EXPECT_NE(triton.find("single ```python block"), std::string::npos) << triton;
  EXPECT_NE(triton.find("@triton.jit"), std::string::npos) << triton;
  EXPECT_EQ(triton.find("```cuda"), std::string::npos) << triton;
  std::string cuda = extraction_feedback(error, frontend::of(compile::Language::cuda));
  EXPECT_NE(cuda.find("single ```cuda code block"), std::string::npos) << cuda;
}

} // namespace
} // namespace ptxbench::agent
