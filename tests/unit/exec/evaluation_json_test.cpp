// The Evaluation read back from `ptxbench eval --json`: every field the JSON carries comes back
// as it went out, non-finite errors included, and a malformed result is an error with its JSON
// path, never a throw.
#include "exec/evaluation.hpp"

#include <cmath>
#include <gtest/gtest.h>
#include <optional>

using namespace ptxbench;
using namespace ptxbench::exec;
using Status = trace::EvaluationStatus;

namespace {

suite::Problem gemm_problem() {
  suite::Problem problem;
  problem.definition.name = "gemm_n7168_k5120";
  problem.workload.uuid = "gemm-default";
  problem.workload.axes = {{"M", 4096}};
  return problem;
}

TimingReport full_timing() {
  TimingReport t;
  t.candidate_trial_ms = {0.8, 0.81, 0.79};
  t.reference_trial_ms = {1.0, 1.01, 0.99};
  t.candidate_event_ms = {0.82, 0.83, 0.81};
  t.candidate_ms = 0.8;
  t.reference_ms = 1.0;
  t.reference_cached = true;
  t.kernels = {"_Z4gemmv"};
  t.kernel_launches = {
      "grid 132x1x1 block 384x1x1 cluster 1x1x1 smem 0+229376 B (executed 233472 B) regs 168"};
  t.reference_event_ms = {1.02, 1.03, 1.01};
  t.mode = "batched";
  t.strict_reason = "a pair differed";
  t.inputs_warm = true;
  t.preheat_ms = 12.5;
  t.window_wait_ms = 231.25;
  t.retimed_pairs = {"pair 2: spread"};
  t.interleave_calls = 4;
  t.unexplained_ms = 0.31;
  t.preload_calibration_ms = {1.95, 1.97, 1.94, 2.01};
  t.calibration_cap_ms = 2.5;
  t.calibration_capped = true;
  t.speed_of_light_ms = 0.5617;
  t.phases_over_bound = {"phase 1: 0.310 ms per call unexplained, 0.250 ms allowed"};
  t.host_cpu_stall_share = 0.42;
  t.supervisor_run_delay_ms = 3.5;
  return t;
}

DynamicReport full_dynamic() {
  DynamicReport d;
  d.verdict = DynamicState::present;
  d.reason = "one family not executed";
  d.families = {{sass::Family::gmma, 32, 917504, DynamicState::present},
                {sass::Family::tma, 8, 0, DynamicState::not_executed}};
  d.tensor_flops = 3.75e11;
  d.coverage = 0.875;
  d.foreign_ranges = 2;
  d.counts_cache = "reused: counted 2026-12-04T10:00:00Z";
  d.raw = trace::Json{{"available", true}, {"gmma", "NaN"}, {"pass_ms", "Infinity"}};
  return d;
}

LaunchEvidence full_launches() {
  LaunchEvidence l;
  l.correctness = {{0, false, {"_Z4gemmv"}, 0.9}, {0, true, {"_Z4gemmv", "_Z4initv"}, {}}};
  l.timed = {{{"_Z4gemmv"}, 30}};
  l.counted = {"_Z4gemmv"};
  l.refused = {"cuModuleLoadData"};
  return l;
}

// Every field to_json writes, set to something other than its default.
Evaluation full_evaluation(std::uint64_t candidate_inf) {
  Evaluation ev;
  ev.status = Status::incorrect_numerical;
  ev.message = "correctness call on input set 1: 5 of 100 elements wrong";
  ev.gpu_ran = true;
  ev.check.arch = compile::Arch::sm_100a;
  ev.problem = "gemm_n7168_k5120";
  ev.solution_name = "gemm_n7168_k5120_0123abcd";
  ev.correctness = CompareStats{100, 5, 3, candidate_inf, 1, 0.004, 0.008};
  ev.comparisons = {"correctness call (input set 0)", "correctness call (input set 1)"};
  ev.required_matched_ratio = 0.99;
  ev.tolerated_failures = 7;
  ev.timing = full_timing();
  ev.dynamic = full_dynamic();
  ev.foreign_kernels = {"cutlass_kernel"};
  ev.launches = full_launches();
  ev.broken_rule = BrokenRule{Rule::foreign_kernel, ev.message, ev.foreign_kernels};
  ev.violations = {"1 kernel(s) launched that are not in the candidate's kernel.so"};
  ev.seed = 18446744073709551557ull;
  ev.sets = 3;
  ev.gpu = "NVIDIA H200";
  ev.library = "cuBLASLt";
  ev.libs = {{"cuda", "13.0"}, {"baseline", "cuBLASLt"}};
  ev.clocks = trace::Json{{"sm_mhz_before", 1980}, {"sm_mhz_after", 1755}};
  ev.child_startup = trace::Json{{"cuda_driver", 41.5}, {"context", 120.25}};
  ev.phases = {{"static", std::chrono::microseconds(1500)},
               {"timing", std::chrono::microseconds(2250125)}};
  ev.timestamp = "2026-11-30T05:00:00.000000";
  return ev;
}

trace::Json wire(const Evaluation& ev) {
  return trace::Json::parse(to_json(ev, gemm_problem()).dump());
}

void expect_same_timing(const TimingReport& a, const TimingReport& b) {
  EXPECT_EQ(a.candidate_trial_ms, b.candidate_trial_ms);
  EXPECT_EQ(a.reference_trial_ms, b.reference_trial_ms);
  EXPECT_EQ(a.candidate_event_ms, b.candidate_event_ms);
  EXPECT_EQ(a.candidate_ms, b.candidate_ms);
  EXPECT_EQ(a.reference_ms, b.reference_ms);
  EXPECT_EQ(a.reference_cached, b.reference_cached);
  EXPECT_EQ(a.kernels, b.kernels);
  EXPECT_EQ(a.kernel_launches, b.kernel_launches);
  EXPECT_EQ(a.reference_event_ms, b.reference_event_ms);
  EXPECT_EQ(a.mode, b.mode);
  EXPECT_EQ(a.strict_reason, b.strict_reason);
  EXPECT_EQ(a.inputs_warm, b.inputs_warm);
  EXPECT_EQ(a.preheat_ms, b.preheat_ms);
  EXPECT_EQ(a.window_wait_ms, b.window_wait_ms);
  EXPECT_EQ(a.retimed_pairs, b.retimed_pairs);
  EXPECT_EQ(a.interleave_calls, b.interleave_calls);
  EXPECT_EQ(a.unexplained_ms, b.unexplained_ms);
  EXPECT_EQ(a.preload_calibration_ms, b.preload_calibration_ms);
  EXPECT_EQ(a.calibration_cap_ms, b.calibration_cap_ms);
  EXPECT_EQ(a.calibration_capped, b.calibration_capped);
  EXPECT_EQ(a.speed_of_light_ms, b.speed_of_light_ms);
  EXPECT_EQ(a.phases_over_bound, b.phases_over_bound);
  EXPECT_EQ(a.host_cpu_stall_share, b.host_cpu_stall_share);
  EXPECT_EQ(a.supervisor_run_delay_ms, b.supervisor_run_delay_ms);
}

void expect_same_dynamic(const DynamicReport& a, const DynamicReport& b) {
  EXPECT_EQ(a.verdict, b.verdict);
  EXPECT_EQ(a.reason, b.reason);
  ASSERT_EQ(a.families.size(), b.families.size());
  for (std::size_t i = 0; i < a.families.size(); ++i) {
    EXPECT_EQ(a.families[i].family, b.families[i].family);
    EXPECT_EQ(a.families[i].static_count, b.families[i].static_count);
    EXPECT_EQ(a.families[i].executed, b.families[i].executed);
    EXPECT_EQ(a.families[i].state, b.families[i].state);
  }
  EXPECT_EQ(a.tensor_flops, b.tensor_flops);
  EXPECT_EQ(a.coverage, b.coverage);
  EXPECT_EQ(a.coverage_unknown, b.coverage_unknown);
  EXPECT_EQ(a.foreign_ranges, b.foreign_ranges);
  EXPECT_EQ(a.counts_cache, b.counts_cache);
  EXPECT_EQ(a.raw, b.raw);
}

void expect_same_launches(const LaunchEvidence& a, const LaunchEvidence& b) {
  ASSERT_EQ(a.correctness.size(), b.correctness.size());
  for (std::size_t i = 0; i < a.correctness.size(); ++i) {
    EXPECT_EQ(a.correctness[i].set, b.correctness[i].set);
    EXPECT_EQ(a.correctness[i].repeat, b.correctness[i].repeat);
    EXPECT_EQ(a.correctness[i].launches, b.correctness[i].launches);
    EXPECT_EQ(a.correctness[i].latency_ms, b.correctness[i].latency_ms);
  }
  ASSERT_EQ(a.timed.size(), b.timed.size());
  for (std::size_t i = 0; i < a.timed.size(); ++i) {
    EXPECT_EQ(a.timed[i].kernels, b.timed[i].kernels);
    EXPECT_EQ(a.timed[i].calls, b.timed[i].calls);
  }
  EXPECT_EQ(a.counted, b.counted);
  EXPECT_EQ(a.refused, b.refused);
}

// The reported errors (NaN or +inf when a candidate NaN or inf failed) are what travels.
void expect_same_correctness(const CompareStats& a, const CompareStats& b) {
  EXPECT_EQ(a.elements, b.elements);
  EXPECT_EQ(a.failed, b.failed);
  EXPECT_EQ(a.candidate_nan, b.candidate_nan);
  EXPECT_EQ(a.candidate_inf, b.candidate_inf);
  EXPECT_EQ(a.reference_nonfinite, b.reference_nonfinite);
  auto same = [](double x, double y) { return (std::isnan(x) && std::isnan(y)) || x == y; };
  EXPECT_TRUE(same(a.reported_abs_error(), b.reported_abs_error())) << b.reported_abs_error();
  EXPECT_TRUE(same(a.reported_rel_error(), b.reported_rel_error())) << b.reported_rel_error();
}

void expect_same_top_level(const Evaluation& a, const Evaluation& b) {
  EXPECT_EQ(a.status, b.status);
  EXPECT_EQ(a.message, b.message);
  EXPECT_EQ(a.gpu_ran, b.gpu_ran);
  EXPECT_EQ(a.needs_gpu, b.needs_gpu);
  EXPECT_EQ(a.check.arch, b.check.arch);
  EXPECT_EQ(a.problem, b.problem);
  EXPECT_EQ(a.solution_name, b.solution_name);
  EXPECT_EQ(a.comparisons, b.comparisons);
  EXPECT_EQ(a.required_matched_ratio, b.required_matched_ratio);
  EXPECT_EQ(a.tolerated_failures, b.tolerated_failures);
  EXPECT_EQ(a.foreign_kernels, b.foreign_kernels);
  ASSERT_EQ(a.broken_rule.has_value(), b.broken_rule.has_value());
  if (a.broken_rule) {
    EXPECT_EQ(a.broken_rule->rule, b.broken_rule->rule);
    EXPECT_EQ(a.broken_rule->message, b.broken_rule->message);
    EXPECT_EQ(a.broken_rule->kernels, b.broken_rule->kernels);
  }
  EXPECT_EQ(a.violations, b.violations);
  EXPECT_EQ(a.seed, b.seed);
  EXPECT_EQ(a.sets, b.sets);
  EXPECT_EQ(a.gpu, b.gpu);
  EXPECT_EQ(a.library, b.library);
  EXPECT_EQ(a.libs, b.libs);
  EXPECT_EQ(a.clocks, b.clocks);
  EXPECT_EQ(a.child_startup, b.child_startup);
  ASSERT_EQ(a.phases.size(), b.phases.size());
  for (std::size_t i = 0; i < a.phases.size(); ++i) {
    EXPECT_EQ(a.phases[i].name, b.phases[i].name);
    EXPECT_EQ(a.phases[i].elapsed, b.phases[i].elapsed);
  }
  EXPECT_EQ(a.timestamp, b.timestamp);
}

TEST(EvaluationJson, EveryFieldTheJsonCarriesComesBackNonFiniteErrorsIncluded) {
  for (std::uint64_t candidate_inf : {0, 2}) { // NaN errors, then +Infinity
    const Evaluation sent = full_evaluation(candidate_inf);
    const trace::Json json = wire(sent);
    const trace::Json& errors = json["trace"]["evaluation"]["ptxbench"]["correctness"];
    EXPECT_EQ(errors["max_absolute_error"], candidate_inf ? "Infinity" : "NaN") << errors;
    auto back = evaluation_from_json(json, "eval.json");
    ASSERT_TRUE(back) << back.error().message;
    expect_same_top_level(sent, *back);
    ASSERT_TRUE(back->correctness && back->timing && back->dynamic);
    expect_same_correctness(*sent.correctness, *back->correctness);
    expect_same_timing(*sent.timing, *back->timing);
    expect_same_dynamic(*sent.dynamic, *back->dynamic);
    expect_same_launches(sent.launches, back->launches);
    // Written again, the decoded value gives the same bytes.
    EXPECT_EQ(to_json(*back, gemm_problem()).dump(), json.dump());
  }
}

TEST(EvaluationJson, AnEvaluationWithoutAGpuComesBackWithWhatItNeeded) {
  Evaluation sent;
  sent.status = Status::compile_error;
  sent.message = "nvcc failed";
  sent.needs_gpu = "no GPU on this machine";
  sent.problem = "gemm_n7168_k5120";
  sent.solution_name = "gemm_n7168_k5120_0123abcd";
  sent.gpu = "none";
  sent.timestamp = "2026-11-30T05:00:00.000000";
  auto back = evaluation_from_json(wire(sent), "eval.json");
  ASSERT_TRUE(back) << back.error().message;
  expect_same_top_level(sent, *back);
  EXPECT_FALSE(back->correctness || back->timing || back->dynamic);
}

TEST(EvaluationJson, ATritonEvaluationKeepsItsLanguageAndWarmUpTime) {
  Evaluation sent;
  sent.status = Status::runtime_error;
  sent.message = "`run` raised a Python exception";
  sent.problem = "gemm_n7168_k5120";
  sent.solution_name = "gemm_n7168_k5120_0123abcd";
  sent.timestamp = "2026-12-01T05:00:00.000000";
  sent.check.language = compile::Language::triton;
  sent.jit_ms = 1655.9;
  sent.child_reads_confined = false; // a Triton child is not confined
  const trace::Json json = wire(sent);
  EXPECT_EQ(json["trace"]["evaluation"]["ptxbench"]["jit_ms"], 1655.9);
  EXPECT_EQ(json["trace"]["evaluation"]["ptxbench"]["child_reads_confined"], false);
  auto back = evaluation_from_json(json, "eval.json");
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back->check.language, compile::Language::triton);
  ASSERT_TRUE(back->jit_ms);
  EXPECT_DOUBLE_EQ(*back->jit_ms, 1655.9);
  EXPECT_EQ(back->child_reads_confined, std::optional<bool>(false));
  Evaluation cuda = sent;
  cuda.check.language = compile::Language::cuda;
  cuda.jit_ms.reset();
  cuda.child_reads_confined = true;
  const trace::Json plain = wire(cuda);
  EXPECT_FALSE(plain["trace"]["evaluation"]["ptxbench"].contains("jit_ms"));
  EXPECT_EQ(evaluation_from_json(plain, "eval.json")->child_reads_confined,
            std::optional<bool>(true));
  EXPECT_FALSE(plain["trace"]["evaluation"]["ptxbench"].contains("language"));
  EXPECT_EQ(evaluation_from_json(plain, "eval.json")->check.language, compile::Language::cuda);
}

