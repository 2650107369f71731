// Which cuBLASLt algorithm the GEMM baseline runs (the cheat catalogue's row 26: a baseline that
// takes its heuristic's first algorithm is slower than the library can be, and a candidate's
// speedup over it is inflated).
//
// Approach. The factory asks the heuristic for its top candidates, times each on the problem's
// own shape (gemm_cublaslt.cpp), and runs the fastest. The choice is kept per (library version,
// device, shape, workspace cap) in a JSON file under the cache, so every later process on that
// device runs the same algorithm without timing again: the baseline a run measures against does
// not change between evaluations, and the reference-latency cache (keyed by the library text,
// which names the choice) stays consistent. The record keeps every candidate's median, so what
// autotuning gained over the first algorithm is on record.
//
// The choice is the heuristic's rank, checked on use: a record is used only when the heuristic
// still offers that many candidates for the same key. A file that does not read is no file (it
// is rewritten); a record for another library version or device never matches.
#pragma once

#include "reference/shape_types.hpp"
#include "util/error.hpp"

#include <cstddef>
#include <filesystem>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace ptxbench::reference {

// A candidate must beat the first by more than this fraction of the first's median to be
// chosen: noise never moves the baseline off the heuristic's own pick.
inline constexpr double kAutotuneMargin = 0.01;

// The rank (index into `median_us`, in heuristic order) to run: the fastest, unless it is not
// faster than the first by more than `margin`; 0 for an empty or all-unusable list. A candidate
// whose median is not a positive finite number (it failed to run) is never chosen.
int choose_rank(std::span<const double> median_us, double margin = kAutotuneMargin);

struct AutotuneKey {
  std::string library; // "cuBLASLt 13.1.0"
  std::string device;  // "NVIDIA H200 (sm_90)"
  GemmShape shape;
  std::size_t workspace_bytes = 0;
  friend bool operator==(const AutotuneKey&, const AutotuneKey&) = default;
};

struct AutotuneRecord {
  AutotuneKey key;
  int chosen = 0;                // the heuristic rank run
  std::vector<double> median_us; // each candidate's, in heuristic order (<= 0: it failed)
  std::string measured_at;       // ISO-8601 UTC

  // The first algorithm's median over the chosen one's (1 when the first was chosen).
  double gain() const;
};

// What library() says of an autotuned baseline: " (autotuned: heuristic #3 of 8, 1.041x the
// first)", or " (the heuristic's only algorithm)".
std::string describe(const AutotuneRecord& record);

// The records in a file. invalid_input naming `origin` and the JSON path for a file of another
// shape.
util::Expected<std::vector<AutotuneRecord>> parse_autotune_records(std::string_view text,
                                                                   const std::string& origin);
std::string autotune_records_json(const std::vector<AutotuneRecord>& records);

// The file of records; thread-safe; several processes may share it (each write replaces the
// file atomically with what this process read plus its own record).
class AutotuneCache {
public:
  // An empty path keeps the records in memory only.
  explicit AutotuneCache(std::filesystem::path file);
  // util::cache_root() / "reference" / "cublaslt_autotune.json".
  static std::filesystem::path default_file();
  // The process's cache of default_file(), or of $PTXBENCH_CUBLASLT_AUTOTUNE_FILE when set.
  static AutotuneCache& shared();

  std::optional<AutotuneRecord> find(const AutotuneKey& key);
  void put(const AutotuneRecord& record);
  // The file the records are kept in (empty: memory only).
  const std::filesystem::path& file() const { return m_file; }

private:
  std::vector<AutotuneRecord> read_file() const;

  std::filesystem::path m_file;
  std::mutex m_mutex;
  std::vector<AutotuneRecord> m_memory; // records when there is no file
};

} // namespace ptxbench::reference
