#include "adapt/notes_stage.hpp"

#include "adapt/jsonl.hpp"
#include "adapt/model_pool.hpp"
#include "util/fs.hpp"
#include "util/hash.hpp"

#include <fmt/core.h>
#include <set>

namespace ptxbench::adapt {
namespace {

util::Expected<std::vector<PairRecord>> read_pairs(const std::filesystem::path& path) {
  auto pairs = read_jsonl<PairRecord>(path, pair_from_json);
  if (!pairs)
    return pairs.error().kind == util::ErrorKind::not_found
               ? util::make_error(util::ErrorKind::invalid_input,
                                  path.string() + ": missing; run the pairs stage first")
               : pairs.take_error();
  std::set<std::string> seen;
  std::erase_if(*pairs, [&](const PairRecord& p) { return !seen.insert(p.id).second; });
  return pairs;
}

// The done records of the output (jsonl.hpp keep_done_lines).
util::Expected<std::set<std::string>> keep_done(const std::filesystem::path& path) {
  return keep_done_lines(path, [](const Json& line) -> std::optional<std::string> {
    auto record = notes_record_from_json(line);
    if (record && record->status == "done")
      return record->id;
    return std::nullopt;
  });
}

NotesRecord blank_record(const PairRecord& pair, const model::ModelSpec& spec) {
  NotesRecord r;
  r.id = pair.id;
  r.problem = pair.failure.trajectory_key.problem;
  r.wrong_kernel = pair.failure.kernel_source;
  r.feedback = pair.failure.feedback;
  r.fixed_kernel = pair.repaired_kernel;
  r.speedup = pair.speedup;
  r.notes_model = spec.name;
  r.prompt_version = std::string(kNotesPromptVersion);
  r.cost_usd = 0.0;
  r.source = NotesSource{pair.failure.run_dir, pair.failure.trajectory_key, pair.failure.turn,
                         pair.repair_run_dir};
  return r;
}

// One pair's notes: up to max_passes model calls until one reply parses as repair notes.
std::optional<NotesRecord> write_notes(const NotesOptions& options, const NotesDeps& deps,
                                       const model::ModelSpec& spec, model::ModelClient& client,
                                       const PairRecord& pair) {
  NotesRecord record = blank_record(pair, spec);
  const NotesPrompt prompt = notes_prompt(pair);
  for (int pass = 1; pass <= options.max_passes; ++pass) {
    if (cancelled(deps))
      return std::nullopt;
    model::ChatRequest request = model::make_request(
        spec, {{model::Role::system, prompt.system}, {model::Role::user, prompt.user}});
    NotesCall call;
    call.pass = pass;
    request.on_attempt = [&](const model::AttemptRecord&) { ++call.attempts; };
    auto reply = client.complete(request);
    if (reply) {
      call.input_tokens = reply->usage.input_tokens;
      call.output_tokens = reply->usage.output_tokens;
      record.input_tokens += call.input_tokens;
      record.output_tokens += call.output_tokens;
      *record.cost_usd += reply->cost_usd;
    }
    auto notes =
        reply ? parse_repair_notes(reply->text) : util::Expected<RepairNotes>(reply.error());
    if (notes) {
      record.calls.push_back(std::move(call));
      record.status = "done";
      record.error.clear();
      record.notes = std::move(*notes);
      return record;
    }
    call.error = notes.error().message;
    record.error = fmt::format("pass {}: {}", pass, call.error);
    record.calls.push_back(std::move(call));
    if (!reply && !worth_another_pass(reply.error().kind))
      break;
  }
  record.status = "failed";
  return record;
}

util::Status write_manifest(const NotesOptions& options, const NotesPaths& paths,
                            const NotesResult& result) {
  PTXBENCH_TRY_ASSIGN(auto input, util::read_file(paths.input));
  const Json manifest{{"stage", "notes"},
                      {"input", paths.input.string()},
                      {"input_sha256", util::sha256_hex(input)},
                      {"notes_model", options.model},
                      {"prompt_version", std::string(kNotesPromptVersion)},
                      {"max_passes", options.max_passes},
                      {"counts", manifest_counts(result)}};
  return util::write_file_atomic(paths.manifest, manifest.dump(2) + "\n");
}

} // namespace

NotesPaths notes_paths(const std::filesystem::path& data_dir) {
  const std::filesystem::path stage = data_dir / "fixit" / "notes";
  return {data_dir / "fixit" / "pairs" / "pairs.jsonl", stage / "notes.jsonl",
          stage / "manifest.json"};
}

util::Expected<NotesResult> run_notes(const NotesOptions& options, const NotesDeps& deps) {
  PTXBENCH_TRY_ASSIGN(auto spec, stage_model(deps, options.model, "notes model"));
  const NotesPaths paths = notes_paths(options.data_dir);
  PTXBENCH_TRY_ASSIGN(auto jobs, read_pairs(paths.input));
  PTXBENCH_TRY_ASSIGN(auto done, keep_done(paths.output));
  PTXBENCH_TRY_ASSIGN(auto result,
                      run_model_round<PairRecord, NotesRecord>(
                          std::move(jobs), done, *spec, deps, options.concurrency, paths.output,
                          [](const NotesRecord& r) {
                            return fmt::format(" ({} notes)", r.notes.instruction_notes.size());
                          },
                          [&](model::ModelClient& client, const PairRecord& pair) {
                            return write_notes(options, deps, *spec, client, pair);
                          }));
  PTXBENCH_TRY(write_manifest(options, paths, result));
  return result;
}

} // namespace ptxbench::adapt
