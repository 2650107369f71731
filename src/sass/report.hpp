// The static target-instruction report of one binary: per arch and per function, an opcode
// histogram and family counts, and per arch the static verdict.
//
// Verdict rule (the paper's static stage): an arch-specific Hopper cubin (sm_90a) is `present`
// iff any of its functions holds a GMMA or TMA instruction; a Blackwell cubin (sm_100a and the
// other tcgen05-capable targets) iff any holds a TCGEN05 instruction; otherwise `absent`. A
// cubin for an arch without a rule (sm_80, plain sm_90, ...) is `no_rule`. This is only the
// static half: dead code and kernels that are never launched look exactly like executed code,
// which is why every report carries kStaticCaveat. Output is deterministic: arches and
// functions sorted by name, histograms sorted by opcode, families in table order.
#pragma once

#include "sass/disassemble.hpp"
#include "sass/families.hpp"
#include "util/enum_table.hpp"

#include <array>
#include <cstddef>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace ptxbench::sass {

inline constexpr std::string_view kStaticCaveat =
    "static verdict: the instructions are in the binary; whether they execute needs the GPU "
    "evaluator (dead code and never-launched kernels look the same here)";

inline constexpr int kReportSchemaVersion = 1;

// Persisted: values are explicit and never reused.
enum class Verdict : std::uint8_t {
  present = 1,
  absent = 2,
  no_rule = 3, // no target rule for this arch
};

struct VerdictInfo {
  Verdict verdict;
  std::string_view name;
};

inline constexpr std::array kVerdicts{
    VerdictInfo{Verdict::present, "present"},
    VerdictInfo{Verdict::absent, "absent"},
    VerdictInfo{Verdict::no_rule, "no_rule"},
};

consteval bool verdicts_complete() {
  for (std::size_t i = 0; i < kVerdicts.size(); ++i) {
    if (static_cast<std::size_t>(kVerdicts[i].verdict) != i + 1)
      return false;
  }
  return true;
}
static_assert(verdicts_complete(), "kVerdicts must list every Verdict in value order");
static_assert(util::no_enumerator_after<Verdict, kVerdicts.size()>(),
              "kVerdicts lacks a row for an enumerator after its last");

constexpr std::string_view to_string(Verdict verdict) {
  return kVerdicts[static_cast<std::size_t>(verdict) - 1].name;
}

// Indexed by index_of(Family).
using FamilyCounts = std::array<std::size_t, kFamilyCount>;

struct FunctionReport {
  std::string mangled_name;
  std::string demangled_name;
  std::size_t instruction_count = 0;
  std::map<std::string, std::size_t> opcodes; // root opcode -> count
  FamilyCounts families{};
};

struct ArchReport {
  std::string arch;
  Verdict verdict = Verdict::no_rule;
  std::vector<Family> target_families;       // empty for no_rule
  std::vector<std::string> target_functions; // mangled names holding a target family
  FamilyCounts totals{};
  std::vector<FunctionReport> functions;
};

struct StaticReport {
  std::string binary_sha256;
  std::vector<ArchReport> arches;
};

// The families whose presence makes `arch` present; empty when the arch has no rule.
std::vector<Family> target_families_for(std::string_view arch);

StaticReport build_report(const Disassembly& disassembly, std::string binary_sha256);

// Hashes and disassembles `binary`, then builds its report.
util::Expected<StaticReport> analyze_binary(const Disassembler& disassembler,
                                            const std::filesystem::path& binary);

// The disassemblies of several binaries as one: every function in input order, the arches in
// first-seen order without repeats. A Triton evaluation builds one cubin per kernel it compiled.
Disassembly merge_disassemblies(std::vector<Disassembly> parts);

// analyze_binary over several binaries, reported as one. Its hash is the SHA-256 of the parts'
// hashes in the order given, so the same cubins in the same order give the same report.
util::Expected<StaticReport> analyze_binaries(const Disassembler& disassembler,
                                              const std::vector<std::filesystem::path>& binaries);

// nullptr when the binary has no cubin for `arch`.
const ArchReport* find_arch(const StaticReport& report, std::string_view arch);

nlohmann::ordered_json to_json(const StaticReport& report);
std::string render_text(const StaticReport& report);

} // namespace ptxbench::sass
