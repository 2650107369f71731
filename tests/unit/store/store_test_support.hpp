// Scratch run folders and sample records for the store tests.
#pragma once

#include "store/run_store.hpp"
#include "support/scratch_dir.hpp"

#include <algorithm>
#include <filesystem>
#include <gtest/gtest.h>
#include <string>
#include <unistd.h>
#include <vector>

namespace ptxbench::store::testing {

using test_support::ScratchDir;

inline RunInfo sample_run_info() {
  return RunInfo{R"({"models":["local"],"turns":8})", "0.1.0-test", ""};
}

inline std::unique_ptr<RunStore> open_store(const std::filesystem::path& dir) {
  auto store = RunStore::open(dir, sample_run_info());
  if (!store)
    throw util::Fatal(store.error().message);
  return std::move(*store);
}

inline TrajectoryKey sample_key(std::int64_t sample = 0) {
  return TrajectoryKey{"local", "gemm_n7168_k5120", "hopper-no-hint", sample};
}

inline trace::Trace passed_trace(double speedup) {
  trace::Trace t;
  t.definition = "gemm_n7168_k5120";
  t.workload.axes = {{"M", 8192}};
  t.workload.inputs = {{"A", trace::RandomInput{}}, {"B", trace::RandomInput{}}};
  t.workload.uuid = "94920358-01a8-4c5b-9209-3103fd490e94";
  t.solution = "candidate";
  trace::Evaluation e;
  e.status = trace::EvaluationStatus::passed;
  e.environment.hardware = "NVIDIA H200";
  e.timestamp = "2026-05-01T00:00:00Z";
  e.log = "ok";
  e.correctness = trace::Correctness{0.001, 0.002, std::nullopt};
  e.performance = trace::Performance{1.0, 1.0 * speedup, speedup};
  t.evaluation = e;
  return t;
}

inline ModelCallRecord sample_call(std::int64_t attempt, std::string reply) {
  ModelCallRecord call;
  call.attempt = attempt;
  call.provider = "openai_chat";
  call.model = "local";
  call.request_sha256 = std::string(64, 'a');
  call.started_at = std::chrono::system_clock::now();
  call.latency_ms = 1234.5;
  call.input_tokens = 1000;
  call.output_tokens = 500;
  call.reasoning_tokens = 300;
  call.cost_usd = 0.0008;
  call.http_status = 200;
  call.finish_reason = "stop";
  call.reply = std::move(reply);
  return call;
}

// Writes one whole turn (call, evaluation, finish) and returns its handle.
// The SQL that undoes migrations 3 and later, turning a database back into a version-2 one (the
// tests of older databases run it and set the version they need).
inline std::vector<std::string> undo_migrations_after_two() {
  return {"ALTER TABLE turn DROP COLUMN infra_reason",
          "ALTER TABLE turn DROP COLUMN model_settings_id",
          "DROP TABLE model_settings",
          "ALTER TABLE turn DROP COLUMN reply_end",
          "ALTER TABLE model_call DROP COLUMN state",
          "ALTER TABLE model_call DROP COLUMN server_prompt_ms",
          "ALTER TABLE model_call DROP COLUMN server_generation_ms",
          "ALTER TABLE trajectory DROP COLUMN language",
          "ALTER TABLE trajectory DROP COLUMN condition",
          "ALTER TABLE turn DROP COLUMN retrieval_json"};
}

inline TurnHandle write_whole_turn(RunStore& store, TrajectoryId trajectory, int salt) {
  auto turn = store.begin_turn(trajectory);
  if (!turn)
    throw util::Fatal(turn.error().message);
  std::string kernel = "__global__ void k" + std::to_string(salt) + "() {}";
  std::string reply = "```cpp\n" + kernel + "\n```";
  auto check = [](const util::Status& status) {
    if (!status)
      throw util::Fatal(status.error().message);
  };
  check(store.record_model_call(turn->id, sample_call(1, reply)));
  check(store.record_evaluation(
      turn->id, EvaluationRecord{kernel, {passed_trace(1.5)}, 1.5, "present", "present"}));
  TurnOutcome outcome;
  outcome.category = TurnCategory::correct;
  outcome.reply = reply;
  outcome.kernel_source = kernel;
  outcome.feedback = "Kernel is correct.";
  outcome.reply_end = ReplyEnd::complete;
  check(store.finish_turn(turn->id, outcome));
  return *turn;
}

} // namespace ptxbench::store::testing
