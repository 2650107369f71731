#include "sass/counters.hpp"

#include <fmt/format.h>

namespace ptxbench::sass {

const ArchCounters* counters_for(std::string_view arch) {
  if (arch == "sm_100f")
    arch = "sm_100a";
  for (const ArchCounters& row : kArchCounters)
    if (row.arch == arch)
      return &row;
  return nullptr;
}

const ArchCounters* counters_for_compute_capability(int major, int minor) {
  for (const ArchCounters& row : kArchCounters)
    if (row.cc_major == major && row.cc_minor == minor)
      return &row;
  return nullptr;
}

std::vector<std::string> metric_names(const ArchCounters& arch) {
  std::vector<std::string> out;
  for (const CounterRow& row : arch.rows)
    out.emplace_back(row.metric);
  out.emplace_back(arch.flop_metric);
  return out;
}

bool counts_opcode(const CounterRow& row, std::string_view opcode) {
  for (std::string_view prefix : row.opcodes) {
    if (prefix.empty() || !opcode.starts_with(prefix))
      continue;
    if (opcode.size() == prefix.size() || opcode[prefix.size()] == '.')
      return true;
  }
  return false;
}

std::string render_counters(const ArchCounters& arch) {
  std::string out = fmt::format("# {} (compute capability {}.{}, chip {}): {}\n", arch.arch,
                                arch.cc_major, arch.cc_minor, arch.chip, to_string(arch.run));
  for (const CounterRow& row : arch.rows) {
    std::string opcodes;
    for (std::string_view prefix : row.opcodes)
      if (!prefix.empty())
        opcodes += fmt::format("{}{}", opcodes.empty() ? "" : ",", prefix);
    out += fmt::format("{:<12} {:<8} {:<48} {:<32} {}\n", row.key, to_string(row.family),
                       row.metric, opcodes, to_string(row.match));
  }
  out += fmt::format("{:<12} {:<8} {}\n", "flops", "-", arch.flop_metric);
  return out;
}

} // namespace ptxbench::sass
