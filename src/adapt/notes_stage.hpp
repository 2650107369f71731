// Stage "notes" of Fixit (after pairs; reference §9.4): a reviewer model writes the repair notes
// of every repaired pair (DIR/fixit/pairs/pairs.jsonl) into DIR/fixit/notes/notes.jsonl, the
// corpus `ptxbench run --notes` retrieves from (notes_index.hpp).
//
// Problem and approach are synthesize.hpp's: paid calls that fail now and then or refuse the
// format, a process that may be killed at any time. Every pair without a done NotesRecord is a
// job; `concurrency` workers take jobs in input order; a job is up to `max_passes` model calls,
// a reply taken when parse_repair_notes accepts it. Each call is recorded in the record (pass,
// HTTP attempts, tokens, why it was refused); the record — done, or failed with the last
// reason — is appended as one fsynced line.
//
// Invariants (as synthesize's): before any job runs the file is rewritten to its done records,
// one per id, when it holds anything else (failed records, a torn last line, a repeated id), so
// failed ids run again and no id ever has two records; done records are never touched.
#pragma once

#include "adapt/model_stage.hpp"
#include "adapt/repair_notes.hpp"
#include "util/error.hpp"

#include <filesystem>

namespace ptxbench::adapt {

struct NotesOptions {
  std::filesystem::path data_dir; // DIR
  std::string model;              // registry name
  int concurrency = 8;
  int max_passes = 3;
};

struct NotesPaths {
  std::filesystem::path input;    // DIR/fixit/pairs/pairs.jsonl
  std::filesystem::path output;   // DIR/fixit/notes/notes.jsonl
  std::filesystem::path manifest; // DIR/fixit/notes/manifest.json
};
NotesPaths notes_paths(const std::filesystem::path& data_dir);

using NotesDeps = ModelStageDeps;
using NotesResult = ModelStageResult;

// Errors: the input is missing or bad, the model is not in the registry or its client cannot
// be made, the output cannot be written.
util::Expected<NotesResult> run_notes(const NotesOptions& options, const NotesDeps& deps);

} // namespace ptxbench::adapt
