// What `ptxbench eval` prints and writes for an evaluation, checked on hand-built evaluations:
// nothing that reads as a measurement when nothing was measured, and no number without the
// words that say what it is.
#include "exec/evaluation.hpp"
#include "exec/tool_passes.hpp"
#include "util/fs.hpp"

#include <gtest/gtest.h>

using namespace ptxbench;
using namespace ptxbench::exec;
using Status = trace::EvaluationStatus;

namespace {

Evaluation gpu_evaluation(Status status, std::string message = {}) {
  Evaluation ev;
  ev.gpu_ran = true;
  ev.problem = "gemm_n7168_k5120";
  ev.status = status;
  ev.message = std::move(message);
  ev.sets = 3;
  ev.atol = ev.rtol = 1e-2;
  return ev;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(EvaluationReport, ARuntimeErrorBeforeAnyTrialHasNoLatencies) {
  // The timing phase began (its report exists) and the first trial failed.
  Evaluation ev = gpu_evaluation(Status::runtime_error, "a timed call reported an error");
  ev.timing = TimingReport{};
  const trace::Json timing = extras_json(ev)["timing"];
  EXPECT_TRUE(timing["candidate_ms"].is_null()) << timing.dump();
  EXPECT_TRUE(timing["reference_ms"].is_null()) << timing.dump();
  // Measured trials do give numbers.
  ev.timing->candidate_trial_ms = {0.75};
  ev.timing->candidate_ms = 0.75;
  EXPECT_EQ(extras_json(ev)["timing"]["candidate_ms"], 0.75);
}

TEST(EvaluationReport, ErrorsSayOverWhichComparisonsTheyWereTaken) {
  Evaluation ev = gpu_evaluation(Status::incorrect_numerical, "correctness call on input set 0: "
                                                              "5 of 100 elements wrong");
  ev.correctness = CompareStats{};
  ev.correctness->elements = 100;
  ev.correctness->failed = 5;
  ev.comparisons = {"correctness call (input set 0)"};
  const std::string one = render_text(ev);
  EXPECT_TRUE(contains(one, "over correctness call (input set 0)")) << one;
  EXPECT_FALSE(contains(one, "3 input sets")) << one;
  ev.status = Status::passed;
  ev.correctness->elements = 600;
  ev.correctness->failed = 0;
  ev.comparisons = {"correctness call (input set 0)",
                    "correctness call (input set 1)",
                    "correctness call (input set 2)",
                    "repeated correctness call (input set 2)",
                    "counting-pass call (again, after the correctness calls) (input set 0)",
                    "last timed call (input set 1)"};
  const std::string six = render_text(ev);
  EXPECT_TRUE(contains(six, "0 of 600 elements failed, over 6 comparisons")) << six;
  EXPECT_TRUE(contains(six, "compared: correctness call (input set 0); ")) << six;
  EXPECT_EQ(extras_json(ev)["correctness"]["comparisons"].size(), 6u);
}

TEST(EvaluationReport, AHugeRelativeErrorBesidePassedIsExplained) {
  Evaluation ev = gpu_evaluation(Status::passed);
  ev.correctness = CompareStats{};
  ev.correctness->elements = 100;
  ev.correctness->max_abs_error = 0.004;
  ev.correctness->max_rel_error = 3.2e3;
  ev.comparisons = {"correctness call (input set 0)"};
  const std::string text = render_text(ev);
  EXPECT_TRUE(contains(text, "near zero")) << text;
  EXPECT_TRUE(contains(text, "absolute tolerance 0.01")) << text;
  ev.correctness->max_rel_error = 0.004; // within rtol: nothing to explain
  EXPECT_FALSE(contains(render_text(ev), "near zero"));
}

TEST(EvaluationReport, ABannedLibrarySaysItIsTheLibraryRule) {
  Evaluation ev;
  ev.problem = "gemm_n7168_k5120";
  ev.status = Status::compile_error;
  ev.check.outcome = CheckOutcome::banned_library;
  ev.check.forbidden = compile::ForbiddenImport{compile::ImportRule::dynamic_loading, "dlsym"};
  ev.message = ev.check.banned_message();
  const std::string text = render_text(ev);
  EXPECT_TRUE(contains(text, "status: COMPILE_ERROR (banned-library rule)")) << text;
  EXPECT_TRUE(contains(text, "`dlsym`")) << text;
}

TEST(EvaluationReport, ABrokenLaunchRuleIsNamedBesideTheStatus) {
  Evaluation ev = gpu_evaluation(Status::runtime_error, "banned-library rule: 1 kernel(s) ran");
  ev.broken_rule = BrokenRule{Rule::foreign_kernel, ev.message, {"cublas_kernel"}};
  EXPECT_TRUE(contains(render_text(ev), "status: RUNTIME_ERROR (rule: foreign_kernel)"));
  EXPECT_EQ(extras_json(ev)["rule"], "foreign_kernel");
}

TEST(SanitizerCount, MemoryErrorsAreToldApartFromTheApiErrorsThatFollowThem) {
  // compute-sanitizer (CUDA 13.0, H200) on one warp writing out of bounds
  // (tests/data/measure/warp_oob.cu): its summary counts the 32 invalid writes and the 3 API
  // calls that then returned the launch failure.
  auto text =
      util::read_file(std::string(PTXBENCH_TEST_DATA) + "/measure/sanitizer_memcheck_warp_oob.txt");
  ASSERT_TRUE(text) << text.error().message;
  util::ProcessResult process;
  process.exit_code = 99;
  process.out = *text;
  const SanitizerPass pass = sanitizer_pass_from(process);
  EXPECT_EQ(pass.report.error_count, 35u);
  EXPECT_EQ(pass.report.api_errors, 3u);
  EXPECT_TRUE(contains(pass.finding, "35 errors in all: 32 memory errors, then 3 CUDA API calls "
                                     "that failed"))
      << pass.finding;
}

} // namespace
