#include "reference/gemm_autotune.hpp"

#include "util/fs.hpp"
#include "util/json_reader.hpp"
#include "util/paths.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdlib>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace ptxbench::reference {
namespace {

using Json = nlohmann::ordered_json;
using util::Emptiness;

constexpr std::array<std::string_view, 10> kRecordKeys{
    "library",         "device", "m",         "n",    "k",
    "workspace_bytes", "chosen", "median_us", "gain", "measured_at"};

bool usable(double median) {
  return std::isfinite(median) && median > 0;
}

AutotuneRecord read_record(util::JsonReader& in, const Json& row, const std::string& path) {
  AutotuneRecord record;
  if (!in.expect_object(row, path))
    return record;
  in.allow_only(row, path, kRecordKeys);
  record.key.library = in.string(row, path, "library", Emptiness::rejected);
  record.key.device = in.string(row, path, "device", Emptiness::rejected);
  record.key.shape.m = in.integer(row, path, "m", util::IntegerRange{1, std::int64_t{1} << 40});
  record.key.shape.n = in.integer(row, path, "n", util::IntegerRange{1, std::int64_t{1} << 40});
  record.key.shape.k = in.integer(row, path, "k", util::IntegerRange{1, std::int64_t{1} << 40});
  record.key.workspace_bytes = static_cast<std::size_t>(
      in.integer(row, path, "workspace_bytes", util::IntegerRange{0, std::int64_t{1} << 40}));
  record.chosen = static_cast<int>(in.integer(row, path, "chosen", util::IntegerRange{0, 1023}));
  if (const Json* medians = in.array_member(row, path, "median_us"))
    for (std::size_t i = 0; i < medians->size(); ++i)
      record.median_us.push_back(
          in.number_at((*medians)[i], fmt::format("{}.median_us[{}]", path, i)));
  record.measured_at = in.string(row, path, "measured_at", Emptiness::allowed);
  if (in.ok() && static_cast<std::size_t>(record.chosen) >= record.median_us.size())
    in.fail(path + ".chosen", "beyond the candidates of median_us");
  return record;
}

} // namespace

int choose_rank(std::span<const double> median_us, double margin) {
  if (median_us.empty())
    return 0;
  int best = 0;
  for (std::size_t i = 1; i < median_us.size(); ++i)
    if (usable(median_us[i]) && (!usable(median_us[static_cast<std::size_t>(best)]) ||
                                 median_us[i] < median_us[static_cast<std::size_t>(best)]))
      best = static_cast<int>(i);
  const double first = median_us[0];
  if (best != 0 && usable(first) &&
      median_us[static_cast<std::size_t>(best)] >= first * (1 - margin))
    return 0;
  return best;
}

double AutotuneRecord::gain() const {
  if (median_us.empty() || static_cast<std::size_t>(chosen) >= median_us.size())
    return 1.0;
  const double chosen_us = median_us[static_cast<std::size_t>(chosen)];
  return usable(median_us[0]) && usable(chosen_us) ? median_us[0] / chosen_us : 1.0;
}

std::string describe(const AutotuneRecord& record) {
  if (record.median_us.size() <= 1)
    return " (the heuristic's only algorithm)";
  return fmt::format(" (autotuned: heuristic #{} of {}, {:.3f}x the first)", record.chosen + 1,
                     record.median_us.size(), record.gain());
}

util::Expected<std::vector<AutotuneRecord>> parse_autotune_records(std::string_view text,
                                                                   const std::string& origin) {
  const Json root = Json::parse(text, nullptr, /*allow_exceptions=*/false);
  util::JsonReader in(origin);
  std::vector<AutotuneRecord> records;
  if (root.is_discarded()) {
    in.fail("$", "not JSON");
  } else if (in.expect_object(root, "$")) {
    static constexpr std::array<std::string_view, 1> kKeys{"records"};
    in.allow_only(root, "$", kKeys);
    if (const Json* rows = in.array_member(root, "$", "records"))
      for (std::size_t i = 0; i < rows->size() && in.ok(); ++i)
        records.push_back(read_record(in, (*rows)[i], fmt::format("$.records[{}]", i)));
  }
  return in.finish(std::move(records));
}

std::string autotune_records_json(const std::vector<AutotuneRecord>& records) {
  Json rows = Json::array();
  for (const AutotuneRecord& r : records)
    rows.push_back({{"library", r.key.library},
                    {"device", r.key.device},
                    {"m", r.key.shape.m},
                    {"n", r.key.shape.n},
                    {"k", r.key.shape.k},
                    {"workspace_bytes", r.key.workspace_bytes},
                    {"chosen", r.chosen},
                    {"median_us", r.median_us},
                    {"gain", r.gain()},
                    {"measured_at", r.measured_at}});
  return Json{{"records", rows}}.dump(2) + "\n";
}

AutotuneCache::AutotuneCache(std::filesystem::path file) : m_file(std::move(file)) {}

std::filesystem::path AutotuneCache::default_file() {
  return util::cache_root() / "reference" / "cublaslt_autotune.json";
}

AutotuneCache& AutotuneCache::shared() {
  static AutotuneCache cache([] {
    const char* file = std::getenv("PTXBENCH_CUBLASLT_AUTOTUNE_FILE");
    return file != nullptr && *file != '\0' ? std::filesystem::path(file) : default_file();
  }());
  return cache;
}

std::vector<AutotuneRecord> AutotuneCache::read_file() const {
  auto text = util::read_file(m_file);
  if (!text)
    return {};
  auto records = parse_autotune_records(*text, m_file.string());
  return records ? std::move(*records) : std::vector<AutotuneRecord>{};
}

std::optional<AutotuneRecord> AutotuneCache::find(const AutotuneKey& key) {
  std::lock_guard lock(m_mutex);
  const std::vector<AutotuneRecord> records = m_file.empty() ? m_memory : read_file();
  for (const AutotuneRecord& record : records)
    if (record.key == key)
      return record;
  return std::nullopt;
}

void AutotuneCache::put(const AutotuneRecord& record) {
  std::lock_guard lock(m_mutex);
  std::vector<AutotuneRecord> records = m_file.empty() ? m_memory : read_file();
  std::erase_if(records, [&](const AutotuneRecord& r) { return r.key == record.key; });
  records.push_back(record);
  if (m_file.empty()) {
    m_memory = std::move(records);
    return;
  }
  std::error_code error;
  std::filesystem::create_directories(m_file.parent_path(), error);
  // A cache that cannot be written costs a re-measurement in the next process, never a verdict.
  static_cast<void>(util::write_file_atomic(m_file, autotune_records_json(records)));
}

} // namespace ptxbench::reference
