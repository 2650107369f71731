// Human rendering of a StaticReport: one aligned table per arch (function rows, a column per
// target family and per informational family that occurs in that arch), then the caveat.
#include "sass/report.hpp"

#include <algorithm>
#include <fmt/format.h>

namespace ptxbench::sass {
namespace {

struct Column {
  std::string header;
  std::vector<std::string> cells; // one per function row, then the total row
  std::size_t width = 0;
};

std::vector<Family> shown_families(const ArchReport& arch) {
  std::vector<Family> out = arch.target_families;
  for (const FamilyInfo& row : kFamilies) {
    const bool is_target = std::find(out.begin(), out.end(), row.family) != out.end();
    if (!is_target && arch.totals[index_of(row.family)] > 0)
      out.push_back(row.family);
  }
  return out;
}

std::vector<Column> build_columns(const ArchReport& arch) {
  std::vector<Column> columns(1);
  columns[0].header = "function";
  Column instructions{"instructions", {}, 0};
  std::size_t total = 0;
  for (const FunctionReport& function : arch.functions) {
    columns[0].cells.push_back(function.demangled_name);
    instructions.cells.push_back(std::to_string(function.instruction_count));
    total += function.instruction_count;
  }
  columns[0].cells.emplace_back("(all functions)");
  instructions.cells.push_back(std::to_string(total));
  columns.push_back(std::move(instructions));
  for (Family family : shown_families(arch)) {
    Column column{std::string(to_string(family)), {}, 0};
    for (const FunctionReport& function : arch.functions)
      column.cells.push_back(std::to_string(function.families[index_of(family)]));
    column.cells.push_back(std::to_string(arch.totals[index_of(family)]));
    columns.push_back(std::move(column));
  }
  for (Column& column : columns) {
    column.width = column.header.size();
    for (const std::string& cell : column.cells)
      column.width = std::max(column.width, cell.size());
  }
  return columns;
}

// The first column is left-aligned (names), the others right-aligned (counts).
std::string table_row(const std::vector<Column>& columns, std::size_t row) {
  std::string line = "  ";
  for (std::size_t i = 0; i < columns.size(); ++i) {
    const std::string& text = row == 0 ? columns[i].header : columns[i].cells[row - 1];
    line += i == 0 ? fmt::format("{:<{}}", text, columns[i].width)
                   : fmt::format("  {:>{}}", text, columns[i].width);
  }
  while (!line.empty() && line.back() == ' ')
    line.pop_back();
  return line + "\n";
}

std::string render_arch(const ArchReport& arch) {
  std::string targets;
  for (Family family : arch.target_families)
    targets += (targets.empty() ? "" : ", ") + std::string(to_string(family));
  std::string out = fmt::format("arch {}: {} (target families: {})\n", arch.arch,
                                to_string(arch.verdict), targets.empty() ? "none" : targets);
  for (const FunctionReport& function : arch.functions) {
    if (std::find(arch.target_functions.begin(), arch.target_functions.end(),
                  function.mangled_name) != arch.target_functions.end())
      out += "  target instructions in: " + function.demangled_name + "\n";
  }
  const std::vector<Column> columns = build_columns(arch);
  for (std::size_t row = 0; row <= arch.functions.size() + 1; ++row)
    out += table_row(columns, row);
  return out;
}

} // namespace

std::string render_text(const StaticReport& report) {
  std::string out = "binary sha256: " + report.binary_sha256 + "\n";
  if (report.arches.empty())
    out += "no device code\n";
  for (const ArchReport& arch : report.arches)
    out += "\n" + render_arch(arch);
  // The caveat speaks of instructions that are in the binary: only a present verdict has them.
  const bool any_present =
      std::any_of(report.arches.begin(), report.arches.end(),
                  [](const ArchReport& a) { return a.verdict == Verdict::present; });
  if (any_present)
    out += "\nnote: " + std::string(kStaticCaveat) + "\n";
  return out;
}

} // namespace ptxbench::sass
