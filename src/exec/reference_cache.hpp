// Reference latencies per (problem, GPU, library), kept for the life of the supervisor and on
// disk (util::cache_root()/reference_latency.json) so a later process can skip re-measuring
// a baseline that cannot have changed. Entries are only ever written from a fresh measurement.
#pragma once

#include "util/error.hpp"

#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

namespace ptxbench::exec {

// The cache file's entries, key -> latency in ms; a value that is not a number > 0 is an
// invalid_input error naming `origin` and the entry's JSON path. A file that does not read counts
// as no file: it is rewritten on the next put().
util::Expected<std::map<std::string, double>> parse_reference_latencies(std::string_view text,
                                                                        const std::string& origin);

class ReferenceLatencyCache {
public:
  // An empty path keeps the cache in memory only.
  explicit ReferenceLatencyCache(std::filesystem::path file);
  static std::filesystem::path default_file();

  std::optional<double> get(const std::string& problem, const std::string& gpu,
                            const std::string& library);
  void put(const std::string& problem, const std::string& gpu, const std::string& library,
           double latency_ms);

private:
  static std::string key(const std::string& problem, const std::string& gpu,
                         const std::string& library);
  void load();

  std::filesystem::path m_file;
  std::mutex m_mutex;
  bool m_loaded = false;
  std::map<std::string, double> m_entries;
};

} // namespace ptxbench::exec
