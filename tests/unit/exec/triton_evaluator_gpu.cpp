// Triton candidates through the evaluator on a real GPU (label gpu; issue 19's bad-input
// list): the persistent TMA GEMM passes with GMMA and TMA in its cubins and executed; every
// bad input gets its verdict with a clear message, and the next evaluation in the same
// supervisor is healthy. Needs python3 with torch and Triton (the H200 image: Python 3.12,
// torch 2.11, Triton 3.6). The CPU side of the same fixtures is triton_evaluator_test.cpp.
#include "compile/extract.hpp"
#include "exec/tool_passes.hpp"
#include "unit/exec/gpu_supervisor.hpp"
#include "util/temp_folder.hpp"

#include <algorithm>
#include <array>
#include <gtest/gtest.h>

namespace ptxbench::exec {
namespace {

using Status = trace::EvaluationStatus;

std::string fixture(const std::string& name) {
  const std::string path = name == "gemm_persistent_tma.py"
                               ? std::string(PTXBENCH_TEST_DATA) + "/compile/triton/" + name
                               : std::string(PTXBENCH_TEST_KERNELS) + "/triton/" + name;
  auto text = util::read_file(path);
  if (!text)
    throw std::runtime_error(text.error().message);
  return *text;
}

EvalOptions triton_options() {
  EvalOptions options = testing::quick();
  options.language = compile::Language::triton;
  options.timeout = std::chrono::seconds(60); // the warm-up's JIT takes ~1.7 s on an H200
  return options;
}

Evaluation evaluate_triton(const std::string& name, EvalOptions options = triton_options()) {
  return testing::evaluate(fixture(name), options);
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// The supervisor that evaluated a bad input still passes the expert kernel.
void expect_healthy_after(const std::string& bad) {
  const Evaluation next = evaluate_triton("gemm_persistent_tma.py");
  EXPECT_EQ(next.status, Status::passed) << "after " << bad << ": " << next.message;
  EXPECT_EQ(testing::stray_children(), 0) << "after " << bad;
}

TEST(TritonEvaluatorGpu, ThePersistentTmaGemmPassesWithGmmaAndTmaStaticAndExecuted) {
  EvalOptions options = triton_options();
  options.trials = 3;
  const Evaluation ev = evaluate_triton("gemm_persistent_tma.py", options);
  ASSERT_EQ(ev.status, Status::passed) << ev.message << ev.child_log;
  ASSERT_TRUE(ev.jit_ms);
  EXPECT_GT(*ev.jit_ms, 0.0);
  ASSERT_TRUE(ev.launches.cubin_functions);
  EXPECT_NE(std::find(ev.launches.cubin_functions->begin(), ev.launches.cubin_functions->end(),
                      "gemm_persistent"),
            ev.launches.cubin_functions->end());
  EXPECT_EQ(ev.check.verdict(), sass::Verdict::present); // GMMA and TMA in the cubins
  ASSERT_TRUE(ev.dynamic);
  EXPECT_EQ(ev.dynamic->verdict, DynamicState::present) << ev.dynamic->reason;
  EXPECT_TRUE(ev.foreign_kernels.empty());
  EXPECT_TRUE(ev.launches.late_cubins.empty());
  ASSERT_TRUE(ev.timing);
  EXPECT_GT(ev.timing->candidate_ms, 0.0);
  EXPECT_TRUE(extras_json(ev).contains("jit_ms"));
}

TEST(TritonEvaluatorGpu, AReplyWithNoPythonBlockHasNothingToEvaluate) {
  auto extracted = compile::extract_python_candidate("Here is my plan, no code yet.");
  ASSERT_FALSE(extracted);
  EXPECT_FALSE(extracted.error().message.empty());
  expect_healthy_after("no python block");
}

TEST(TritonEvaluatorGpu, AFileThatDoesNotParseIsACompileError) {
  const Evaluation ev = evaluate_triton("does_not_parse.py");
  EXPECT_EQ(ev.status, Status::compile_error);
  EXPECT_TRUE(contains(ev.message, "does not parse")) << ev.message;
  EXPECT_FALSE(ev.gpu_ran);
  expect_healthy_after("does_not_parse.py");
}

TEST(TritonEvaluatorGpu, RunWithTheWrongParametersIsACompileError) {
  const Evaluation ev = evaluate_triton("wrong_parameters.py");
  EXPECT_EQ(ev.status, Status::compile_error);
  EXPECT_TRUE(contains(ev.message, "`run(A, B, C)` does not match")) << ev.message;
  expect_healthy_after("wrong_parameters.py");
}

TEST(TritonEvaluatorGpu, RunThatRaisesIsARuntimeErrorWithTheTracebackInTheLog) {
  const Evaluation ev = evaluate_triton("raises.py");
  EXPECT_EQ(ev.status, Status::runtime_error);
  EXPECT_TRUE(contains(ev.message, "the warm-up call (Triton JIT compilation and autotuning) "
                                   "failed"))
      << ev.message;
  EXPECT_TRUE(contains(ev.message, "raised a Python exception")) << ev.message;
  EXPECT_TRUE(contains(ev.child_log, "ValueError: the tile configuration")) << ev.child_log;
  expect_healthy_after("raises.py");
}

TEST(TritonEvaluatorGpu, RunThatRaisesOnlyOnItsSecondCallFailsAfterAWarmUpThatWorked) {
  const Evaluation ev = evaluate_triton("raises_second_call.py");
  EXPECT_EQ(ev.status, Status::runtime_error);
  EXPECT_TRUE(ev.jit_ms);
  EXPECT_FALSE(contains(ev.message, "warm-up")) << "the warm-up call succeeded: " << ev.message;
  EXPECT_TRUE(contains(ev.message, "raised a Python exception")) << ev.message;
  EXPECT_TRUE(contains(ev.child_log, "RuntimeError: second call")) << ev.child_log;
  expect_healthy_after("raises_second_call.py");
}

TEST(TritonEvaluatorGpu, AHangInAutotuningIsTheLoadDeadline) {
  EvalOptions options = triton_options();
  options.timeout = std::chrono::seconds(20);
  const Evaluation ev = evaluate_triton("hangs_in_autotuning.py", options);
  EXPECT_EQ(ev.status, Status::timeout);
  EXPECT_TRUE(contains(ev.message, "Triton JIT or autotuning did not finish")) << ev.message;
  expect_healthy_after("hangs_in_autotuning.py");
}

TEST(TritonEvaluatorGpu, ATorchOpInTheCallIsAForeignKernelNamedInTheMessage) {
  const Evaluation ev = evaluate_triton("torch_op.py");
  EXPECT_EQ(ev.status, Status::runtime_error) << ev.message;
  ASSERT_TRUE(ev.broken_rule);
  EXPECT_EQ(ev.broken_rule->rule, Rule::foreign_kernel);
  ASSERT_FALSE(ev.foreign_kernels.empty());
  EXPECT_TRUE(contains(ev.message, ev.foreign_kernels.front())) << ev.message;
  EXPECT_TRUE(contains(ev.message, "kernels Triton compiled for it")) << ev.message;
  expect_healthy_after("torch_op.py");
}

TEST(TritonEvaluatorGpu, ALaunchOnAnotherStreamIsChargedToTheCall) {
  EvalOptions strict = triton_options();
  strict.timing_mode = measure::TimingMode::strict;
  const Evaluation same = evaluate_triton("gemm_persistent_tma.py", strict);
  const Evaluation side = evaluate_triton("other_stream.py", strict);
  ASSERT_EQ(same.status, Status::passed) << same.message;
  ASSERT_EQ(side.status, Status::passed) << side.message;
  ASSERT_TRUE(same.timing && side.timing);
  EXPECT_GT(side.timing->candidate_ms, 0.7 * same.timing->candidate_ms);
  expect_healthy_after("other_stream.py");
}

TEST(TritonEvaluatorGpu, ALaunchLeftRunningWhenRunReturnsIsLateWork) {
  EvalOptions strict = triton_options();
  strict.timing_mode = measure::TimingMode::strict;
  const Evaluation ev = evaluate_triton("late_work.py", strict);
  EXPECT_EQ(ev.status, Status::runtime_error) << ev.message;
  EXPECT_TRUE(contains(ev.message, "still running after a timed call returned")) << ev.message;
  expect_healthy_after("late_work.py");
}

TEST(TritonEvaluatorGpu, AKernelThatWritesItsInputsIsIncorrect) {
  const Evaluation ev = evaluate_triton("mutates_inputs.py");
  EXPECT_EQ(ev.status, Status::incorrect_numerical);
  EXPECT_TRUE(contains(ev.message, "modified its inputs")) << ev.message;
  expect_healthy_after("mutates_inputs.py");
}

TEST(TritonEvaluatorGpu, MemcheckFindsNothingInThePersistentTmaGemm) {
  EvalOptions options = triton_options();
  options.sanitize = Sanitize::memcheck;
  const Evaluation ev = evaluate_triton("gemm_persistent_tma.py", options);
  ASSERT_TRUE(ev.sanitizer);
  ASSERT_TRUE(ev.sanitizer->ran) << ev.sanitizer->reason;
  EXPECT_EQ(ev.status, Status::passed) << ev.message << ev.sanitizer->report.log;
  EXPECT_TRUE(ev.sanitizer->finding.empty()) << ev.sanitizer->finding;
  EXPECT_TRUE(ev.sanitizer->call_completed);
  for (const auto& phase : ev.phases)
    if (phase.name == "sanitizer")
      std::printf("memcheck of the Triton child's single call: %.0f ms\n",
                  static_cast<double>(phase.elapsed.count()) / 1000.0);
}

// The paper's ncu audit (§A.2) of a Triton candidate: the Python child's single call replayed
// under ncu (kernel replay) counts, row by row of the sm_90a counter table, what the in-process
// range profiler counted.
TEST(TritonEvaluatorGpu, TheNcuAuditOfThePersistentTmaGemmAgreesWithTheInProcessCounts) {
  if (find_cuda_tool("ncu").empty())
    GTEST_SKIP() << "ncu not installed";
  EvalOptions options = triton_options();
  options.audit = Audit::ncu;
  const Evaluation ev = evaluate_triton("gemm_persistent_tma.py", options);
  ASSERT_EQ(ev.status, Status::passed) << ev.message;
  ASSERT_TRUE(ev.ncu_audit);
  ASSERT_TRUE(ev.ncu_audit->ran) << ev.ncu_audit->reason;
  ASSERT_TRUE(ev.dynamic && ev.dynamic->verdict != DynamicState::unknown)
      << "in-process counts unavailable: " << (ev.dynamic ? ev.dynamic->reason : "no pass");
  std::printf("%s", render_text(*ev.ncu_audit).c_str());
  EXPECT_EQ(ev.ncu_audit->agreement, Agreement::agree) << ev.ncu_audit->agreement_note;
  ASSERT_EQ(ev.ncu_audit->counts.size(), 4u); // the sm_90a rows
  EXPECT_EQ(ev.ncu_audit->counts[0].family, "gmma");
  EXPECT_GT(ev.ncu_audit->counts[0].ncu, 0u);
  EXPECT_GT(ev.ncu_audit->audit->families.gmma_thread_true, 0u);
  EXPECT_GT(ev.ncu_audit->counts[1].ncu, 0u); // TMA loads
  EXPECT_EQ(testing::stray_children(), 0);
}

TEST(TritonEvaluatorGpu, MemcheckNamesAnOutOfBoundsWriteInATritonKernel) {
  EvalOptions options = triton_options();
  options.sanitize = Sanitize::memcheck;
  const Evaluation ev = evaluate_triton("out_of_bounds_write.py", options);
  ASSERT_TRUE(ev.sanitizer);
  ASSERT_TRUE(ev.sanitizer->ran) << ev.sanitizer->reason;
  std::printf("%s", ev.sanitizer->report.log.c_str());
  EXPECT_EQ(ev.status, Status::runtime_error) << ev.message;
  EXPECT_EQ(ev.message.rfind("compute-sanitizer memcheck: Invalid __global__ write", 0), 0u)
      << ev.message;
  EXPECT_TRUE(contains(ev.message, "poke_past_end")) << ev.message;
  expect_healthy_after("out_of_bounds_write.py");
}

// An Evaluator whose Python package root is a copy of python/ptxbench_triton/ with a gate.py
// that passes every file: the real child.py loads and calls the candidate, so only the static
// gate is bypassed. The folder outlives the Evaluator (members are destroyed in reverse).
struct GateBypassed {
  util::TempFolder root;
  std::unique_ptr<Evaluator> evaluator;
};

GateBypassed evaluator_without_gate() {
  auto made = util::TempFolder::make("ptxbench-no-gate", "a package root without the gate");
  if (!made)
    throw std::runtime_error(made.error().message);
  const std::filesystem::path package = made->path() / "ptxbench_triton";
  const std::filesystem::path shipped =
      std::filesystem::path(PTXBENCH_PYTHON_ROOT) / "ptxbench_triton";
  std::filesystem::create_directories(package);
  for (const char* file : {"__init__.py", "child.py"})
    std::filesystem::copy_file(shipped / file, package / file);
  auto written = util::write_file_atomic(package / "gate.py", "def main(argv=None):\n"
                                                              "    print('{\"findings\": []}')\n"
                                                              "    return 0\n");
  if (!written)
    throw std::runtime_error(written.error().message);
  EvaluatorOptions options;
  options.python_root = made->path();
  options.children = ChildStart::on_demand; // no spare ptxbench-candidate beside the supervisor's
  GateBypassed bypassed{std::move(*made), nullptr};
  bypassed.evaluator =
      std::make_unique<Evaluator>(*testing::supervisor().checker, *testing::supervisor().suite,
                                  std::filesystem::path{}, std::filesystem::path{}, options);
  return bypassed;
}

constexpr std::array<const char*, 3> kLibraryFixtures{"alias_matmul.py", "dunder_matmul.py",
                                                      "aten_overload.py"};

TEST(TritonEvaluatorGpu, LibraryCallsInAnyFormAreStoppedByTheGateBeforeTheGpu) {
  for (const char* name : kLibraryFixtures) {
    const Evaluation ev = evaluate_triton(name);
    EXPECT_EQ(ev.status, Status::compile_error) << name << ": " << ev.message;
    EXPECT_EQ(ev.check.outcome, CheckOutcome::banned_library) << name << ": " << ev.message;
    EXPECT_TRUE(contains(ev.message, "rejected by the Triton gate")) << name << ": " << ev.message;
    EXPECT_FALSE(ev.gpu_ran) << name;
  }
  expect_healthy_after("the library fixtures");
}

TEST(TritonEvaluatorGpu, LibraryCallsTheGateRejectsAreForeignKernelsWhenTheGateIsBypassed) {
  auto problem = testing::supervisor().suite->find("gemm_n7168_k5120");
  ASSERT_TRUE(problem) << problem.error().message;
  {
    GateBypassed bypassed = evaluator_without_gate();
    for (const char* name : kLibraryFixtures) {
      auto ev = bypassed.evaluator->evaluate(fixture(name), **problem, triton_options());
      ASSERT_TRUE(ev) << name << ": " << ev.error().message;
      EXPECT_EQ(ev->check.outcome, CheckOutcome::ok) << name << ": the stub gate passes it";
      EXPECT_EQ(ev->status, Status::runtime_error) << name << ": " << ev->message << ev->child_log;
      ASSERT_TRUE(ev->broken_rule) << name << ": " << ev->message;
      EXPECT_EQ(ev->broken_rule->rule, Rule::foreign_kernel) << name << ": " << ev->message;
      ASSERT_FALSE(ev->foreign_kernels.empty()) << name;
      EXPECT_TRUE(contains(ev->message, ev->foreign_kernels.front()))
          << name << ": " << ev->message;
      ASSERT_TRUE(ev->launches.cubin_functions) << name;
      EXPECT_NE(std::find(ev->launches.cubin_functions->begin(),
                          ev->launches.cubin_functions->end(), "copy_into"),
                ev->launches.cubin_functions->end())
          << name << ": the Triton copy kernel is the candidate's own";
    }
    bypassed.evaluator->settle();
  }
  expect_healthy_after("the library fixtures with the gate bypassed");
}

} // namespace
} // namespace ptxbench::exec
