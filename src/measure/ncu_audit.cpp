// Parsing Nsight Compute's CSV source page.
//
// Layout (ncu 2025.3, `--page source --csv --print-source sass`): for each profiled kernel a
// line `"Kernel Name","<name>"`, then a header line whose first cells are "Address" and
// "Source", then one line per SASS instruction with numbers printed with thousands
// separators. The requested metrics are located by header name (the raw metric name or its
// label); inst_executed and thread_inst_executed_true fall back to the last two columns, which
// is where the paper's regex finds them on a page of those two, and thread_inst_executed is
// read only where its header names it (ncu_audit.hpp: predicated-on warp instructions).
// Opcodes are classified with the static analysis' family table (sass/families), so static and
// dynamic verdicts agree on what GMMA, TMA and TCGEN05 mean, and every opcode's executed count
// is kept, so the counter table (sass/counters.hpp) can sum, row by row, the opcodes its
// range-profiler metrics count.
#include "measure/ncu_audit.hpp"

#include "sass/families.hpp"
#include "util/strings.hpp"

#include <algorithm>
#include <charconv>
#include <fmt/format.h>

namespace ptxbench::measure {
namespace {

// Splits one CSV line with double-quoted cells ("" is a literal quote).
std::vector<std::string> csv_cells(std::string_view line) {
  std::vector<std::string> cells(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted && c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
      cells.back() += '"';
      ++i;
    } else if (c == '"') {
      quoted = !quoted;
    } else if (c == ',' && !quoted) {
      cells.emplace_back();
    } else if (c != '\r') {
      cells.back() += c;
    }
  }
  return cells;
}

std::uint64_t parse_count(std::string_view text) {
  std::string digits;
  for (char c : text)
    if (c >= '0' && c <= '9')
      digits += c;
    else if (c == '.')
      break;
  std::uint64_t value = 0;
  std::from_chars(digits.data(), digits.data() + digits.size(), value);
  return value;
}

std::string opcode_of(std::string_view source) {
  source = util::trim(source);
  if (!source.empty() && source.front() == '@') { // predicate, e.g. "@!P0"
    const auto space = source.find(' ');
    source = space == std::string_view::npos ? "" : util::trim(source.substr(space));
  }
  const auto end = source.find_first_of(" ;");
  return std::string(source.substr(0, end));
}

struct Columns {
  std::size_t source = 1, executed = 0, thread_true = 0;
  std::optional<std::size_t> thread_executed;
};

Columns find_columns(const std::vector<std::string>& header) {
  Columns columns;
  columns.executed = header.size() >= 2 ? header.size() - 2 : 0;
  columns.thread_true = header.size() >= 1 ? header.size() - 1 : 0;
  for (std::size_t i = 0; i < header.size(); ++i) {
    const std::string& name = header[i];
    if (name == "Source")
      columns.source = i;
    if (name == "inst_executed" || name == "Instructions Executed")
      columns.executed = i;
    if (name == "thread_inst_executed_true" || name == "Predicated-On Thread Instructions Executed")
      columns.thread_true = i;
    if (name == "thread_inst_executed" || name == "Thread Instructions Executed")
      columns.thread_executed = i;
  }
  return columns;
}

void add_to_families(const SassRow& row, FamilyTotals& totals) {
  const auto family = sass::classify(row.opcode);
  if (!family)
    return;
  const std::string_view root = sass::root_opcode(row.opcode);
  if (*family == sass::Family::gmma) {
    totals.gmma += row.executed;
    totals.gmma_thread_true += row.thread_true;
  } else if (*family == sass::Family::tma) {
    if (root == "UTMALDG")
      totals.tma_load += row.executed;
    if (root == "UTMASTG")
      totals.tma_store += row.executed;
    if (root == "UTMAREDG")
      totals.tma_reduce += row.executed;
    totals.tma_thread_true += row.thread_true;
  } else if (*family == sass::Family::tcgen05) {
    totals.tcgen05 += row.executed;
    totals.tcgen05_thread_true += row.thread_true;
  }
}

bool is_target(const std::string& opcode) {
  const auto family = sass::classify(opcode);
  return family && (*family == sass::Family::gmma || *family == sass::Family::tma ||
                    *family == sass::Family::tcgen05);
}

} // namespace

std::optional<double> SassRow::predicated_on() const {
  if (!thread_executed)
    return std::nullopt;
  if (*thread_executed == 0)
    return 0.0;
  // thread_true / (thread_executed / executed), in that order to keep integers exact.
  return static_cast<double>(thread_true) * static_cast<double>(executed) /
         static_cast<double>(*thread_executed);
}

namespace {

// A sum over rows that stays absent once one addend is.
std::optional<double> add_derived(std::uint64_t rows_before, std::optional<double> sum,
                                  std::optional<double> addend) {
  if (rows_before == 0)
    return addend;
  return sum && addend ? std::optional(*sum + *addend) : std::nullopt;
}

} // namespace

