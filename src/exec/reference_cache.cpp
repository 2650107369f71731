#include "exec/reference_cache.hpp"

#include "trace/schema.hpp"
#include "util/fs.hpp"
#include "util/json_reader.hpp"
#include "util/paths.hpp"

namespace ptxbench::exec {

util::Expected<std::map<std::string, double>> parse_reference_latencies(std::string_view text,
                                                                        const std::string& origin) {
  const trace::Json json = trace::Json::parse(text, nullptr, false);
  util::JsonReader in(origin);
  std::map<std::string, double> entries;
  if (json.is_discarded())
    in.fail("$", "not JSON");
  else if (in.expect_object(json, "$"))
    for (const auto& [key, value] : json.items()) {
      const std::string path = util::key_path("$", key);
      const double latency_ms = in.number_at(value, path);
      if (in.ok() && !(latency_ms > 0.0))
        in.fail(path, "expected a latency > 0 ms, got " + value.dump());
      entries[key] = latency_ms;
    }
  return in.finish(std::move(entries));
}

ReferenceLatencyCache::ReferenceLatencyCache(std::filesystem::path file)
    : m_file(std::move(file)) {}

std::filesystem::path ReferenceLatencyCache::default_file() {
  return util::cache_root() / "reference_latency.json";
}

std::string ReferenceLatencyCache::key(const std::string& problem, const std::string& gpu,
                                       const std::string& library) {
  return problem + " | " + gpu + " | " + library;
}

void ReferenceLatencyCache::load() {
  if (m_loaded || m_file.empty())
    return;
  m_loaded = true;
  auto text = util::read_file(m_file);
  if (!text)
    return;
  // A damaged cache file is as good as none: it is rewritten on the next put().
  if (auto entries = parse_reference_latencies(*text, m_file.string()))
    m_entries = std::move(*entries);
}

std::optional<double> ReferenceLatencyCache::get(const std::string& problem, const std::string& gpu,
                                                 const std::string& library) {
  std::lock_guard lock(m_mutex);
  load();
  auto found = m_entries.find(key(problem, gpu, library));
  if (found == m_entries.end())
    return std::nullopt;
  return found->second;
}

void ReferenceLatencyCache::put(const std::string& problem, const std::string& gpu,
                                const std::string& library, double latency_ms) {
  std::lock_guard lock(m_mutex);
  load();
  m_entries[key(problem, gpu, library)] = latency_ms;
  if (m_file.empty())
    return;
  trace::Json json = trace::Json::object();
  for (const auto& [k, v] : m_entries)
    json[k] = v;
  (void)util::write_file_atomic(m_file, json.dump(2) + "\n"); // best effort: memory still has it
}

} // namespace ptxbench::exec
