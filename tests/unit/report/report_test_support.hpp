// A synthetic run store written through the real RunStore API, with turns chosen so that every
// metric can be worked out by hand (metrics_test.cpp shows the arithmetic).
#pragma once

#include "report/format.hpp"
#include "report/model.hpp"
#include "report/report.hpp"
#include "store/run_store.hpp"
#include "support/golden.hpp"
#include "support/scratch_dir.hpp"
#include "util/error.hpp"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <gtest/gtest.h>
#include <optional>
#include <string>
#include <string_view>
#include <unistd.h>
#include <vector>

namespace ptxbench::report::testing {

// Every file `format` renders for `report`, concatenated in render order.
inline std::string render(const Report& report, std::string_view format) {
  auto renderer = make_format(format);
  if (!renderer)
    throw util::Fatal(renderer.error().message);
  return concatenate((*renderer)->render(report, {}));
}

using test_support::ScratchDir;

// One turn to write: its category, whether it used budget, and (when evaluated) the speedup
// and the verdict names the evaluator stores.
struct TurnSpec {
  store::TurnCategory category = store::TurnCategory::compile;
  store::Counting counting = store::Counting::counted;
  std::optional<double> speedup;
  std::optional<std::string> static_verdict;
  std::optional<std::string> dynamic_verdict;
};

inline TurnSpec error(store::TurnCategory category) {
  return TurnSpec{category, store::Counting::counted, {}, {}, {}};
}
inline TurnSpec infra() {
  return TurnSpec{store::TurnCategory::infra, store::Counting::not_counted, {}, {}, {}};
}
// A correct turn; `dynamic` is the stored dynamic verdict ("present", "not_executed",
// "unknown"…); a static "absent" is written when `dynamic` is "absent".
inline TurnSpec correct(double speedup, std::string dynamic) {
  TurnSpec spec{store::TurnCategory::correct, store::Counting::counted, speedup, "present",
                dynamic};
  if (dynamic == "absent")
    spec = {store::TurnCategory::correct, store::Counting::counted, speedup, "absent",
            std::nullopt};
  return spec;
}

// Model calls written with each turn: the k-th replied call of a run (k = 1, 2, …) reports
// 100·k² reasoning tokens, reasoning + 200 output tokens, 1000 input tokens and $0.01; an infra
// turn gets one failed attempt (no tokens, no cost).
struct CallCounter {
  std::int64_t replied = 0;
};

inline store::ModelCallRecord model_call(std::int64_t reasoning, std::int64_t input, double cost) {
  store::ModelCallRecord call;
  call.provider = "openai_chat";
  call.model = "api-model";
  call.request_sha256 = std::string(64, 'a');
  call.input_tokens = input;
  call.reasoning_tokens = reasoning;
  call.output_tokens = reasoning + 200;
  call.cost_usd = cost;
  call.http_status = 200;
  call.finish_reason = "stop";
  return call;
}

inline void write_call(store::RunStore& run, store::TurnId turn, const TurnSpec& spec,
                       CallCounter& calls) {
  store::ModelCallRecord call;
  if (spec.category == store::TurnCategory::infra) {
    call = model_call(0, 0, 0.0);
    call.output_tokens = 0;
    call.http_status = 503;
    call.error_kind = util::ErrorKind::http_status;
    call.error_message = "service unavailable";
  } else {
    ++calls.replied;
    call = model_call(100 * calls.replied * calls.replied, 1000, 0.01);
  }
  ASSERT_TRUE(run.record_model_call(turn, call));
}

// A passed FlashInfer-Trace evaluation run on `hardware` (where the report reads the GPU).
inline trace::Trace evaluated_on(const std::string& hardware, double speedup) {
  trace::Trace t;
  t.definition = "gemm";
  t.workload.axes = {{"M", 128}};
  t.workload.inputs = {{"A", trace::RandomInput{}}};
  t.workload.uuid = "5d0b5d4e-9b7f-4c55-9a51-0c2b3f0d9e21";
  t.solution = "candidate";
  trace::Evaluation e;
  e.status = trace::EvaluationStatus::passed;
  e.environment.hardware = hardware;
  e.timestamp = "2026-05-01T00:00:00Z";
  e.correctness = trace::Correctness{0.001, 0.002, std::nullopt};
  e.performance = trace::Performance{1.0, speedup, speedup};
  t.evaluation = e;
  return t;
}

inline void write_turn(store::RunStore& run, store::TrajectoryId trajectory, const TurnSpec& spec,
                       CallCounter& calls, const std::string& hardware = {}) {
  auto turn = run.begin_turn(trajectory);
  ASSERT_TRUE(turn) << turn.error().message;
  write_call(run, turn->id, spec, calls);
  if (spec.category != store::TurnCategory::infra &&
      spec.category != store::TurnCategory::extraction) {
    store::EvaluationRecord evaluation;
    evaluation.kernel_source = "__global__ void k() {} // " + std::to_string(turn->id.value);
    evaluation.speedup = spec.speedup;
    evaluation.static_verdict = spec.static_verdict;
    evaluation.dynamic_verdict = spec.dynamic_verdict;
    if (!hardware.empty())
      evaluation.traces = {evaluated_on(hardware, spec.speedup.value_or(1.0))};
    ASSERT_TRUE(run.record_evaluation(turn->id, evaluation));
  }
  store::TurnOutcome outcome;
  outcome.category = spec.category;
  outcome.counting = spec.counting;
  outcome.reply = "reply";
  ASSERT_TRUE(run.finish_turn(turn->id, outcome));
}

// A turn cut off by a crash: begun, one paid call (5000 reasoning tokens, 1000 input, $0.50),
// never finished; the next begin_turn abandons it.
inline void write_cut_off_turn(store::RunStore& run, store::TrajectoryId trajectory) {
  auto turn = run.begin_turn(trajectory);
  ASSERT_TRUE(turn) << turn.error().message;
  ASSERT_TRUE(run.record_model_call(turn->id, model_call(5000, 1000, 0.5)));
}

inline store::TrajectoryId write_trajectory(store::RunStore& run, const store::TrajectoryKey& key,
                                            const std::vector<TurnSpec>& turns, CallCounter& calls,
                                            const std::string& hardware = {}) {
  auto trajectory = run.open_trajectory(key);
  if (!trajectory)
    throw util::Fatal(trajectory.error().message);
  for (const TurnSpec& spec : turns)
    write_turn(run, *trajectory, spec, calls, hardware);
  if (!run.finish_trajectory(*trajectory, store::ExitReason::turn_budget))
    throw util::Fatal("finish_trajectory failed");
  return *trajectory;
}

inline std::unique_ptr<store::RunStore>
create_run(const std::filesystem::path& dir, const std::string& config_json = R"({"turns":8})") {
  auto run = store::RunStore::open(dir, store::RunInfo{config_json, "0.1.0-test", ""});
  if (!run)
    throw util::Fatal(run.error().message);
  return std::move(*run);
}

// The synthetic run (hand-computed values in metrics_test.cpp and usage_test.cpp).
// C(s, state): correct turn with speedup s; I: infra turn (not counted); X: a turn cut off by a
// crash (abandoned, never finished).
//   alpha / gemm / v1  T0: compile, C(0.5, present), C(0.9, unknown)
//                      T1: C(0.4, present), I, numerical, C(1.2, absent)
//   alpha / gemm / v2  T2: runtime, runtime
//                      T3: C(0.7, not_executed), C(0.6, present)
//   alpha / mha  / v1  T4: X, extraction, compile
// Every finished non-infra turn has one replied call (12 in all, k = 1…12 in the order above).
inline void write_synthetic_run(const std::filesystem::path& dir) {
  using store::TurnCategory;
  auto run = create_run(dir);
  CallCounter calls;
  write_trajectory(*run, {"alpha", "gemm", "v1", 0},
                   {error(TurnCategory::compile), correct(0.5, "present"), correct(0.9, "unknown")},
                   calls);
  write_trajectory(
      *run, {"alpha", "gemm", "v1", 1},
      {correct(0.4, "present"), infra(), error(TurnCategory::numerical), correct(1.2, "absent")},
      calls);
  write_trajectory(*run, {"alpha", "gemm", "v2", 0},
                   {error(TurnCategory::runtime), error(TurnCategory::runtime)}, calls);
  write_trajectory(*run, {"alpha", "gemm", "v2", 1},
                   {correct(0.7, "not_executed"), correct(0.6, "present")}, calls);
  auto mha = run->open_trajectory({"alpha", "mha", "v1", 0});
  ASSERT_TRUE(mha) << mha.error().message;
  write_cut_off_turn(*run, *mha);
  write_turn(*run, *mha, error(TurnCategory::extraction), calls);
  write_turn(*run, *mha, error(TurnCategory::compile), calls);
  ASSERT_TRUE(run->finish_trajectory(*mha, store::ExitReason::turn_budget));
}

// A run whose configuration names "NVIDIA B200" but whose one evaluated trajectory recorded
// "NVIDIA H200": the evaluation wins for that trajectory, the configuration for the other.
//   beta / gemm / v1  T0: C(2.0, present) evaluated on NVIDIA H200   (1 call, 100 reasoning)
//                     T1: extraction, no evaluation                  (1 call, 400 reasoning)
inline void write_gpu_run(const std::filesystem::path& dir) {
  auto run = create_run(dir, R"({"turns":8,"gpu":"NVIDIA B200"})");
  CallCounter calls;
  write_trajectory(*run, {"beta", "gemm", "v1", 0}, {correct(2.0, "present")}, calls,
                   "NVIDIA H200");
  write_trajectory(*run, {"beta", "gemm", "v1", 1}, {error(store::TurnCategory::extraction)},
                   calls);
}

// The synthetic run's report, with a fixed source name (the scratch path changes per run).
inline Report synthetic_report(const std::filesystem::path& dir) {
  write_synthetic_run(dir);
  auto run = load_run(dir);
  if (!run)
    throw util::Fatal(run.error().message);
  Report report = build_report(*run);
  report.sources = {"synthetic"};
  return report;
}

// Compares with tests/data/report/`name`; PTXBENCH_UPDATE_GOLDEN=1 rewrites the file instead.
inline void expect_golden(const std::string& name, const std::string& actual) {
  test_support::expect_golden(std::filesystem::path("report") / name, actual);
}

} // namespace ptxbench::report::testing
