#include "exec/counts_cache.hpp"

#include "sass/counters.hpp"
#include "util/fs.hpp"
#include "util/hash.hpp"
#include "util/json_reader.hpp"
#include "util/paths.hpp"

#include <array>

namespace ptxbench::exec {
namespace {

constexpr int kSchema = 1;
constexpr std::array<std::string_view, 4> kEntryKeys{"schema", "key", "counted_at", "counts"};

} // namespace

CountsKey counts_key(std::string source_sha256, std::string library_sha256,
                     const CountsContext& context) {
  const sass::ArchCounters* counters = sass::counters_for(compile::to_string(context.arch));
  return {std::move(source_sha256),
          std::move(library_sha256),
          context.problem,
          context.workload,
          context.seed,
          context.sets,
          context.gpu,
          std::to_string(context.driver_version),
          counters != nullptr ? sass::metric_names(*counters) : std::vector<std::string>{},
          "user",
          PTXBENCH_VERSION};
}

std::optional<std::string> counts_cache_refusal(const EvalOptions& options, bool has_library) {
  if (options.counts_cache != CountsCacheUse::on || !options.dynamic_counts)
    return std::nullopt;
  // A secret seed is drawn once and never comes again; a Triton candidate's cubins are built in
  // its warm-up, after the counter session would have had to open.
  if (!options.seed)
    return "not used: the input seed is secret (fix it to reuse)";
  if (!has_library)
    return "not used: the candidate has no kernel.so";
  return "";
}

trace::Json to_json(const CountsKey& key) {
  return {{"source_sha256", key.source_sha256},
          {"library_sha256", key.library_sha256},
          {"problem", key.problem},
          {"workload", key.workload},
          {"seed", key.seed},
          {"sets", key.sets},
          {"gpu", key.gpu},
          {"driver", key.driver},
          {"metrics", key.metrics},
          {"replay", key.replay},
          {"ptxbench", key.ptxbench}};
}

std::string file_name(const CountsKey& key) {
  return util::sha256_hex(to_json(key).dump()) + ".json";
}

util::Expected<CachedCounts> parse_counts_entry(std::string_view text, const CountsKey& key,
                                                const std::string& origin) {
  const trace::Json json = trace::Json::parse(text, nullptr, false);
  if (json.is_discarded())
    return util::make_error(util::ErrorKind::invalid_input, origin + ": $: not JSON");
  return util::JsonReader::read_root<CachedCounts>(
      json, origin, [&](util::JsonReader& in, const trace::Json& root, CachedCounts& out) {
        in.allow_only(root, "$", kEntryKeys);
        (void)in.integer(root, "$", "schema", {kSchema, kSchema});
        // The stored key must be the one asked for: a file name collision or an edited file
        // never lends its counts to another kernel.
        if (const trace::Json* stored = in.object_member(root, "$", "key");
            stored != nullptr && *stored != to_json(key))
          in.fail("$.key", "the entry was stored for another key");
        out.counted_at = in.string(root, "$", "counted_at", util::Emptiness::rejected);
        if (const trace::Json* counts = in.object_member(root, "$", "counts"))
          out.counts = *counts;
      });
}

CountsCache::CountsCache(std::filesystem::path folder) : m_folder(std::move(folder)) {}

std::filesystem::path CountsCache::default_folder() {
  return util::cache_root() / "counts";
}

std::optional<CachedCounts> CountsCache::get(const CountsKey& key) {
  const std::string name = file_name(key);
  std::lock_guard lock(m_mutex);
  if (auto known = m_memory.find(name); known != m_memory.end())
    return known->second;
  if (m_folder.empty())
    return std::nullopt;
  const std::filesystem::path path = m_folder / name;
  auto text = util::read_file(path);
  if (!text)
    return std::nullopt;
  // An entry that does not read is as good as none: the next put() replaces it.
  auto entry = parse_counts_entry(*text, key, path.string());
  if (!entry)
    return std::nullopt;
  m_memory.emplace(name, *entry);
  return std::move(*entry);
}

void CountsCache::put(const CountsKey& key, const trace::Json& counts, std::string counted_at) {
  const std::string name = file_name(key);
  std::lock_guard lock(m_mutex);
  m_memory[name] = CachedCounts{counts, counted_at};
  if (m_folder.empty())
    return;
  const trace::Json entry = {{"schema", kSchema},
                             {"key", to_json(key)},
                             {"counted_at", std::move(counted_at)},
                             {"counts", counts}};
  (void)util::write_file_atomic(m_folder / name, entry.dump(2) + "\n"); // memory still has it
}

} // namespace ptxbench::exec
