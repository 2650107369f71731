// The adaptation data's records (briefs: adapt_contract.md) and their JSON: one record per line
// of a stage's .jsonl file. Field names are the contract's, snake_case. Readers name the file
// and line of a malformed record; writers emit keys in declaration order so that a stage run
// twice writes the same bytes.
#pragma once

#include "adapt/jsonl.hpp"
#include "store/records.hpp"
#include "util/error.hpp"

#include <cstdint>
#include <filesystem>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ptxbench::adapt {

// A failed counted turn of a benchmark run; `id` is the sha256 of kernel_source, and
// `occurrences` counts the turns whose kernel had that source.
struct FailureRecord {
  std::string id;
  std::int64_t occurrences = 1;
  std::string run_dir;
  store::TrajectoryKey trajectory_key;
  std::int64_t turn = 0; // the run store's 0-based turn index
  std::string arch;
  std::string category;
  std::string kernel_source;
  std::string feedback;
  std::string system_prompt;
  std::string task_prompt;
};

// A failure and one correct kernel a teacher repaired it into; `id` is
// sha256(failure_id + repaired kernel sha256).
struct PairRecord {
  std::string id;
  FailureRecord failure;
  std::string repaired_kernel;
  std::string repair_run_dir;
  store::TrajectoryKey repair_trajectory_key;
  std::int64_t repair_turn = 0;
  std::optional<double> speedup;
  std::optional<bool> target_executed;
  std::string teacher_model;
};

// A correct counted turn of a benchmark run (KernelGen); `id` is the sha256 of kernel_source.
struct CorrectRecord {
  std::string id;
  std::string run_dir;
  store::TrajectoryKey trajectory_key;
  std::int64_t turn = 0;
  std::string arch;
  std::string kernel_source;
  std::string reply;
  std::optional<double> speedup;
  std::optional<bool> target_executed;
  std::string system_prompt;
  std::string task_prompt;
};

// The reasoning a teacher wrote for a PairRecord or CorrectRecord (`id` is that record's id).
struct RationaleRecord {
  std::string id;
  std::string kind;   // "fixit" | "kernelgen"
  std::string status; // "done" | "failed"
  std::string reasoning;
  std::string thinking;
  std::string reasoning_model;
  std::string prompt_version;
  std::optional<double> temperature;
  std::int64_t attempts = 0;
  std::int64_t input_tokens = 0;
  std::int64_t output_tokens = 0;
  std::optional<double> cost_usd;
  std::string error;
};

// A task of the repair stage: which repair trajectory works on which failure.
struct RepairTask {
  std::string failure_id;
  store::TrajectoryKey trajectory_key;
};

Json to_json(const store::TrajectoryKey& key);
Json to_json(const FailureRecord& record);
Json to_json(const PairRecord& record);
Json to_json(const CorrectRecord& record);
Json to_json(const RationaleRecord& record);
Json to_json(const RepairTask& task);

// invalid_input naming the JSON path of the first missing or mistyped field
// ("$.trajectory_key.sample: expected an integer, got string"); read_jsonl adds file and line.
util::Expected<store::TrajectoryKey> trajectory_key_from_json(const Json& json);
util::Expected<FailureRecord> failure_from_json(const Json& json);
util::Expected<PairRecord> pair_from_json(const Json& json);
util::Expected<CorrectRecord> correct_from_json(const Json& json);
util::Expected<RationaleRecord> rationale_from_json(const Json& json);
util::Expected<RepairTask> repair_task_from_json(const Json& json);

// One compact JSON document per line, each ending in '\n'.
template <typename T> std::string to_jsonl(const std::vector<T>& records) {
  std::string out;
  for (const T& record : records) {
    out += to_json(record).dump(-1, ' ', false, Json::error_handler_t::replace);
    out += '\n';
  }
  return out;
}

} // namespace ptxbench::adapt
