#include "sass/report.hpp"

#include "util/fs.hpp"
#include "util/hash.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <iterator>

namespace ptxbench::sass {
namespace {

struct ArchRule {
  std::string_view arch;
  FamilyRole target_role;
};

// Arch-specific targets only: wgmma needs sm_90a, tcgen05 needs sm_100a/f or sm_103a/f.
constexpr std::array kArchRules{
    ArchRule{"sm_90a", FamilyRole::hopper_target},
    ArchRule{"sm_100a", FamilyRole::blackwell_target},
    ArchRule{"sm_100f", FamilyRole::blackwell_target},
    ArchRule{"sm_103a", FamilyRole::blackwell_target},
    ArchRule{"sm_103f", FamilyRole::blackwell_target},
};

FunctionReport summarize(const Function& function) {
  FunctionReport out{
      function.mangled_name, function.demangled_name, function.instructions.size(), {}, {}};
  for (const Instruction& insn : function.instructions) {
    ++out.opcodes[insn.root];
    if (const std::optional<Family> family = classify(insn.opcode))
      ++out.families[index_of(*family)];
  }
  return out;
}

bool holds_any(const FamilyCounts& counts, const std::vector<Family>& families) {
  return std::any_of(families.begin(), families.end(),
                     [&](Family family) { return counts[index_of(family)] > 0; });
}

ArchReport summarize_arch(const Disassembly& disassembly, const std::string& arch) {
  ArchReport out;
  out.arch = arch;
  out.target_families = target_families_for(arch);
  for (const Function& function : disassembly.functions) {
    if (function.arch == arch)
      out.functions.push_back(summarize(function));
  }
  std::stable_sort(out.functions.begin(), out.functions.end(),
                   [](const FunctionReport& a, const FunctionReport& b) {
                     return a.mangled_name < b.mangled_name;
                   });
  for (const FunctionReport& function : out.functions) {
    for (std::size_t i = 0; i < kFamilyCount; ++i)
      out.totals[i] += function.families[i];
    if (holds_any(function.families, out.target_families))
      out.target_functions.push_back(function.mangled_name);
  }
  if (out.target_families.empty())
    out.verdict = Verdict::no_rule;
  else
    out.verdict = holds_any(out.totals, out.target_families) ? Verdict::present : Verdict::absent;
  return out;
}

nlohmann::ordered_json families_json(const FamilyCounts& counts, bool include_zero) {
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  for (const FamilyInfo& row : kFamilies) {
    const std::size_t count = counts[index_of(row.family)];
    if (include_zero || count > 0)
      out[std::string(row.name)] = count;
  }
  return out;
}

nlohmann::ordered_json function_json(const FunctionReport& function) {
  nlohmann::ordered_json out;
  out["mangled_name"] = function.mangled_name;
  out["demangled_name"] = function.demangled_name;
  out["instruction_count"] = function.instruction_count;
  out["families"] = families_json(function.families, false);
  nlohmann::ordered_json opcodes = nlohmann::ordered_json::object();
  for (const auto& [root, count] : function.opcodes)
    opcodes[root] = count;
  out["opcodes"] = std::move(opcodes);
  return out;
}

nlohmann::ordered_json arch_json(const ArchReport& arch) {
  nlohmann::ordered_json out;
  out["arch"] = arch.arch;
  out["verdict"] = std::string(to_string(arch.verdict));
  nlohmann::ordered_json targets = nlohmann::ordered_json::array();
  for (Family family : arch.target_families)
    targets.push_back(std::string(to_string(family)));
  out["target_families"] = std::move(targets);
  out["target_functions"] = arch.target_functions;
  out["family_totals"] = families_json(arch.totals, true);
  nlohmann::ordered_json functions = nlohmann::ordered_json::array();
  for (const FunctionReport& function : arch.functions)
    functions.push_back(function_json(function));
  out["functions"] = std::move(functions);
  return out;
}

} // namespace

std::vector<Family> target_families_for(std::string_view arch) {
  std::vector<Family> out;
  for (const ArchRule& rule : kArchRules) {
    if (rule.arch != arch)
      continue;
    for (const FamilyInfo& row : kFamilies) {
      if (row.role == rule.target_role)
        out.push_back(row.family);
    }
  }
  return out;
}

StaticReport build_report(const Disassembly& disassembly, std::string binary_sha256) {
  StaticReport report{std::move(binary_sha256), {}};
  std::vector<std::string> arches = disassembly.arches;
  std::sort(arches.begin(), arches.end());
  for (const std::string& arch : arches)
    report.arches.push_back(summarize_arch(disassembly, arch));
  return report;
}

util::Expected<StaticReport> analyze_binary(const Disassembler& disassembler,
                                            const std::filesystem::path& binary) {
  PTXBENCH_TRY_ASSIGN(Disassembly disassembly, disassembler.disassemble(binary));
  PTXBENCH_TRY_ASSIGN(std::string content, util::read_file(binary));
  return build_report(disassembly, util::sha256_hex(content));
}

Disassembly merge_disassemblies(std::vector<Disassembly> parts) {
  Disassembly merged;
  for (Disassembly& part : parts) {
    for (std::string& arch : part.arches) {
      if (std::find(merged.arches.begin(), merged.arches.end(), arch) == merged.arches.end())
        merged.arches.push_back(std::move(arch));
    }
    std::move(part.functions.begin(), part.functions.end(), std::back_inserter(merged.functions));
  }
  return merged;
}

util::Expected<StaticReport> analyze_binaries(const Disassembler& disassembler,
                                              const std::vector<std::filesystem::path>& binaries) {
  std::vector<Disassembly> parts;
  std::string hashes;
  for (const std::filesystem::path& binary : binaries) {
    PTXBENCH_TRY_ASSIGN(Disassembly disassembly, disassembler.disassemble(binary));
    PTXBENCH_TRY_ASSIGN(std::string content, util::read_file(binary));
    parts.push_back(std::move(disassembly));
    hashes += util::sha256_hex(content);
  }
  return build_report(merge_disassemblies(std::move(parts)), util::sha256_hex(hashes));
}

const ArchReport* find_arch(const StaticReport& report, std::string_view arch) {
  for (const ArchReport& candidate : report.arches) {
    if (candidate.arch == arch)
      return &candidate;
  }
  return nullptr;
}

nlohmann::ordered_json to_json(const StaticReport& report) {
  nlohmann::ordered_json out;
  out["schema_version"] = kReportSchemaVersion;
  out["binary_sha256"] = report.binary_sha256;
  nlohmann::ordered_json arches = nlohmann::ordered_json::array();
  for (const ArchReport& arch : report.arches)
    arches.push_back(arch_json(arch));
  out["arches"] = std::move(arches);
  out["caveat"] = std::string(kStaticCaveat);
  return out;
}

} // namespace ptxbench::sass
