// A synthetic run store written through the real RunStore API, with turns chosen so that every
// metric can be worked out by hand (metrics_test.cpp shows the arithmetic).
#pragma once

#include "support/scratch_dir.hpp"

#include "report/model.hpp"
#include "store/run_store.hpp"

#include <algorithm>
#include <filesystem>
#include <gtest/gtest.h>
#include <optional>
#include <string>
#include <unistd.h>
#include <vector>

namespace ptxbench::report::testing {

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
  if (dynamic == "absent") spec = {store::TurnCategory::correct, store::Counting::counted,
                                   speedup, "absent", std::nullopt};
  return spec;
}

inline void write_turn(store::RunStore& run, store::TrajectoryId trajectory, const TurnSpec& spec) {
  auto turn = run.begin_turn(trajectory);
  ASSERT_TRUE(turn) << turn.error().message;
  if (spec.category != store::TurnCategory::infra && spec.category != store::TurnCategory::extraction) {
    store::EvaluationRecord evaluation;
    evaluation.kernel_source = "__global__ void k() {} // " + std::to_string(turn->id.value);
    evaluation.speedup = spec.speedup;
    evaluation.static_verdict = spec.static_verdict;
    evaluation.dynamic_verdict = spec.dynamic_verdict;
    ASSERT_TRUE(run.record_evaluation(turn->id, evaluation));
  }
  store::TurnOutcome outcome;
  outcome.category = spec.category;
  outcome.counting = spec.counting;
  outcome.reply = "reply";
  ASSERT_TRUE(run.finish_turn(turn->id, outcome));
}

inline void write_trajectory(store::RunStore& run, const store::TrajectoryKey& key,
                             const std::vector<TurnSpec>& turns) {
  auto trajectory = run.open_trajectory(key);
  ASSERT_TRUE(trajectory) << trajectory.error().message;
  for (const TurnSpec& spec : turns) write_turn(run, *trajectory, spec);
  ASSERT_TRUE(run.finish_trajectory(*trajectory, store::ExitReason::turn_budget));
}

inline std::unique_ptr<store::RunStore> create_run(const std::filesystem::path& dir) {
  auto run = store::RunStore::open(dir, store::RunInfo{R"({"turns":8})", "0.1.0-test", ""});
  if (!run) throw util::Fatal(run.error().message);
  return std::move(*run);
}

// The synthetic run (hand-computed values in metrics_test.cpp). C(s, state): correct turn with
// speedup s; I: infra turn (not counted).
//   alpha / gemm / v1  T0: compile, C(0.5, present), C(0.9, unknown)
//                      T1: C(0.4, present), I, numerical, C(1.2, absent)
//   alpha / gemm / v2  T2: runtime, runtime
//                      T3: C(0.7, not_executed), C(0.6, present)
//   alpha / mha  / v1  T4: extraction, compile
inline void write_synthetic_run(const std::filesystem::path& dir) {
  using store::TurnCategory;
  auto run = create_run(dir);
  write_trajectory(*run, {"alpha", "gemm", "v1", 0},
                   {error(TurnCategory::compile), correct(0.5, "present"),
                    correct(0.9, "unknown")});
  write_trajectory(*run, {"alpha", "gemm", "v1", 1},
                   {correct(0.4, "present"), infra(), error(TurnCategory::numerical),
                    correct(1.2, "absent")});
  write_trajectory(*run, {"alpha", "gemm", "v2", 0},
                   {error(TurnCategory::runtime), error(TurnCategory::runtime)});
  write_trajectory(*run, {"alpha", "gemm", "v2", 1},
                   {correct(0.7, "not_executed"), correct(0.6, "present")});
  write_trajectory(*run, {"alpha", "mha", "v1", 0},
                   {error(TurnCategory::extraction), error(TurnCategory::compile)});
}

} // namespace ptxbench::report::testing
