#include "adapt/synthesize.hpp"

#include "adapt/jsonl.hpp"
#include "adapt/model_pool.hpp"
#include "util/fs.hpp"
#include "util/hash.hpp"

#include <fmt/core.h>
#include <set>

namespace ptxbench::adapt {
namespace {

struct Job {
  std::string id;
  RationalePrompt prompt;
};

template <class Record>
util::Expected<std::vector<Job>> read_jobs(const std::filesystem::path& path,
                                           util::Expected<Record> (*parse)(const Json&),
                                           RationalePrompt (*prompt)(const Record&)) {
  PTXBENCH_TRY_ASSIGN(auto records, read_jsonl<Record>(path, parse));
  std::vector<Job> jobs;
  std::set<std::string> seen;
  for (const Record& record : records) {
    if (seen.insert(record.id).second)
      jobs.push_back({record.id, prompt(record)});
  }
  return jobs;
}

util::Expected<std::vector<Job>> read_inputs(const SynthesizePaths& paths, RationaleKind kind) {
  if (kind == RationaleKind::fixit)
    return read_jobs<PairRecord>(paths.input, pair_from_json, fixit_rationale_prompt);
  return read_jobs<CorrectRecord>(paths.input, correct_from_json, kernelgen_rationale_prompt);
}

// The done records of the output (jsonl.hpp keep_done_lines).
util::Expected<std::set<std::string>> keep_done(const std::filesystem::path& path) {
  return keep_done_lines(path, [](const Json& line) -> std::optional<std::string> {
    auto record = rationale_from_json(line);
    if (record && record->status == "done")
      return record->id;
    return std::nullopt;
  });
}

// One job's rationale: up to max_passes model calls until one gives a rationale within limits.
std::optional<RationaleRecord> synthesize(const SynthesizeOptions& options,
                                          const SynthesizeDeps& deps, const model::ModelSpec& spec,
                                          model::ModelClient& client, const Job& job) {
  RationaleRecord record;
  record.id = job.id;
  record.kind = std::string(to_string(options.kind));
  record.reasoning_model = spec.name;
  record.prompt_version = std::string(job.prompt.version);
  record.temperature = spec.sampling.temperature;
  record.cost_usd = 0.0;
  for (int pass = 1; pass <= options.max_passes; ++pass) {
    if (cancelled(deps))
      return std::nullopt;
    model::ChatRequest request = model::make_request(
        spec, {{model::Role::system, job.prompt.system}, {model::Role::user, job.prompt.user}});
    request.on_attempt = [&](const model::AttemptRecord&) { ++record.attempts; };
    auto reply = client.complete(request);
    if (!reply) {
      record.error = fmt::format("pass {}: {}", pass, reply.error().message);
      if (!worth_another_pass(reply.error().kind))
        break;
      continue;
    }
    record.input_tokens += reply->usage.input_tokens;
    record.output_tokens += reply->usage.output_tokens;
    *record.cost_usd += reply->cost_usd;
    auto rationale = extract_rationale(reply->text, options.limits);
    if (!rationale) {
      record.error = fmt::format("pass {}: {}", pass, rationale.error().message);
      continue;
    }
    record.status = "done";
    record.error.clear();
    record.reasoning = std::move(rationale->reasoning);
    record.thinking = reply->reasoning.value_or(rationale->thinking);
    return record;
  }
  record.status = "failed";
  return record;
}

util::Status write_manifest(const SynthesizeOptions& options, const SynthesizePaths& paths,
                            const SynthesizeResult& result) {
  PTXBENCH_TRY_ASSIGN(auto input, util::read_file(paths.input));
  const Json manifest{{"stage", "synthesize"},
                      {"kind", std::string(to_string(options.kind))},
                      {"input", paths.input.string()},
                      {"input_sha256", util::sha256_hex(input)},
                      {"reasoning_model", options.reasoner},
                      {"prompt_version",
                       std::string(options.kind == RationaleKind::fixit ? kFixitPromptVersion
                                                                        : kKernelGenPromptVersion)},
                      {"max_passes", options.max_passes},
                      {"min_chars", options.limits.min_chars},
                      {"max_chars", options.limits.max_chars},
                      {"counts", manifest_counts(result)}};
  return util::write_file_atomic(paths.manifest, manifest.dump(2) + "\n");
}

} // namespace

SynthesizePaths synthesize_paths(const std::filesystem::path& data_dir, RationaleKind kind) {
  const std::filesystem::path stage = data_dir / std::string(to_string(kind)) / "synthesize";
  const std::filesystem::path input = kind == RationaleKind::fixit
                                          ? data_dir / "fixit" / "pairs" / "pairs.jsonl"
                                          : data_dir / "kernelgen" / "collect" / "correct.jsonl";
  return {input, stage / "rationales.jsonl", stage / "manifest.json"};
}

util::Expected<SynthesizeResult> run_synthesize(const SynthesizeOptions& options,
                                                const SynthesizeDeps& deps) {
  PTXBENCH_TRY_ASSIGN(auto spec, stage_model(deps, options.reasoner, "reasoning model"));
  const SynthesizePaths paths = synthesize_paths(options.data_dir, options.kind);
  PTXBENCH_TRY_ASSIGN(auto jobs, read_inputs(paths, options.kind));
  PTXBENCH_TRY_ASSIGN(auto done, keep_done(paths.output));
  PTXBENCH_TRY_ASSIGN(
      auto result,
      run_model_round<Job, RationaleRecord>(
          std::move(jobs), done, *spec, deps, options.concurrency, paths.output,
          [](const RationaleRecord& r) { return fmt::format(" ({} chars)", r.reasoning.size()); },
          [&](model::ModelClient& client, const Job& job) {
            return synthesize(options, deps, *spec, client, job);
          }));
  PTXBENCH_TRY(write_manifest(options, paths, result));
  return result;
}

} // namespace ptxbench::adapt
