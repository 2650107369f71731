#include "adapt/notes_feedback.hpp"

#include "suite/problem.hpp"

namespace ptxbench::adapt {

RetrievalOptions retrieval_options(const agent::NotesSettings& settings) {
  RetrievalOptions options;
  options.top_k = settings.top_k;
  options.max_notes = settings.max_notes;
  options.min_similarity = settings.min_similarity;
  options.mode = settings.mode == 2 ? NotesMode::notes_and_kernel : NotesMode::notes;
  options.definition_prefixes = settings.definition_prefixes;
  return options;
}

util::Expected<agent::FeedbackHook> notes_feedback_hook(const agent::NotesSettings& settings) {
  PTXBENCH_TRY_ASSIGN(auto index, NotesIndex::load(settings.file));
  if (index.size() == 0)
    return util::make_error(util::ErrorKind::invalid_input,
                            settings.file.string() + ": no done repair notes to retrieve from");
  return notes_feedback_hook(std::make_shared<const NotesIndex>(std::move(index)),
                             retrieval_options(settings));
}

agent::FeedbackHook notes_feedback_hook(std::shared_ptr<const NotesIndex> index,
                                        RetrievalOptions options) {
  return [index = std::move(index), options = std::move(options)](const agent::FailedTurn& turn) {
    return index->render(turn.problem->name(), turn.kernel_source, options);
  };
}

} // namespace ptxbench::adapt
