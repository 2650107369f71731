// Exports of a run store into the formats other tools read:
//   trajectories/<model>__<problem>__<variant>__<sample>.json   mini-swe-agent-style trajectory
//       (info: exit status, submission, model stats, config; messages: system, task, then
//       assistant reply and observation per turn, then the exit message)
//   traces.jsonl   every evaluation's FlashInfer-Trace traces, one JSON object per line
//   turns.csv      one row per finished turn with the paper's columns (trajectory, turn, status
//                  category, speedup, static and dynamic target-instruction verdicts) plus usage
// Only finished turns are exported: open and abandoned turns never reached the conversation.
// Infra turns (our side failed) appear in turns.csv with counted = 0 and are left out of the
// trajectory messages.
#pragma once

#include "store/run_store.hpp"
#include "util/error.hpp"

#include <filesystem>
#include <string>
#include <vector>

namespace ptxbench::report {

struct ExportedFiles {
  std::vector<std::filesystem::path> trajectories;
  std::filesystem::path traces;
  std::filesystem::path turns_csv;
};

// Writes the three exports under `out_dir` (created when absent; files replaced atomically).
util::Expected<ExportedFiles> export_run(store::RunStore& store,
                                         const std::filesystem::path& out_dir);

// The per-turn CSV text alone (tests and `ptxbench export --turns-csv -`).
util::Expected<std::string> turns_csv(store::RunStore& store);

} // namespace ptxbench::report
