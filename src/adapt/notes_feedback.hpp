// Retrieved repair notes as the agent loop's feedback hook (agent/loop.hpp): a run whose plan
// names a notes corpus (agent::NotesSettings, `ptxbench run --notes FILE`) gets the block of
// notes_index.hpp appended to every failed turn's feedback, in the mode of the trajectory's
// condition (agent/condition.hpp; none: nothing), and the turn stores what was retrieved: the
// corpus and its sha256, the mode, and per retrieved group its rank, BM25 score, problem and
// pair ids. The agent module knows nothing of notes; the cli builds this hook and hands it to
// the run.
//
// Leakage guard. The corpus is split before the index is built. Held out are the run being
// evaluated and the runs the plan lists (repair_notes.held_out). A record is excluded when its
// pair came from a held-out run — its wrong kernel's run or its repair run (NotesRecord::source)
// — and with it every record of the same source trajectory and every record with the same wrong
// kernel (one retrieval group): the split never cuts through a trajectory or a group. A corpus
// with records that do not say where they came from (written before provenance was kept)
// cannot be split: it is refused when runs are held out, and used whole otherwise.
#pragma once

#include "adapt/notes_index.hpp"
#include "agent/loop.hpp"
#include "agent/plan.hpp"

#include <filesystem>
#include <memory>
#include <span>

namespace ptxbench::adapt {

RetrievalOptions retrieval_options(const agent::NotesSettings& settings);

// The records the index may serve, and how many the guard removed.
struct CorpusSplit {
  std::vector<NotesRecord> kept;
  std::size_t excluded = 0;
};

// not_found when a held-out directory holds no run store; invalid_input when runs are held out
// and some record has no source. Directories compare after weakly_canonical.
util::Expected<CorpusSplit> split_corpus(std::vector<NotesRecord> records,
                                         std::span<const std::filesystem::path> held_out);

// What the hook needs from the run: its own directory (always held out) and the problems of its
// retrieving trajectories (the corpus must hold notes for at least one of them; none: no check).
struct NotesRun {
  std::filesystem::path run_dir;
  std::vector<std::string> problems;
};

// Loads settings.file and splits it; not_found or invalid_input as NotesIndex::load and
// split_corpus, invalid_input for an empty corpus (no done record: nothing could ever be
// retrieved) and for a corpus with no notes for any of the run's problems (a corpus for another
// problem set), naming the problems it has.
util::Expected<agent::FeedbackHook> notes_feedback_hook(const agent::NotesSettings& settings,
                                                        const NotesRun& run);

// The hook over an index already loaded; thread-safe (retrieval only reads the index).
// `corpus` and `corpus_sha256` and `excluded` only go into the turn's record.
struct NotesProvenance {
  std::string corpus;
  std::string corpus_sha256;
  std::size_t excluded = 0;
};
agent::FeedbackHook notes_feedback_hook(std::shared_ptr<const NotesIndex> index,
                                        RetrievalOptions options, NotesProvenance provenance = {});

} // namespace ptxbench::adapt
