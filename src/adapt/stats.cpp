#include "adapt/stats.hpp"

#include "trace/json_io.hpp"
#include "util/fs.hpp"
#include "util/json_reader.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/core.h>
#include <limits>
#include <map>
#include <optional>
#include <set>

namespace ptxbench::adapt {
namespace {

namespace fs = std::filesystem;

template <typename Key>
std::string table(std::string_view heading, std::string_view column,
                  const std::map<Key, std::int64_t>& counts, std::int64_t total) {
  std::string out =
      fmt::format("## {}\n\n| {} | rows | share |\n|---|---:|---:|\n", heading, column);
  for (const auto& [key, count] : counts)
    out += fmt::format("| {} | {} | {:.1f}% |\n", key, count,
                       total > 0 ? 100.0 * static_cast<double>(count) / static_cast<double>(total)
                                 : 0.0);
  return out + fmt::format("| **total** | {} | |\n\n", total);
}

std::string composition_tables(const Composition& counts) {
  std::map<std::string, std::int64_t> problems, categories;
  std::map<std::int64_t, std::int64_t> turns;
  std::int64_t total = 0;
  for (const auto& [key, count] : counts) {
    problems[std::get<0>(key)] += count;
    categories[std::get<1>(key)] += count;
    turns[std::get<2>(key)] += count;
    total += count;
  }
  return table("Rows per problem", "problem", problems, total) +
         table("Rows per category", "category", categories, total) +
         table("Rows per turn", "turn", turns, total);
}

util::Expected<std::set<std::string>> built_ids(const fs::path& sft) {
  PTXBENCH_TRY_ASSIGN(auto lines, read_jsonl_lines(sft));
  std::set<std::string> ids;
  for (const JsonlLine& line : lines) {
    util::JsonReader in(fmt::format("{}:{}", sft.string(), line.number));
    if (in.expect_object(line.json, "$"))
      ids.insert(in.string(line.json, "$", "id", util::Emptiness::allowed));
    if (!in.ok())
      return in.finish(std::move(ids));
  }
  return ids;
}

util::Expected<std::vector<std::int64_t>> rationale_lengths(const fs::path& dir, DatasetKind kind) {
  PTXBENCH_TRY_ASSIGN(auto ids, built_ids(stage_dir(dir, kind, "build") / "sft.jsonl"));
  PTXBENCH_TRY_ASSIGN(auto rationales, read_jsonl<RationaleRecord>(
                                           stage_dir(dir, kind, "synthesize") / "rationales.jsonl",
                                           rationale_from_json));
  std::map<std::string, std::int64_t> lengths; // the last done one per id, as build reads them
  for (const RationaleRecord& r : rationales)
    if (r.status == "done" && ids.contains(r.id))
      lengths[r.id] = static_cast<std::int64_t>(r.reasoning.size());
  std::vector<std::int64_t> values;
  for (const auto& [id, length] : lengths)
    values.push_back(length);
  return values;
}

// The token counts of a build manifest ("tokens" is null when no row was counted).
struct TokenStats {
  bool approximate = true;
  std::int64_t min = 0;
  std::int64_t median = 0;
  std::int64_t max = 0;
  std::int64_t total = 0;
};

std::string tokens_line(const std::optional<TokenStats>& tokens) {
  if (!tokens)
    return {};
  return fmt::format("Tokens per row{}: min {}, median {}, max {}, total {}.\n\n",
                     tokens->approximate ? " (approximate: ceil(bytes / 4), no tokenizer)" : "",
                     tokens->min, tokens->median, tokens->max, tokens->total);
}

std::string lengths_table(const LengthStats& s) {
  return fmt::format("## Reasoning length (characters)\n\n"
                     "| rationales | min | median | p90 | max |\n|---:|---:|---:|---:|---:|\n"
                     "| {} | {} | {} | {} | {} |\n",
                     s.count, s.min, s.median, s.p90, s.max);
}

} // namespace

LengthStats length_stats(std::vector<std::int64_t> values) {
  if (values.empty())
    return {};
  std::sort(values.begin(), values.end());
  const auto rank = [&](double p) {
    const auto n = static_cast<double>(values.size());
    auto index = static_cast<std::size_t>(std::max(1.0, std::ceil(p * n))) - 1;
    return values[std::min(index, values.size() - 1)];
  };
  return LengthStats{static_cast<std::int64_t>(values.size()), values.front(), rank(0.5), rank(0.9),
                     values.back()};
}

namespace {

// What stats reads of DIR/<kind>/build/manifest.json, a file an earlier build wrote.
struct BuildManifest {
  std::int64_t rows = 0;
  Composition counts;
  std::optional<TokenStats> tokens;
};

std::optional<TokenStats> read_tokens(util::JsonReader& in, const Json& manifest) {
  const Json* tokens = util::JsonReader::optional(manifest, "tokens");
  if (tokens == nullptr || tokens->is_null() || !in.expect_object(*tokens, "$.tokens"))
    return std::nullopt;
  TokenStats out;
  if (const Json* tokenizer = in.object_member(manifest, "$", "tokenizer"))
    out.approximate = in.boolean(*tokenizer, "$.tokenizer", "approximate");
  constexpr util::IntegerRange kCount{0, std::numeric_limits<std::int64_t>::max()};
  out.min = in.integer(*tokens, "$.tokens", "min", kCount);
  out.median = in.integer(*tokens, "$.tokens", "median", kCount);
  out.max = in.integer(*tokens, "$.tokens", "max", kCount);
  out.total = in.integer(*tokens, "$.tokens", "total", kCount);
  return out;
}

util::Expected<BuildManifest> build_manifest(const fs::path& dir, DatasetKind kind) {
  const fs::path manifest_path = stage_dir(dir, kind, "build") / "manifest.json";
  PTXBENCH_TRY_ASSIGN(auto text, util::read_file(manifest_path));
  PTXBENCH_TRY_ASSIGN(auto manifest, trace::parse_json_text(text, manifest_path.string()));
  util::JsonReader in(manifest_path.string());
  BuildManifest out;
  if (!in.expect_object(manifest, "$"))
    return in.finish(std::move(out));
  if (const Json* counts = in.required(manifest, "$", "counts"))
    out.counts = read_composition(in, *counts, "$.counts");
  out.rows = in.integer(manifest, "$", "rows",
                        util::IntegerRange{0, std::numeric_limits<std::int64_t>::max()});
  out.tokens = read_tokens(in, manifest);
  return in.finish(std::move(out));
}

} // namespace

util::Expected<Composition> build_composition(const fs::path& dir, DatasetKind kind) {
  PTXBENCH_TRY_ASSIGN(auto manifest, build_manifest(dir, kind));
  return std::move(manifest.counts);
}

util::Expected<std::string> render_stats(const fs::path& dir, DatasetKind kind) {
  PTXBENCH_TRY_ASSIGN(auto manifest, build_manifest(dir, kind));
  PTXBENCH_TRY_ASSIGN(auto lengths, rationale_lengths(dir, kind));
  return fmt::format("# {} data set: {} rows\n\n", to_string(kind), manifest.rows) +
         tokens_line(manifest.tokens) + composition_tables(manifest.counts) +
         lengths_table(length_stats(std::move(lengths)));
}

} // namespace ptxbench::adapt
