// Repair notes (reference §9.4): what a reviewer model writes about one (wrong kernel, feedback,
// fixed kernel) pair — a summary, 3 to 8 operator-agnostic instruction notes and tags — the
// prompt that asks for them, the checks on the reply, and the record of the `fixit notes`
// stage (DIR/fixit/notes/notes.jsonl), which carries both kernels so that the file alone is a
// retrieval corpus (notes_index.hpp).
#pragma once

#include "adapt/records.hpp"
#include "util/error.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ptxbench::adapt {

inline constexpr std::string_view kNotesPromptVersion = "v1_kernel_fix_notes";
inline constexpr std::size_t kMinNotes = 3;
inline constexpr std::size_t kMaxNotes = 8;

// One instruction-usage note; field names are the original's JSON keys.
struct InstructionNote {
  std::string instruction;
  std::string shape_context;
  std::string correct_example;
  std::string wrong_example;
  std::vector<std::string> operand_contract;
  std::vector<std::string> required_sequence;
  std::vector<std::string> diagnostics;
  std::vector<std::string> do_not_do;
  std::string example_completeness;
  std::vector<std::string> missing_details;
};

struct RepairNotes {
  std::string summary;
  std::vector<InstructionNote> instruction_notes;
  std::vector<std::string> tags;
};

// One model call of a notes job, as recorded.
struct NotesCall {
  std::int64_t pass = 0;
  std::int64_t attempts = 0; // HTTP attempts
  std::int64_t input_tokens = 0;
  std::int64_t output_tokens = 0;
  std::string error; // empty: the reply was accepted
};

// Where a pair came from: the benchmark run and trajectory of its wrong kernel and the repair
// run of its fixed one (run directories as the pair records name them). The leakage guard
// (notes_feedback.hpp) reads it; records written before it existed have none.
struct NotesSource {
  std::string run_dir;
  store::TrajectoryKey trajectory_key;
  std::int64_t turn = 0;
  std::string repair_run_dir;
};

// The notes of one pair (`id` is the PairRecord's id); status "done" or "failed".
struct NotesRecord {
  std::string id;
  std::string status;
  std::string problem;
  std::string wrong_kernel;
  std::string feedback;
  std::string fixed_kernel;
  std::optional<double> speedup;
  std::string notes_model;
  std::string prompt_version;
  RepairNotes notes; // empty unless done
  std::vector<NotesCall> calls;
  std::int64_t input_tokens = 0;
  std::int64_t output_tokens = 0;
  std::optional<double> cost_usd;
  std::string error;
  std::optional<NotesSource> source; // "source" in the JSON; absent in older corpora
};

struct NotesPrompt {
  std::string system;
  std::string user;
};
NotesPrompt notes_prompt(const PairRecord& pair);

// The notes in a reply: a JSON object, bare or in a ```json block. bad_response naming the
// first problem, after its JSON path where it has one ("$.instruction_notes[1].wrong_example:
// abbreviates code with \"...\""): not JSON, a missing or mistyped field, fewer than 3 or more
// than 8 notes, an empty instruction, "..." in an example.
util::Expected<RepairNotes> parse_repair_notes(std::string_view reply);

Json to_json(const RepairNotes& notes);
Json to_json(const NotesRecord& record);
// invalid_input naming the JSON path of the first missing or mistyped field; the optional
// members (speedup, cost_usd, token counts, calls) are checked when present, and a failed
// record's notes must be null.
util::Expected<NotesRecord> notes_record_from_json(const Json& json);

} // namespace ptxbench::adapt
