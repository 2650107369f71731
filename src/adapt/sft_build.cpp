#include "adapt/sft_build.hpp"

#include "trace/json_io.hpp"
#include "util/fs.hpp"
#include "util/hash.hpp"
#include "util/json_reader.hpp"

#include <algorithm>
#include <fmt/core.h>
#include <limits>
#include <map>
#include <optional>

namespace ptxbench::adapt {
namespace {

namespace fs = std::filesystem;

// A row before filtering: its id, messages, metadata and composition key.
struct Draft {
  std::string id;
  std::vector<SftMessage> messages;
  Json metadata;
  CompositionKey key;
  const RationaleRecord* rationale = nullptr;
};

struct Input {
  fs::path path;
  std::string sha256;
};

std::string think(const std::string& reasoning) {
  return "<think>\n" + reasoning + "\n</think>\n\n";
}

util::Expected<std::map<std::string, RationaleRecord>> load_rationales(const fs::path& path,
                                                                       DatasetKind kind) {
  PTXBENCH_TRY_ASSIGN(auto records, read_jsonl<RationaleRecord>(path, rationale_from_json));
  std::map<std::string, RationaleRecord> done;
  for (RationaleRecord& r : records)
    if (r.status == "done" && r.kind == to_string(kind))
      done[r.id] = std::move(r);
  return done;
}

Json message_json(const SftMessage& m, bool with_mask) {
  Json json{{"role", m.role}, {"content", m.content}};
  if (with_mask)
    json["step_loss_mask"] = m.step_loss_mask;
  return json;
}

std::string rows_text(const std::vector<Draft>& rows, bool sft) {
  std::string out;
  for (const Draft& row : rows) {
    Json messages = Json::array();
    for (const SftMessage& m : row.messages)
      messages.push_back(message_json(m, sft));
    Json line = sft ? Json{{"id", row.id}, {"messages", messages}, {"metadata", row.metadata}}
                    : Json{{"messages", messages}};
    out += line.dump(-1, ' ', false, Json::error_handler_t::replace) + "\n";
  }
  return out;
}

std::string joined(const std::vector<SftMessage>& messages) {
  std::string text;
  for (const SftMessage& m : messages)
    text += m.content + "\n";
  return text;
}

struct Filtered {
  std::vector<Draft> kept;
  Json dropped = Json::array(); // {id, reason} per dropped draft, for the manifest
  std::string first_reason;     // why the first dropped draft was dropped
  std::vector<std::int64_t> tokens;
};

// Why a draft cannot become a row, or "" when it can; sets `tokens`.
util::Expected<std::string> drop_reason(Draft& draft, const BuildOptions& options,
                                        Tokenizer& tokenizer, std::int64_t& tokens) {
  if (draft.rationale == nullptr)
    return std::string("no rationale with status done");
  if (draft.rationale->reasoning.find("my_reasoning>") != std::string::npos)
    return std::string("rationale still holds <my_reasoning> tags");
  PTXBENCH_TRY_ASSIGN(auto count, tokenizer.count(joined(draft.messages)));
  tokens = count;
  if (options.max_tokens && tokens > *options.max_tokens)
    return fmt::format("{} tokens > --max-tokens {}", tokens, *options.max_tokens);
  return std::string();
}

util::Expected<Filtered> filter(std::vector<Draft> drafts, const BuildOptions& options,
                                Tokenizer& tokenizer) {
  Filtered out;
  for (Draft& draft : drafts) {
    std::int64_t tokens = 0;
    PTXBENCH_TRY_ASSIGN(auto reason, drop_reason(draft, options, tokenizer, tokens));
    if (!reason.empty()) {
      if (out.dropped.empty())
        out.first_reason = reason;
      out.dropped.push_back(Json{{"id", draft.id}, {"reason", reason}});
      continue;
    }
    draft.metadata["tokens"] = tokens;
    out.tokens.push_back(tokens);
    out.kept.push_back(std::move(draft));
  }
  return out;
}

void shuffle(std::vector<Draft>& rows, std::uint64_t seed) {
  std::vector<std::pair<std::string, std::size_t>> order;
  for (std::size_t i = 0; i < rows.size(); ++i)
    order.emplace_back(util::sha256_hex(std::to_string(seed) + ":" + rows[i].id), i);
  std::sort(order.begin(), order.end());
  std::vector<Draft> shuffled;
  shuffled.reserve(rows.size());
  for (const auto& [key, index] : order)
    shuffled.push_back(std::move(rows[index]));
  rows = std::move(shuffled);
}

Json token_stats(std::vector<std::int64_t> tokens) {
  if (tokens.empty())
    return Json(nullptr);
  std::sort(tokens.begin(), tokens.end());
  std::int64_t total = 0;
  for (std::int64_t t : tokens)
    total += t;
  return Json{{"min", tokens.front()},
              {"median", tokens[tokens.size() / 2]},
              {"max", tokens.back()},
              {"total", total}};
}

Json rationale_metadata(const RationaleRecord* r) {
  if (r == nullptr)
    return Json(nullptr);
  return Json{{"reasoning_model", r->reasoning_model}, {"prompt_version", r->prompt_version}};
}

// The settings a build depends on besides its input files' bytes.
Json build_settings(const std::vector<Input>& inputs, const BuildOptions& options,
                    const Tokenizer& tokenizer) {
  Json input_hashes = Json::object();
  for (const Input& input : inputs)
    input_hashes[input.path.filename().string()] = input.sha256;
  return Json{{"tokenizer", tokenizer.describe()},
              {"max_tokens", options.max_tokens ? Json(*options.max_tokens) : Json()},
              {"seed", options.seed},
              {"inputs", input_hashes}};
}

// The build already in `out`, when its manifest records `settings` and its files still hash
// as recorded: running again would write the same bytes, and need not count tokens again.
// nullopt when there is no manifest or it records other settings; an error naming the JSON
// path when a manifest with these settings is not of the shape write_build writes.
util::Expected<std::optional<BuildResult>> up_to_date(const fs::path& out, const Json& settings) {
  const fs::path path = out / "manifest.json";
  std::error_code ec;
  if (!fs::is_regular_file(path, ec))
    return std::optional<BuildResult>();
  PTXBENCH_TRY_ASSIGN(auto text, util::read_file(path));
  PTXBENCH_TRY_ASSIGN(auto manifest, trace::parse_json_text(text, path.string()));
  util::JsonReader in(path.string());
  if (!in.expect_object(manifest, "$"))
    return in.finish(std::optional<BuildResult>());
  for (const auto& [key, value] : settings.items())
    if (manifest.value(key, Json()) != value)
      return std::optional<BuildResult>();
  std::vector<std::pair<std::string, std::string>> hashes;
  if (const Json* files = in.object_member(manifest, "$", "files"))
    for (const auto& [name, sha] : files->items())
      hashes.emplace_back(
          name, in.string_at(sha, util::key_path("$.files", name), util::Emptiness::rejected));
  const std::int64_t rows = in.integer(
      manifest, "$", "rows", util::IntegerRange{0, std::numeric_limits<std::int64_t>::max()});
  const Json* dropped = in.array_member(manifest, "$", "dropped");
  if (!in.ok())
    return in.finish(std::optional<BuildResult>());
  for (const auto& [name, sha] : hashes) {
    auto actual = file_sha256(out / name);
    if (!actual || *actual != sha)
      return std::optional<BuildResult>();
  }
  return std::optional<BuildResult>(BuildResult{rows, static_cast<std::int64_t>(dropped->size()),
                                                settings["tokenizer"].value("approximate", true),
                                                out / "sft.jsonl"});
}

util::Expected<BuildResult> write_build(const fs::path& dir, DatasetKind kind,
                                        std::vector<Draft> drafts, const Json& settings,
                                        const BuildOptions& options, Tokenizer& tokenizer) {
  PTXBENCH_TRY_ASSIGN(auto filtered, filter(std::move(drafts), options, tokenizer));
  if (filtered.kept.empty())
    return util::make_error(
        util::ErrorKind::invalid_input,
        fmt::format("every one of {} records was dropped (the first: {}); nothing written",
                    filtered.dropped.size(),
                    filtered.dropped.empty() ? "none" : filtered.first_reason));
  shuffle(filtered.kept, options.seed);
  Composition counts;
  for (const Draft& row : filtered.kept)
    ++counts[row.key];
  const std::string sft = rows_text(filtered.kept, true);
  const std::string messages = rows_text(filtered.kept, false);
  Json manifest{{"stage", "build"}, {"kind", to_string(kind)}};
  manifest.update(settings);
  manifest["shuffle"] = "rows ordered by sha256(\"<seed>:<id>\")";
  manifest["rows"] = filtered.kept.size();
  manifest["counts"] = composition_json(counts);
  manifest["tokens"] = token_stats(filtered.tokens);
  manifest["dropped"] = filtered.dropped;
  manifest["files"] =
      Json{{"sft.jsonl", util::sha256_hex(sft)}, {"messages.jsonl", util::sha256_hex(messages)}};
  const fs::path out = stage_dir(dir, kind, "build");
  for (const auto& [name, text] :
       {std::pair<const char*, const std::string&>{"sft.jsonl", sft}, {"messages.jsonl", messages}})
    PTXBENCH_TRY(write_if_changed(out / name, text));
  PTXBENCH_TRY(write_if_changed(out / "manifest.json", manifest_text(manifest)));
  return BuildResult{static_cast<std::int64_t>(filtered.kept.size()),
                     static_cast<std::int64_t>(filtered.dropped.size()), tokenizer.approximate(),
                     out / "sft.jsonl"};
}

// Builds unless the build in DIR/<kind>/build is already up to date.
util::Expected<BuildResult> build_once(const fs::path& dir, DatasetKind kind,
                                       std::vector<Draft> drafts, const std::vector<Input>& inputs,
                                       const BuildOptions& options, Tokenizer& tokenizer) {
  const Json settings = build_settings(inputs, options, tokenizer);
  PTXBENCH_TRY_ASSIGN(auto done, up_to_date(stage_dir(dir, kind, "build"), settings));
  if (done)
    return *done;
  return write_build(dir, kind, std::move(drafts), settings, options, tokenizer);
}

util::Expected<Input> hashed(const fs::path& path) {
  PTXBENCH_TRY_ASSIGN(auto sha, file_sha256(path));
  return Input{path, sha};
}

const RationaleRecord* find(const std::map<std::string, RationaleRecord>& done,
                            const std::string& id) {
  auto it = done.find(id);
  return it == done.end() ? nullptr : &it->second;
}

} // namespace

std::string fenced_cuda(const std::string& source) {
  std::string body = source;
  if (!body.empty() && body.back() != '\n')
    body += '\n';
  return "```cuda\n" + body + "```";
}

std::vector<SftMessage> fixit_messages(const PairRecord& pair, const std::string& reasoning) {
  const FailureRecord& f = pair.failure;
  // An extraction failure's "kernel" is the reply itself (collect.hpp): it stays as written.
  std::string wrong = f.category == "extraction" ? f.kernel_source : fenced_cuda(f.kernel_source);
  return {{"system", f.system_prompt, 0},
          {"user", f.task_prompt, 0},
          {"assistant", std::move(wrong), 0},
          {"user", f.feedback, 0},
          {"assistant", think(reasoning) + fenced_cuda(pair.repaired_kernel), 1}};
}

std::vector<SftMessage> kernelgen_messages(const CorrectRecord& record,
                                           const std::string& reasoning) {
  return {{"system", record.system_prompt, 0},
          {"user", record.task_prompt, 0},
          {"assistant", think(reasoning) + record.reply, 1}};
}

util::Expected<BuildResult> build_fixit(const fs::path& dir, const BuildOptions& options,
                                        Tokenizer& tokenizer) {
  const fs::path pairs_path = stage_dir(dir, DatasetKind::fixit, "pairs") / "pairs.jsonl";
  const fs::path rationales_path =
      stage_dir(dir, DatasetKind::fixit, "synthesize") / "rationales.jsonl";
  PTXBENCH_TRY_ASSIGN(auto pairs, read_jsonl<PairRecord>(pairs_path, pair_from_json));
  PTXBENCH_TRY_ASSIGN(auto done, load_rationales(rationales_path, DatasetKind::fixit));
  std::vector<Draft> drafts;
  for (const PairRecord& pair : pairs) {
    const RationaleRecord* r = find(done, pair.id);
    const FailureRecord& f = pair.failure;
    Json metadata{{"kind", "fixit"},
                  {"pair_id", pair.id},
                  {"failure_id", f.id},
                  {"problem", f.trajectory_key.problem},
                  {"prompt_variant", f.trajectory_key.prompt_variant},
                  {"category", f.category},
                  {"turn", f.turn},
                  {"arch", f.arch},
                  {"speedup", pair.speedup ? Json(*pair.speedup) : Json()},
                  {"target_executed", pair.target_executed ? Json(*pair.target_executed) : Json()},
                  {"teacher_model", pair.teacher_model},
                  {"rationale", rationale_metadata(r)}};
    drafts.push_back(Draft{pair.id, fixit_messages(pair, r ? r->reasoning : ""),
                           std::move(metadata), composition_key(f), r});
  }
  std::vector<Input> inputs;
  for (const fs::path& path : {pairs_path, rationales_path}) {
    PTXBENCH_TRY_ASSIGN(auto input, hashed(path));
    inputs.push_back(std::move(input));
  }
  return build_once(dir, DatasetKind::fixit, std::move(drafts), inputs, options, tokenizer);
}

util::Expected<BuildResult> build_kernelgen(const fs::path& dir, const BuildOptions& options,
                                            Tokenizer& tokenizer) {
  const fs::path correct_path = stage_dir(dir, DatasetKind::kernelgen, "collect") / "correct.jsonl";
  const fs::path rationales_path =
      stage_dir(dir, DatasetKind::kernelgen, "synthesize") / "rationales.jsonl";
  PTXBENCH_TRY_ASSIGN(auto records, read_jsonl<CorrectRecord>(correct_path, correct_from_json));
  PTXBENCH_TRY_ASSIGN(auto done, load_rationales(rationales_path, DatasetKind::kernelgen));
  std::vector<Draft> drafts;
  for (const CorrectRecord& c : records) {
    const RationaleRecord* r = find(done, c.id);
    Json metadata{{"kind", "kernelgen"},
                  {"record_id", c.id},
                  {"problem", c.trajectory_key.problem},
                  {"prompt_variant", c.trajectory_key.prompt_variant},
                  {"model", c.trajectory_key.model},
                  {"turn", c.turn},
                  {"arch", c.arch},
                  {"speedup", c.speedup ? Json(*c.speedup) : Json()},
                  {"target_executed", c.target_executed ? Json(*c.target_executed) : Json()},
                  {"rationale", rationale_metadata(r)}};
    drafts.push_back(Draft{c.id, kernelgen_messages(c, r ? r->reasoning : ""), std::move(metadata),
                           CompositionKey{c.trajectory_key.problem, "correct", c.turn}, r});
  }
  std::vector<Input> inputs;
  for (const fs::path& path : {correct_path, rationales_path}) {
    PTXBENCH_TRY_ASSIGN(auto input, hashed(path));
    inputs.push_back(std::move(input));
  }
  return build_once(dir, DatasetKind::kernelgen, std::move(drafts), inputs, options, tokenizer);
}

} // namespace ptxbench::adapt
