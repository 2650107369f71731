#include "adapt/notes_feedback.hpp"

#include "adapt/jsonl.hpp"
#include "store/run_store.hpp"
#include "suite/problem.hpp"
#include "util/fs.hpp"
#include "util/hash.hpp"

#include <fmt/core.h>
#include <set>

namespace ptxbench::adapt {
namespace {

// `dir` absolute and normal, without a trailing separator ("runs/x/." and "runs/x" match).
std::string canonical_dir(const std::string& dir) {
  std::error_code error;
  auto path = std::filesystem::weakly_canonical(dir, error);
  if (error)
    path = std::filesystem::path(dir).lexically_normal();
  if (!path.has_filename() && path.has_parent_path())
    path = path.parent_path();
  return path.string();
}

// The source trajectory of a record: its run and key.
std::string source_trajectory(const NotesSource& source) {
  return canonical_dir(source.run_dir) + "\n" + store::to_string(source.trajectory_key);
}

util::Status check_held_out(std::span<const std::filesystem::path> held_out) {
  for (std::size_t i = 0; i < held_out.size(); ++i)
    if (!std::filesystem::exists(held_out[i] / store::RunStore::kDatabaseName))
      return util::make_error(
          util::ErrorKind::not_found,
          fmt::format("repair_notes.held_out[{}]: {} holds no run store ({} is missing); name "
                      "the directory of a run",
                      i, held_out[i].string(), store::RunStore::kDatabaseName));
  return util::Ok{};
}

agent::Retrieval turn_mode(const agent::FailedTurn& turn, const RetrievalOptions& options) {
  if (turn.retrieval)
    return *turn.retrieval;
  return options.mode == NotesMode::notes_and_kernel ? agent::Retrieval::notes_and_kernel
                                                     : agent::Retrieval::notes;
}

std::string retrieval_record(const std::vector<RetrievedGroup>& groups, agent::Retrieval mode,
                             const NotesProvenance& provenance) {
  Json groups_json = Json::array();
  for (std::size_t k = 0; k < groups.size(); ++k) {
    Json ids = Json::array();
    for (const NotesRecord* record : groups[k].records)
      ids.push_back(record->id);
    groups_json.push_back(Json{{"rank", k + 1},
                               {"bm25", groups[k].score},
                               {"problem", groups[k].problem},
                               {"pair_ids", ids}});
  }
  return Json{{"mode", agent::to_string(mode)},
              {"corpus", provenance.corpus},
              {"corpus_sha256", provenance.corpus_sha256},
              {"held_out_excluded", provenance.excluded},
              {"groups", groups_json}}
      .dump();
}

util::Status check_covers(const NotesIndex& index, const std::filesystem::path& file,
                          const RetrievalOptions& options, std::span<const std::string> problems) {
  if (problems.empty()) // no trajectory retrieves
    return util::Ok{};
  const std::set<std::string> held = index.problems();
  for (const std::string& problem : problems)
    for (const std::string& name : held)
      if (name == problem ||
          std::ranges::any_of(options.definition_prefixes, [&](const std::string& prefix) {
            return name.starts_with(prefix) && problem.starts_with(prefix);
          }))
        return util::Ok{};
  std::string have;
  for (const std::string& name : held)
    have += (have.empty() ? "" : ", ") + name;
  std::string want;
  for (const std::string& name : problems)
    want += (want.empty() ? "" : ", ") + name;
  return util::make_error(util::ErrorKind::invalid_input,
                          fmt::format("notes corpus {} holds notes for {} only; none for the "
                                      "run's problems ({}): it is a corpus for another problem "
                                      "set (or name repair_notes.definition_prefixes)",
                                      file.string(), have, want));
}

} // namespace

RetrievalOptions retrieval_options(const agent::NotesSettings& settings) {
  RetrievalOptions options;
  options.top_k = settings.top_k;
  options.max_notes = settings.max_notes;
  options.min_similarity = settings.min_similarity;
  options.mode = settings.mode == 2 ? NotesMode::notes_and_kernel : NotesMode::notes;
  options.definition_prefixes = settings.definition_prefixes;
  return options;
}

util::Expected<CorpusSplit> split_corpus(std::vector<NotesRecord> records,
                                         std::span<const std::filesystem::path> held_out) {
  if (held_out.empty())
    return CorpusSplit{std::move(records), 0};
  std::set<std::string> runs;
  for (const auto& dir : held_out)
    runs.insert(canonical_dir(dir.string()));
  std::set<std::string> trajectories;
  std::set<std::string> kernels;
  for (const NotesRecord& r : records) {
    if (!r.source)
      return util::make_error(util::ErrorKind::invalid_input,
                              "notes record " + r.id +
                                  " does not say which run it came from (no \"source\"), so "
                                  "held-out runs cannot be kept out; rebuild the corpus with "
                                  "`ptxbench fixit notes`");
    if (runs.contains(canonical_dir(r.source->run_dir)) ||
        runs.contains(canonical_dir(r.source->repair_run_dir))) {
      trajectories.insert(source_trajectory(*r.source));
      kernels.insert(r.wrong_kernel);
    }
  }
  CorpusSplit split;
  for (NotesRecord& r : records) {
    if (trajectories.contains(source_trajectory(*r.source)) || kernels.contains(r.wrong_kernel))
      ++split.excluded;
    else
      split.kept.push_back(std::move(r));
  }
  return split;
}

util::Expected<agent::FeedbackHook> notes_feedback_hook(const agent::NotesSettings& settings,
                                                        const NotesRun& run) {
  PTXBENCH_TRY(check_held_out(settings.held_out));
  PTXBENCH_TRY_ASSIGN(auto bytes, util::read_file(settings.file));
  PTXBENCH_TRY_ASSIGN(auto records, read_jsonl<NotesRecord>(settings.file, notes_record_from_json));
  std::erase_if(records, [](const NotesRecord& r) { return r.status != "done"; });
  if (records.empty())
    return util::make_error(util::ErrorKind::invalid_input,
                            settings.file.string() + ": no done repair notes to retrieve from");
  std::vector<std::filesystem::path> held_out = settings.held_out;
  const bool guarded = !held_out.empty();
  if (!run.run_dir.empty())
    held_out.push_back(run.run_dir);
  const bool sourced =
      std::ranges::all_of(records, [](const NotesRecord& r) { return r.source.has_value(); });
  CorpusSplit split{std::move(records), 0};
  if (guarded || sourced) {
    PTXBENCH_TRY_ASSIGN(auto made, split_corpus(std::move(split.kept), held_out));
    split = std::move(made);
  }
  if (split.kept.empty())
    return util::make_error(util::ErrorKind::invalid_input,
                            fmt::format("notes corpus {}: all {} records came from held-out runs "
                                        "(or the run itself); nothing is left to retrieve",
                                        settings.file.string(), split.excluded));
  const RetrievalOptions options = retrieval_options(settings);
  auto index = std::make_shared<const NotesIndex>(std::move(split.kept));
  PTXBENCH_TRY(check_covers(*index, settings.file, options, run.problems));
  return notes_feedback_hook(
      std::move(index), options,
      NotesProvenance{settings.file.string(), util::sha256_hex(bytes), split.excluded});
}

agent::FeedbackHook notes_feedback_hook(std::shared_ptr<const NotesIndex> index,
                                        RetrievalOptions options, NotesProvenance provenance) {
  return [index = std::move(index), options = std::move(options),
          provenance = std::move(provenance)](const agent::FailedTurn& turn) {
    const agent::Retrieval mode = turn_mode(turn, options);
    if (mode == agent::Retrieval::none)
      return agent::ExtraFeedback{};
    RetrievalOptions these = options;
    these.mode =
        mode == agent::Retrieval::notes_and_kernel ? NotesMode::notes_and_kernel : NotesMode::notes;
    const auto groups = index->retrieve(turn.problem->name(), turn.kernel_source, these);
    return agent::ExtraFeedback{render_retrieved(groups, these),
                                retrieval_record(groups, mode, provenance)};
  };
}

} // namespace ptxbench::adapt
