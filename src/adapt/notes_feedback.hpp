// Retrieved repair notes as the agent loop's feedback hook (agent/loop.hpp): a run whose plan
// names a notes corpus (agent::NotesSettings, `ptxbench run --notes FILE`) gets the block of
// notes_index.hpp appended to every failed turn's feedback. The agent module knows nothing of
// notes; the cli builds this hook and hands it to the run.
#pragma once

#include "adapt/notes_index.hpp"
#include "agent/loop.hpp"
#include "agent/plan.hpp"

#include <memory>

namespace ptxbench::adapt {

RetrievalOptions retrieval_options(const agent::NotesSettings& settings);

// Loads settings.file; not_found or invalid_input as NotesIndex::load, invalid_input for an
// empty corpus (no done record: nothing could ever be retrieved).
util::Expected<agent::FeedbackHook> notes_feedback_hook(const agent::NotesSettings& settings);

// The hook over an index already loaded; thread-safe (retrieval only reads the index).
agent::FeedbackHook notes_feedback_hook(std::shared_ptr<const NotesIndex> index,
                                        RetrievalOptions options);

} // namespace ptxbench::adapt