std::string decode_error(const trace::Json& json) {
  std::optional<util::Expected<Evaluation>> back;
  EXPECT_NO_THROW(back.emplace(evaluation_from_json(json, "eval.json")));
  if (!back || *back) {
    ADD_FAILURE() << "decoded without an error: " << json.dump();
    return "";
  }
  EXPECT_EQ((*back).error().kind, util::ErrorKind::invalid_input);
  return (*back).error().message;
}

TEST(EvaluationJson, AMalformedResultIsAnErrorWithItsJsonPath) {
  const trace::Json good = wire(full_evaluation(0));
  auto broken = [&](auto change) {
    trace::Json json = good;
    change(json["trace"]["evaluation"]["ptxbench"]);
    return decode_error(json);
  };
  EXPECT_EQ(broken([](trace::Json& x) { x["correctness"]["elements"] = "many"; }),
            "eval.json: $.trace.evaluation.ptxbench.correctness.elements: expected an integer, "
            "got string");
  EXPECT_EQ(broken([](trace::Json& x) { x["dynamic"]["verdict"] = "sometimes"; }),
            "eval.json: $.trace.evaluation.ptxbench.dynamic.verdict: unknown dynamic state "
            "\"sometimes\"");
  EXPECT_EQ(broken([](trace::Json& x) { x["timing"]["candidate_trial_ms"][1] = nullptr; }),
            "eval.json: $.trace.evaluation.ptxbench.timing.candidate_trial_ms[1]: expected a "
            "number, NaN or Infinity, got null");
  EXPECT_EQ(broken([](trace::Json& x) { x["launches"].erase("timed_calls"); }),
            "eval.json: $.trace.evaluation.ptxbench.launches: missing required key "
            "\"timed_calls\"");
  EXPECT_EQ(broken([](trace::Json& x) { x["seed"] = "-1x"; }),
            "eval.json: $.trace.evaluation.ptxbench.seed: expected a decimal 64-bit seed, got "
            "\"-1x\"");
  trace::Json no_workload = good;
  no_workload["trace"].erase("workload");
  EXPECT_EQ(decode_error(no_workload), "eval.json: $.trace: missing required key \"workload\"");
  EXPECT_EQ(decode_error(trace::Json::array()), "eval.json: $: expected an object, got array");
  EXPECT_EQ(decode_error(trace::Json::object()), "eval.json: $: missing required key \"trace\"");
}

} // namespace
