// Counts of the counting pass kept for the exact same kernel on the exact same inputs (issue 35;
// the paper caches its ncu evidence keyed by source and cubin, §A.2).
//
// Problem: back to back, the counting pass costs ~0.66 s of a ~1.2 s evaluation, nearly all of
// it the range profiler's first Start in the candidate's fresh process
// (bench/results/eval_throughput_h200.md). A trainer that scores the same completion twice, or
// re-scores a kernel, pays it again for counts it already has.
//
// Approach: a counted evaluation stores the child's counts (protocol/counts.hpp, as the report
// keeps them) under a key of everything the executed instructions can depend on; a later
// evaluation with the same key takes them instead of counting, and its child never opens a
// counter session. The key: the candidate's source text and kernel.so (host code and every
// embedded cubin, so the toolchain too), the problem and workload, the input seed and set count,
// the GPU's name and driver, the counter table's metrics and replay, and ptxbench's version.
//
// What a reused count cannot see, and how that is bounded (docs/evaluation.md "Counts cache"):
// - input values: the seed is in the key, and only a caller-fixed seed is eligible; a secret
//   seed is drawn once and never comes again, so it could never hit anyway;
// - the launches: the reused count's kernels are checked against this evaluation's calls by the
//   same consistency rule as a fresh count (launch_rules.hpp, inconsistent_work);
// - behaviour that differs between two processes with the same code and inputs (host code
//   reading the time or its process id and passing a flag to the kernel, a device clock): this
//   is why the cache is off unless asked for (`--counts-cache on`), never the default.
// Invariants: only a fresh count whose values read and whose outputs matched is stored; a file
// that does not read, or whose stored key differs from the one asked, is a miss (and is replaced
// by the next store). Entries are written atomically; concurrent evaluators may share a folder.
#pragma once

#include "compile/nvcc.hpp"
#include "exec/eval_options.hpp"
#include "trace/schema.hpp"
#include "util/error.hpp"

#include <cstdint>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ptxbench::exec {

struct CountsKey {
  std::string source_sha256;  // the candidate's source text
  std::string library_sha256; // kernel.so as loaded
  std::string problem;
  std::string workload; // the problem's workload uuid
  std::uint64_t seed = 0;
  int sets = 0;
  std::string gpu;    // the device's name
  std::string driver; // its driver version
  std::vector<std::string> metrics;
  std::string replay;
  std::string ptxbench; // version
};

// What the key is made of besides the source and kernel.so: the evaluation's problem, inputs
// and GPU.
struct CountsContext {
  std::string problem;
  std::string workload;
  std::uint64_t seed = 0;
  int sets = 0;
  std::string gpu;
  int driver_version = 0; // cudaDriverGetVersion
  compile::Arch arch = compile::Arch::sm_90a;
};

// The key of a candidate counted with user replay (as the child counts) under `context`: the
// metrics are the architecture's row of the counter table (sass/counters.hpp).
CountsKey counts_key(std::string source_sha256, std::string library_sha256,
                     const CountsContext& context);

// Whether an evaluation may use the cache: nullopt when it was not asked for (or counts
// nothing), else "" when it may, or why not ("not used: …", the report's text).
std::optional<std::string> counts_cache_refusal(const EvalOptions& options, bool has_library);

trace::Json to_json(const CountsKey& key);
// The entry's file name: SHA-256 of the key's JSON.
std::string file_name(const CountsKey& key);

// A stored entry: the counts as the report keeps them and when they were counted.
struct CachedCounts {
  trace::Json counts;
  std::string counted_at; // ISO 8601, UTC
};

// An entry file read back; an invalid_input error naming the JSON path for any other shape.
util::Expected<CachedCounts> parse_counts_entry(std::string_view text, const CountsKey& key,
                                                const std::string& origin);

class CountsCache {
public:
  // An empty folder keeps entries in memory only.
  explicit CountsCache(std::filesystem::path folder);
  static std::filesystem::path default_folder(); // util::cache_root()/counts

  std::optional<CachedCounts> get(const CountsKey& key);
  void put(const CountsKey& key, const trace::Json& counts, std::string counted_at);

private:
  std::filesystem::path m_folder;
  std::mutex m_mutex;
  std::map<std::string, CachedCounts> m_memory; // file name -> entry
};

} // namespace ptxbench::exec
