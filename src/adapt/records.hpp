// The records of the adaptation data directory (DIR/fixit/..., DIR/kernelgen/...), one JSON
// object per JSONL line, with the field names of the shared contract (snake_case, exact).
// FailureRecord: a wrong kernel and the feedback it got; PairRecord: it and its repair;
// CorrectRecord: a correct KernelGen turn; RationaleRecord: the synthesized monologue that
// explains a pair or a correct kernel.
#pragma once

#include "model/chat.hpp"
#include "store/records.hpp"
#include "util/error.hpp"

#include <cstdint>
#include <optional>
#include <string>

namespace ptxbench::adapt {

using Json = model::Json;

struct FailureRecord {
  std::string id; // sha256 of kernel_source, hex
  std::int64_t occurrences = 1;
  std::string run_dir;
  store::TrajectoryKey trajectory_key;
  std::int64_t turn = 0; // 0-based
  std::string arch;      // "sm_90a"
  std::string category;  // compile|runtime|timeout|numerical|banned_library|extraction
  std::string kernel_source;
  std::string feedback; // the observation the model got for that turn
  std::string system_prompt;
  std::string task_prompt;
};

struct PairRecord {
  std::string id; // sha256 over failure id + repaired kernel sha
  FailureRecord failure;
  std::string repaired_kernel;
  std::string repair_run_dir;
  store::TrajectoryKey repair_trajectory_key;
  std::int64_t repair_turn = 0;
  std::optional<double> speedup;
  std::optional<bool> target_executed;
  std::string teacher_model;
};

struct CorrectRecord {
  std::string id; // sha256 of kernel_source
  std::string run_dir;
  store::TrajectoryKey trajectory_key;
  std::int64_t turn = 0;
  std::string arch;
  std::string kernel_source;
  std::string reply; // the full assistant text of that turn
  std::optional<double> speedup;
  std::optional<bool> target_executed;
  std::string system_prompt;
  std::string task_prompt;
};

struct RationaleRecord {
  std::string id;     // the PairRecord or CorrectRecord id it explains
  std::string kind;   // "fixit" | "kernelgen"
  std::string status; // "done" | "failed"
  std::string reasoning;
  std::string thinking; // the model's separate reasoning channel, if any
  std::string reasoning_model;
  std::string prompt_version;
  std::optional<double> temperature;
  std::int64_t attempts = 0;
  std::int64_t input_tokens = 0;
  std::int64_t output_tokens = 0;
  std::optional<double> cost_usd;
  std::string error; // for failed
};

Json to_json(const store::TrajectoryKey& key);
Json to_json(const FailureRecord& record);
Json to_json(const PairRecord& record);
Json to_json(const CorrectRecord& record);
Json to_json(const RationaleRecord& record);

// invalid_input naming the missing or mistyped field.
util::Expected<store::TrajectoryKey> trajectory_key_from_json(const Json& json);
util::Expected<FailureRecord> failure_from_json(const Json& json);
util::Expected<PairRecord> pair_from_json(const Json& json);
util::Expected<CorrectRecord> correct_from_json(const Json& json);
util::Expected<RationaleRecord> rationale_from_json(const Json& json);

} // namespace ptxbench::adapt
