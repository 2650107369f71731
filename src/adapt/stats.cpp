#include "adapt/stats.hpp"

#include "util/fs.hpp"

#include <algorithm>
#include <cmath>
#include <fmt/core.h>
#include <map>
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
  auto lines = read_jsonl_lines(sft);
  PTXBENCH_TRY(lines);
  std::set<std::string> ids;
  for (const JsonlLine& line : *lines) {
    if (!line.json.is_object() || !line.json.value("id", Json()).is_string())
      return util::make_error(util::ErrorKind::invalid_input,
                              fmt::format("{}:{}: row without an id", sft.string(), line.number));
    ids.insert(line.json["id"].get<std::string>());
  }
  return ids;
}

util::Expected<std::vector<std::int64_t>> rationale_lengths(const fs::path& dir, DatasetKind kind) {
  auto ids = built_ids(stage_dir(dir, kind, "build") / "sft.jsonl");
  PTXBENCH_TRY(ids);
  auto rationales = read_jsonl<RationaleRecord>(
      stage_dir(dir, kind, "synthesize") / "rationales.jsonl", rationale_from_json);
  PTXBENCH_TRY(rationales);
  std::map<std::string, std::int64_t> lengths; // the last done one per id, as build reads them
  for (const RationaleRecord& r : *rationales)
    if (r.status == "done" && ids->contains(r.id))
      lengths[r.id] = static_cast<std::int64_t>(r.reasoning.size());
  std::vector<std::int64_t> values;
  for (const auto& [id, length] : lengths)
    values.push_back(length);
  return values;
}

std::string tokens_line(const Json& manifest) {
  const Json& tokens = manifest.value("tokens", Json());
  if (!tokens.is_object())
    return {};
  const bool approximate = manifest["tokenizer"].value("approximate", true);
  return fmt::format("Tokens per row{}: min {}, median {}, max {}, total {}.\n\n",
                     approximate ? " (approximate: ceil(bytes / 4), no tokenizer)" : "",
                     tokens.value("min", 0), tokens.value("median", 0), tokens.value("max", 0),
                     tokens.value("total", 0));
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

util::Expected<Json> build_manifest(const fs::path& dir, DatasetKind kind) {
  const fs::path manifest_path = stage_dir(dir, kind, "build") / "manifest.json";
  auto text = util::read_file(manifest_path);
  PTXBENCH_TRY(text);
  Json manifest = Json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (!manifest.is_object() || !manifest.contains("counts"))
    return util::make_error(util::ErrorKind::invalid_input,
                            manifest_path.string() + ": not a build manifest (no \"counts\")");
  return manifest;
}

util::Expected<Composition> composition_of(const Json& manifest, const fs::path& dir,
                                           DatasetKind kind) {
  auto counts = composition_from_json(manifest["counts"]);
  if (!counts)
    return util::make_error(util::ErrorKind::invalid_input,
                            (stage_dir(dir, kind, "build") / "manifest.json").string() + ": " +
                                counts.error().message);
  return counts;
}

} // namespace

util::Expected<Composition> build_composition(const fs::path& dir, DatasetKind kind) {
  auto manifest = build_manifest(dir, kind);
  PTXBENCH_TRY(manifest);
  return composition_of(*manifest, dir, kind);
}

util::Expected<std::string> render_stats(const fs::path& dir, DatasetKind kind) {
  auto loaded = build_manifest(dir, kind);
  PTXBENCH_TRY(loaded);
  const Json& manifest = *loaded;
  auto counts = composition_of(manifest, dir, kind);
  PTXBENCH_TRY(counts);
  auto lengths = rationale_lengths(dir, kind);
  PTXBENCH_TRY(lengths);
  return fmt::format("# {} data set: {} rows\n\n", to_string(kind), manifest.value("rows", 0)) +
         tokens_line(manifest) + composition_tables(*counts) +
         lengths_table(length_stats(std::move(*lengths)));
}

} // namespace ptxbench::adapt