void OpcodeTotal::add(const SassRow& row) {
  executed += row.executed;
  thread_true += row.thread_true;
  predicated_on = add_derived(rows, predicated_on, row.predicated_on());
  ++rows;
}

void OpcodeTotal::add(const OpcodeTotal& other) {
  if (other.rows == 0)
    return;
  executed += other.executed;
  thread_true += other.thread_true;
  predicated_on = add_derived(rows, predicated_on, other.predicated_on);
  rows += other.rows;
}

std::vector<std::string> ncu_audit_command(const std::vector<std::string>& app_argv,
                                           const NcuAuditOptions& options) {
  std::vector<std::string> argv{options.ncu,
                                "--page",
                                "source",
                                "--print-source",
                                "sass",
                                "--csv",
                                "--nvtx",
                                "--nvtx-include",
                                options.nvtx_range + "/",
                                "--replay-mode",
                                options.replay == NcuReplay::application ? "application" : "kernel",
                                "--metrics",
                                options.thread_inst_executed
                                    ? "inst_executed,thread_inst_executed_true,thread_inst_executed"
                                    : "inst_executed,thread_inst_executed_true",
                                "--clock-control",
                                "none",
                                "-f"};
  argv.insert(argv.end(), app_argv.begin(), app_argv.end());
  return argv;
}

util::Expected<NcuAudit> parse_ncu_source_csv(std::string_view text) {
  NcuAudit audit;
  Columns columns;
  bool in_table = false;
  for (const std::string& line : util::split_lines(text)) {
    if (line.empty() || line.front() != '"')
      continue;
    const auto cells = csv_cells(line);
    if (cells.size() >= 2 && cells[0] == "Kernel Name") {
      audit.kernels.push_back(cells[1]);
      in_table = false;
    } else if (cells.size() >= 2 && cells[0] == "Address" && cells[1] == "Source") {
      columns = find_columns(cells);
      in_table = !audit.kernels.empty();
    } else if (in_table && cells.size() > std::max(columns.executed, columns.thread_true)) {
      SassRow row{audit.kernels.back(),
                  std::string(util::trim(cells[columns.source])),
                  opcode_of(cells[columns.source]),
                  parse_count(cells[columns.executed]),
                  parse_count(cells[columns.thread_true]),
                  std::nullopt};
      if (columns.thread_executed && *columns.thread_executed < cells.size())
        row.thread_executed = parse_count(cells[*columns.thread_executed]);
      ++audit.instruction_rows;
      add_to_families(row, audit.families);
      audit.opcodes[row.opcode].add(row);
      if (is_target(row.opcode))
        audit.rows.push_back(std::move(row));
    }
  }
  if (audit.kernels.empty() || audit.instruction_rows == 0)
    return util::make_error(util::ErrorKind::bad_response,
                            "ncu printed no source page (no kernel ran inside the NVTX range?)");
  return audit;
}

std::vector<CounterTotal> counter_totals(const NcuAudit& audit, const sass::ArchCounters& table) {
  std::vector<CounterTotal> out;
  for (const sass::CounterRow& row : table.rows) {
    CounterTotal& counted = out.emplace_back(CounterTotal{&row, {}});
    for (const auto& [opcode, total] : audit.opcodes) {
      if (!sass::counts_opcode(row, opcode))
        continue;
      counted.total.add(total);
    }
  }
  return out;
}

util::Expected<NcuAudit> run_ncu_audit(util::ProcessRunner& runner,
                                       const std::vector<std::string>& app_argv,
                                       const NcuAuditOptions& options) {
  util::ProcessOptions process;
  process.timeout = options.timeout;
  process.extra_env = options.env;
  PTXBENCH_TRY_ASSIGN(auto result, runner.run(ncu_audit_command(app_argv, options), process));
  if (!result.timed_out && !result.succeeded() && options.thread_inst_executed) {
    NcuAuditOptions paper = options;
    paper.thread_inst_executed = false;
    PTXBENCH_TRY_ASSIGN(auto again, runner.run(ncu_audit_command(app_argv, paper), process));
    if (again.timed_out || again.succeeded())
      result = std::move(again);
  }
  if (result.timed_out)
    return util::make_error(util::ErrorKind::timeout, "ncu audit passed its deadline");
  if (!result.succeeded())
    return util::make_error(util::ErrorKind::subprocess,
                            fmt::format("ncu exited with {}: {}", result.exit_code,
                                        util::head_lines(result.err + result.out, 20)));
  auto audit = parse_ncu_source_csv(result.out);
  if (audit)
    audit->wall_ms = static_cast<double>(result.elapsed.count());
  return audit;
}

} // namespace ptxbench::measure
