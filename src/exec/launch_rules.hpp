// What the candidate launched, and the rules it must keep (docs/evaluation.md "What counts as
// the candidate's work").
//
// Problem. A correct result with the right instructions counts only if the candidate's own
// kernels computed it, every time it was called. Three things can break that while the numbers
// still come out right: a kernel from somewhere else ran in the call (a library reached at run
// time, a module loaded by name); the candidate asked the runtime for a driver function that
// loads GPU code; or the candidate did different work when called again — it computed once and
// then skipped, copied or replayed (cheats 4, 5 and 23 of the catalogue).
//
// Approach. The supervisor gathers the evidence as the phases run (LaunchEvidence: the kernels
// of every correctness call and the repeat of the last one, of every timed call grouped by
// kernel list, of the counting pass's profiled ranges; the child's refused entry-point lookups)
// and judge_launches() decides, after the phases, in this order:
//   runtime_loading    any refused lookup                          → RUNTIME_ERROR
//   foreign_kernel     any kernel that is not in the candidate's    → RUNTIME_ERROR
//                      kernel.so (CUPTI names against the SASS report's function names; for
//                      a Triton candidate, against the symbols of the cubins Triton built),
//                      or whose name a loaded module defines that is not one of the
//                      candidate's cubins (by the SHA-256 of the image the driver loaded)
//   inconsistent_work  a timed call, or the repeat of the last       → RUNTIME_ERROR
//                      correctness call, launched other kernels than the correctness calls
//                      after the first (which may also run one-time set-up kernels), or the
//                      counting pass launched another number of kernels; or the repeat, or
//                      the timed calls, took under kReplayRatio of the time the same call took
//                      on inputs it saw for the first time (a same-named kernel that copies a
//                      cached result instead of computing it); or, for a Triton candidate, a
//                      cubin appeared in its cache after the warm-up (a kernel compiled inside
//                      a traced or timed call: a constexpr that changes between calls)
// The run store files the first two under banned_library and the third under runtime.
//
// Invariants. Timed calls run with a cold L2 and correctness calls do not, so an honest kernel's
// timed calls are never faster than its first-sight correctness calls by anything near 2×; the
// first call of the process is never a reference for latency or kernels (lazy module loading,
// one-time set-up).
#pragma once

#include "protocol/protocol.hpp"
#include "sass/report.hpp"
#include "util/enum_table.hpp"

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ptxbench::exec {

// Timed calls faster than this share of the first-sight correctness calls did other work.
inline constexpr double kReplayRatio = 0.5;

// One correctness-phase call as the child traced it.
struct TracedCall {
  int set = 0;
  bool repeat = false;               // the same inputs as the call before it
  std::vector<std::string> launches; // kernel names in launch order
  std::optional<double> latency_ms;  // CUPTI span; absent when the child could not trace
};

struct LaunchEvidence {
  std::vector<TracedCall> correctness;    // in call order
  std::vector<protocol::KernelSet> timed; // every timed call's kernels, grouped
  // The counting pass's profiled ranges, one per launch. CUPTI numbers them 1, 2, … in launch
  // order; a range name that is not such a number is kept as a kernel name.
  std::optional<std::size_t> counted_launches;
  std::vector<std::string> counted;
  std::vector<std::string> refused; // driver entry points the child refused
  std::optional<double> timed_ms;   // the timing phase's candidate latency (mean of medians)
  // A Triton candidate: the function names of the cubins Triton built in the warm-up
  // (exec/cubin_folder.hpp), which are its own kernels instead of the SASS report's; and the
  // cubins that appeared in its cache folder after the warm-up (compiled inside a traced or
  // timed call).
  std::optional<std::vector<std::string>> cubin_functions;
  std::vector<std::string> late_cubins;
  // Identity, not name: every module loaded in the child (gathered from its replies), and the
  // SHA-256 of each cubin that is the candidate's own (kernel.so's, or Triton's warm-up
  // cubins); absent when they could not be read, and the name rule stands alone.
  std::vector<protocol::ModuleSeen> modules;
  std::optional<std::vector<std::string>> own_cubins;
  // The stream-ordered frees (cudaFreeAsync) the child had made by its last reply.
  std::uint64_t stream_ordered_frees = 0;

  void add_timed(const std::vector<protocol::KernelSet>& sets);
};

// Which rule a candidate broke. Persisted in the trace's ptxbench extras: explicit values.
enum class Rule : std::uint8_t { runtime_loading = 1, foreign_kernel = 2, inconsistent_work = 3 };

struct RuleInfo {
  Rule rule;
  std::string_view name;
};

inline constexpr std::array kRules{
    RuleInfo{Rule::runtime_loading, "runtime_loading"},
    RuleInfo{Rule::foreign_kernel, "foreign_kernel"},
    RuleInfo{Rule::inconsistent_work, "inconsistent_work"},
};

consteval bool rules_complete() {
  for (std::size_t i = 0; i < kRules.size(); ++i)
    if (static_cast<std::size_t>(kRules[i].rule) != i + 1)
      return false;
  return true;
}
static_assert(rules_complete(), "kRules must list every Rule in value order");
static_assert(util::no_enumerator_after<Rule, kRules.size()>(),
              "kRules lacks a row for an enumerator after its last");

std::string_view to_string(Rule rule);

struct BrokenRule {
  Rule rule = Rule::foreign_kernel;
  std::string message;              // the sentence for the model, naming what was seen
  std::vector<std::string> kernels; // foreign_kernel: the kernels, as CUPTI names them
};

// Whether CUPTI's kernel `name` is one of the candidate's functions (mangled or demangled SASS
// name of the evaluated arch); never without a report.
bool own_kernel(const std::string& name, const sass::ArchReport* own);

// Every distinct kernel name the evidence holds that is not one of the candidate's functions
// (mangled or demangled SASS names of the evaluated arch, or the evidence's cubin_functions
// when it has them), in first-seen order.
std::vector<std::string> foreign_kernels(const LaunchEvidence& evidence,
                                         const sass::ArchReport* own);

// A launched kernel whose name a loaded module other than the candidate's own cubins defines: a
// same-named kernel from elsewhere may have been the one that ran.
struct Impostor {
  std::string kernel;
  std::string module_sha256;
};

// The impostors among `kernels`, in their order; none without own_cubins.
std::vector<Impostor> impostor_kernels(const LaunchEvidence& evidence,
                                       const std::vector<std::string>& kernels);

// The kernel behind the profiled range at `index` (0-based, in the order CUPTI lists them) of
// the counting pass, whose name is `name`: CUPTI's auto ranges are named by a running number
// (which does not restart with every pass: a session opened ahead of the count has used some),
// so a numeric name stands for the launch at the same position in `launches`; any other name
// is taken as the kernel's own. Empty when there is no launch at that position.
std::string range_kernel(const std::string& name, std::size_t index,
                         const std::vector<std::string>& launches);

// The launches of the correctness call the counting pass is matched against (the last one:
// the repeat of the same inputs); empty without one.
const std::vector<std::string>& reference_launches(const LaunchEvidence& evidence);

// The first rule the evidence shows broken, in the order of the header; nullopt when none.
std::optional<BrokenRule> judge_launches(const LaunchEvidence& evidence,
                                         const sass::ArchReport* own);

} // namespace ptxbench::exec
