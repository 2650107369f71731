// The paper's dynamic verification, reproduced out of process: Nsight Compute's source page
// with per-instruction executed counts for the kernels inside one NVTX range of a program.
#pragma once

#include "sass/counters.hpp"
#include "util/error.hpp"
#include "util/subprocess.hpp"

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ptxbench::measure {

enum class NcuReplay : std::uint8_t { application = 1, kernel = 2 };

struct NcuAuditOptions {
  std::string ncu = "ncu";                  // executable (PATH lookup by the runner)
  std::string nvtx_range = "ptxbench_eval"; // push/pop range around the audited call
  NcuReplay replay = NcuReplay::application;
  std::chrono::milliseconds timeout{std::chrono::minutes(10)};
  std::vector<std::string> env; // NAME=value added to the audited program's environment
  // Also ask for thread_inst_executed (SassRow::predicated_on). run_ncu_audit asks again without
  // it when an ncu refuses the three metrics.
  bool thread_inst_executed = true;
};

// One SASS instruction row of the source page.
//
// Predicated-on warp instructions. `inst_executed` counts a warp's instruction whatever its
// guard predicate; the range profiler's `smsp__sass_inst_executed_op_*` metrics count only the
// warp instructions whose predicate was on (a Triton GEMM issues each UTMALDG from all its warps
// under a uniform predicate on in one of them; bench/results/counting_h200.md has the H200
// figures). The source page has no warp-level predicated-on count, but
// with `thread_inst_executed` beside `thread_inst_executed_true` it can be derived: a row whose
// executions all had the same number of active threads a = thread_inst_executed / inst_executed
// ran thread_inst_executed_true / a of them predicated on. Exact for the usual issue patterns (one
// elected thread in a branch: a = 1; a whole warp under a uniform predicate: a = 32); an
// estimate when a row's active-thread count varied.
struct SassRow {
  std::string kernel;
  std::string source;            // the SASS text, e.g. "HGMMA.64x128x16.F32.BF16 R24, …"
  std::string opcode;            // with modifiers, predicate removed
  std::uint64_t executed = 0;    // inst_executed (warp instructions)
  std::uint64_t thread_true = 0; // thread_inst_executed_true (predicated-on thread instructions)
  // thread_inst_executed (active thread instructions, whatever the predicate); absent on a page
  // printed without it.
  std::optional<std::uint64_t> thread_executed;

  // Predicated-on warp instructions (above); absent without thread_inst_executed.
  std::optional<double> predicated_on() const;
};

// Executed warp instructions per family; `*_thread_true` > 0 is the paper's "executed" test.
struct FamilyTotals {
  std::uint64_t gmma = 0, gmma_thread_true = 0;
  std::uint64_t tma_load = 0, tma_store = 0, tma_reduce = 0, tma_thread_true = 0;
  std::uint64_t tcgen05 = 0, tcgen05_thread_true = 0;
};

// Executed warp instructions and predicated-on thread instructions of one opcode (or of the
// opcodes of one counter row), and the predicated-on warp instructions summed over its rows:
// absent when no row was added or one of them lacked them.
struct OpcodeTotal {
  std::uint64_t executed = 0;
  std::uint64_t thread_true = 0;
  std::optional<double> predicated_on;
  std::uint64_t rows = 0; // SASS rows added

  void add(const SassRow& row);
  void add(const OpcodeTotal& other);
};

struct NcuAudit {
  std::vector<std::string> kernels;
  std::vector<SassRow> rows; // only rows with a target-family opcode are kept
  std::size_t instruction_rows = 0;
  FamilyTotals families;
  std::map<std::string, OpcodeTotal> opcodes; // every opcode (with modifiers) of the page
  double wall_ms = 0.0;
};

// One row of the counter table (sass/counters.hpp) as the source page counts it: the sum over
// the row's opcodes, to be compared with the row's metric from the range profiler.
struct CounterTotal {
  const sass::CounterRow* row = nullptr;
  OpcodeTotal total;
};
std::vector<CounterTotal> counter_totals(const NcuAudit& audit, const sass::ArchCounters& table);

// `ncu --page source --print-source sass --csv --nvtx --nvtx-include <range>/ --replay-mode
// application --metrics inst_executed,thread_inst_executed_true[,thread_inst_executed]
// --clock-control none … argv`.
std::vector<std::string> ncu_audit_command(const std::vector<std::string>& app_argv,
                                           const NcuAuditOptions& options);

// Parses the CSV source page (lines not starting with '"' are ncu or program chatter).
// `bad_response` when no kernel or no instruction row is found.
util::Expected<NcuAudit> parse_ncu_source_csv(std::string_view text);

// Runs the command; a failing ncu is `subprocess` (its stderr tail in the message), a
// deadline `timeout`. When ncu fails with thread_inst_executed asked for, it runs once more
// without it (the paper's two metrics): the audit then compares every warp instruction.
util::Expected<NcuAudit> run_ncu_audit(util::ProcessRunner& runner,
                                       const std::vector<std::string>& app_argv,
                                       const NcuAuditOptions& options);

} // namespace ptxbench::measure
