#include "exec/launch_rules.hpp"

#include "util/stats.hpp"

#include <algorithm>
#include <fmt/format.h>

namespace ptxbench::exec {
namespace {

std::vector<std::string> sorted(std::vector<std::string> names) {
  std::sort(names.begin(), names.end());
  return names;
}

void add_unique(std::vector<std::string>& names, const std::string& name) {
  if (std::find(names.begin(), names.end(), name) == names.end())
    names.push_back(name);
}

std::string list_text(const std::vector<std::string>& kernels) {
  if (kernels.empty())
    return "no kernel";
  std::string out;
  for (const std::string& k : kernels)
    out += (out.empty() ? "" : ", ") + k;
  return "[" + out + "]";
}

// The kernels the correctness calls after the first launched, when they agree; nullopt when
// there is no such call or they disagree among themselves (then `why` says how).
std::optional<std::vector<std::string>> settled_kernels(const LaunchEvidence& evidence,
                                                        std::string& why) {
  std::optional<std::vector<std::string>> settled;
  for (std::size_t i = 1; i < evidence.correctness.size(); ++i) {
    const TracedCall& call = evidence.correctness[i];
    auto kernels = sorted(call.launches);
    if (!settled) {
      settled = std::move(kernels);
    } else if (kernels != *settled) {
      why = fmt::format("the {} on input set {} launched {}, the correctness calls before it {}",
                        call.repeat ? "repeated call (the same inputs again)" : "call", call.set,
                        list_text(kernels), list_text(*settled));
      return std::nullopt;
    }
  }
  return settled;
}

std::optional<BrokenRule> inconsistent(std::string message) {
  return BrokenRule{Rule::inconsistent_work,
                    "the candidate's work differs between calls (same shapes, other or the same "
                    "input values): " +
                        std::move(message) +
                        ". Every call must compute its outputs from its inputs (no skipped, "
                        "cached or replayed results)",
                    {}};
}

// The median CUPTI latency of the first-sight correctness calls after the first call; none
// with a single input set (the process's first call can carry lazy module loading between its
// launches: 12.9 ms against 8.5 ms for the MHA backward's later calls on an H200).
std::optional<double> first_sight_ms(const LaunchEvidence& evidence) {
  std::vector<double> latencies;
  for (std::size_t i = 1; i < evidence.correctness.size(); ++i) {
    const TracedCall& call = evidence.correctness[i];
    if (!call.repeat && call.latency_ms)
      latencies.push_back(*call.latency_ms);
  }
  if (latencies.empty())
    return std::nullopt;
  return util::median(latencies);
}

std::optional<BrokenRule> judge_consistency(const LaunchEvidence& evidence) {
  if (!evidence.late_cubins.empty())
    return inconsistent(fmt::format("Triton compiled {} kernel binary(ies) after the warm-up "
                                    "call ({}): a kernel specialised anew inside a traced or "
                                    "timed call (a constexpr or shape that changes between calls)",
                                    evidence.late_cubins.size(), list_text(evidence.late_cubins)));
  std::string why;
  const auto settled = settled_kernels(evidence, why);
  if (!settled)
    return why.empty() ? std::nullopt : inconsistent(why);
  if (evidence.counted_launches && *evidence.counted_launches != settled->size())
    return inconsistent(
        fmt::format("the counting pass's call on input set 0 launched {} kernel(s), "
                    "the correctness calls {} ({})",
                    *evidence.counted_launches, settled->size(), list_text(*settled)));
  int timed_calls = 0;
  for (const protocol::KernelSet& set : evidence.timed)
    timed_calls += set.calls;
  for (const protocol::KernelSet& set : evidence.timed)
    if (set.kernels != *settled)
      return inconsistent(fmt::format("{} of the {} timed calls launched {}, the correctness calls "
                                      "{}",
                                      set.calls, timed_calls, list_text(set.kernels),
                                      list_text(*settled)));
  const auto reference_ms = first_sight_ms(evidence);
  for (const TracedCall& call : evidence.correctness)
    if (call.repeat && reference_ms && call.latency_ms && *reference_ms > 0 &&
        *call.latency_ms < kReplayRatio * *reference_ms)
      return inconsistent(fmt::format("the repeated call (the same inputs again) took {:.4f} ms, "
                                      "under {:.0f} % of the {:.4f} ms the call took on inputs it "
                                      "saw for the first time",
                                      *call.latency_ms, 100 * kReplayRatio, *reference_ms));
  if (reference_ms && evidence.timed_ms && *reference_ms > 0 &&
      *evidence.timed_ms < kReplayRatio * *reference_ms)
    return inconsistent(fmt::format("the timed calls took {:.4f} ms, under {:.0f} % of the {:.4f} "
                                    "ms the same call took on inputs it saw for the first time",
                                    *evidence.timed_ms, 100 * kReplayRatio, *reference_ms));
  return std::nullopt;
}

} // namespace

bool own_kernel(const std::string& name, const sass::ArchReport* own) {
  if (own == nullptr)
    return false;
  return std::any_of(own->functions.begin(), own->functions.end(), [&](const auto& f) {
    return f.mangled_name == name || f.demangled_name == name;
  });
}

std::string range_kernel(const std::string& name, std::size_t index,
                         const std::vector<std::string>& launches) {
  const bool number = !name.empty() && std::all_of(name.begin(), name.end(),
                                                   [](char c) { return c >= '0' && c <= '9'; });
  if (!number)
    return name;
  return index < launches.size() ? launches[index] : std::string();
}

const std::vector<std::string>& reference_launches(const LaunchEvidence& evidence) {
  static const std::vector<std::string> none;
  return evidence.correctness.empty() ? none : evidence.correctness.back().launches;
}

void LaunchEvidence::add_timed(const std::vector<protocol::KernelSet>& sets) {
  for (const protocol::KernelSet& set : sets) {
    auto same = std::find_if(timed.begin(), timed.end(), [&](const protocol::KernelSet& known) {
      return known.kernels == set.kernels;
    });
    if (same == timed.end())
      timed.push_back(set);
    else
      same->calls += set.calls;
  }
}

std::string_view to_string(Rule rule) {
  return kRules[static_cast<std::size_t>(rule) - 1].name;
}

namespace {

std::vector<std::string> launched_kernels(const LaunchEvidence& evidence) {
  std::vector<std::string> all;
  for (const TracedCall& call : evidence.correctness)
    for (const std::string& k : call.launches)
      add_unique(all, k);
  for (const protocol::KernelSet& set : evidence.timed)
    for (const std::string& k : set.kernels)
      add_unique(all, k);
  for (const std::string& k : evidence.counted)
    add_unique(all, k);
  return all;
}

} // namespace

std::vector<std::string> foreign_kernels(const LaunchEvidence& evidence,
                                         const sass::ArchReport* own) {
  std::vector<std::string> foreign;
  const auto& cubin = evidence.cubin_functions;
  for (const std::string& k : launched_kernels(evidence))
    if (cubin ? std::find(cubin->begin(), cubin->end(), k) == cubin->end() : !own_kernel(k, own))
      foreign.push_back(k);
  return foreign;
}

std::vector<Impostor> impostor_kernels(const LaunchEvidence& evidence,
                                       const std::vector<std::string>& kernels) {
  std::vector<Impostor> impostors;
  if (!evidence.own_cubins)
    return impostors;
  const std::vector<std::string>& own = *evidence.own_cubins;
  for (const std::string& k : kernels)
    for (const protocol::ModuleSeen& module : evidence.modules) {
      const bool defines =
          std::find(module.functions.begin(), module.functions.end(), k) != module.functions.end();
      if (defines && std::find(own.begin(), own.end(), module.sha256) == own.end()) {
        impostors.push_back({k, module.sha256});
        break;
      }
    }
  return impostors;
}

std::optional<BrokenRule> judge_launches(const LaunchEvidence& evidence,
                                         const sass::ArchReport* own) {
  if (!evidence.refused.empty()) {
    std::vector<std::string> names;
    for (const std::string& name : evidence.refused)
      add_unique(names, name);
    return BrokenRule{Rule::runtime_loading,
                      fmt::format("banned-library rule: the candidate asked the CUDA runtime for "
                                  "the driver function(s) {} at run time; loading or linking GPU "
                                  "code at run time is not allowed (the lookups were refused)",
                                  list_text(names)),
                      {}};
  }
  if (auto foreign = foreign_kernels(evidence, own); !foreign.empty())
    return BrokenRule{Rule::foreign_kernel,
                      fmt::format("banned-library rule: {} kernel(s) ran inside the candidate's "
                                  "calls that are not {}: {}. Only the candidate's "
                                  "own kernels may compute the result (cuBLAS, cuDNN and other "
                                  "libraries are not allowed, however they are reached{})",
                                  foreign.size(),
                                  evidence.cubin_functions ? "kernels Triton compiled for it"
                                                           : "in its kernel.so",
                                  list_text(foreign),
                                  evidence.cubin_functions ? "; torch operations launch them" : ""),
                      foreign};
  if (auto impostors = impostor_kernels(evidence, launched_kernels(evidence)); !impostors.empty()) {
    std::vector<std::string> kernels, described;
    for (const Impostor& i : impostors) {
      kernels.push_back(i.kernel);
      described.push_back(
          fmt::format("{} (also in module sha256:{}…)", i.kernel, i.module_sha256.substr(0, 16)));
    }
    return BrokenRule{Rule::foreign_kernel,
                      fmt::format("banned-library rule: {} kernel(s) that ran inside the "
                                  "candidate's calls are defined by a module that is not one of "
                                  "its own cubins: {}. Only code the candidate's binary holds may "
                                  "run; a module loaded at run time, however it was reached, is "
                                  "not allowed",
                                  impostors.size(), list_text(described)),
                      kernels};
  }
  return judge_consistency(evidence);
}

} // namespace ptxbench::exec
