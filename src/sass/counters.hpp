// Per architecture, the hardware counters that prove a family of target instructions executed:
// the one table the in-process counter (measure::InstructionCounter), the ncu audit
// (measure/ncu_audit, exec/tool_passes) and the dynamic verdict (exec/dynamic_report) read.
//
// A row is one counted quantity: a metric that the CUPTI range profiler and `ncu --metrics`
// both accept, the family its executed warp instructions are credited to, and the SASS opcodes
// whose rows on ncu's source page count the same instructions. The audit sums those rows and
// compares the sum with the metric's value: `exact` where the two were measured equal on the
// architecture's GPU, `presence` (both zero or both non-zero) where the counting rules differ or
// were never compared. Each architecture also names the metric of its tensor-path FLOPs for
// bf16 inputs and fp32 accumulation, which equals 2·M·N·K for a GEMM done on tensor cores.
//
// Sources: metric names and meanings from NVIDIA's tools (`ncu --query-metrics --chips gh100 /
// gb100`, ncu 2025.3.1; CUPTI's SASS metric descriptions), the Hopper rows measured on an H200
// (bench/results/eval_tools_h200.md, counter_session_h200.md). The Blackwell rows have never
// run (no B200 here): `run == not_run`, and every one of them compares presence only.
#pragma once

#include "sass/families.hpp"

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ptxbench::sass {

// How ncu's source-page count of a row's opcodes is compared with the row's metric.
enum class AuditMatch : std::uint8_t {
  exact = 1,    // equal warp-instruction counts (measured so)
  presence = 2, // both zero or both non-zero: other counting rule, or never compared
};

struct CounterRow {
  std::string_view key; // JSON key in the audit ("gmma", "tma_load", …); unique per arch
  Family family;        // the family whose executed count the metric adds to
  std::string_view metric;
  // Opcode prefixes: a prefix matches an opcode equal to it or continuing with '.', so
  // "UBLKCP.S.G" matches "UBLKCP.S.G" but not "UBLKCP.G.S"; "" marks an unused slot.
  std::array<std::string_view, 4> opcodes;
  AuditMatch match;
  std::string_view proves; // what a non-zero value proves, and the source
};

// Whether an architecture's counters have run on its GPU (shown in the golden lists and docs).
enum class CountersRun : std::uint8_t { measured = 1, not_run = 2 };

struct ArchCounters {
  std::string_view arch; // the cubin target ("sm_90a")
  int cc_major = 0;      // the compute capability of the GPUs it runs on
  int cc_minor = 0;
  std::string_view chip; // CUPTI's chip name
  std::span<const CounterRow> rows;
  std::string_view flop_metric; // tensor-path FLOPs, bf16 inputs, fp32 accumulation
  CountersRun run;
  std::string_view evidence; // where it ran, or why it has not
};

inline constexpr std::array kHopperCounters{
    CounterRow{"gmma",
               Family::gmma,
               "smsp__sass_inst_executed_op_shared_gmma.sum",
               {"HGMMA", "IGMMA", "QGMMA", "BGMMA"},
               AuditMatch::exact,
               "wgmma.mma_async executed (CUPTI: HGMMA, IGMMA, QGMMA, BGMMA); equal to ncu's "
               "HGMMA rows on an H200"},
    CounterRow{"tma_load",
               Family::tma,
               "smsp__sass_inst_executed_op_tma_ld.sum",
               {"UTMALDG", "UBLKCP.S.G", "", ""},
               AuditMatch::exact,
               "cp.async.bulk.tensor loads executed (CUPTI: UTMALDG, UBLKCP.S.G); equal to ncu's "
               "UTMALDG rows on an H200"},
    CounterRow{"tma_store",
               Family::tma,
               "smsp__sass_inst_executed_op_tma_st.sum",
               {"UTMASTG", "UBLKCP.G.S", "", ""},
               AuditMatch::presence,
               "cp.async.bulk.tensor stores executed (CUPTI: UTMASTG, UBLKCP.G.S); a quarter "
               "of ncu's UTMASTG rows on an H200 (reference/measurement.md 4.3)"},
    CounterRow{"tma_reduce",
               Family::tma,
               "smsp__sass_inst_executed_op_tma_red.sum",
               {"UTMAREDG", "UBLKRED.G.S", "", ""},
               AuditMatch::presence,
               "cp.reduce.async.bulk.tensor executed (CUPTI: UTMAREDG, UBLKRED.G.S); never "
               "compared with ncu on a non-zero count"},
};

inline constexpr std::array kBlackwellCounters{
    CounterRow{"tcgen05_mma",
               Family::tcgen05,
               "smsp__sass_inst_executed_op_utcmma.sum",
               {"UTCHMMA", "UTCQMMA", "UTCIMMA", "UTCOMMA"},
               AuditMatch::presence,
               "tcgen05.mma executed (UTC*MMA; ncu --query-metrics --chips gb100); not run"},
    CounterRow{"tmem_load",
               Family::tcgen05,
               "smsp__sass_inst_executed_op_tmem_ldt.sum",
               {"LDTM", "", "", ""},
               AuditMatch::presence,
               "tcgen05.ld executed (LDTM; ncu --query-metrics --chips gb100); not run"},
    CounterRow{"tmem_store",
               Family::tcgen05,
               "smsp__sass_inst_executed_op_tmem_stt.sum",
               {"STTM", "", "", ""},
               AuditMatch::presence,
               "tcgen05.st executed (STTM; ncu --query-metrics --chips gb100); not run"},
    CounterRow{"tmem_copy",
               Family::tcgen05,
               "smsp__sass_inst_executed_op_utccp.sum",
               {"UTCCP", "", "", ""},
               AuditMatch::presence,
               "tcgen05.cp executed (UTCCP; ncu --query-metrics --chips gb100); not run"},
    CounterRow{"tmem_shift",
               Family::tcgen05,
               "smsp__sass_inst_executed_op_tmem_utcshift.sum",
               {"UTCSHIFT", "", "", ""},
               AuditMatch::presence,
               "tcgen05.shift executed (UTCSHIFT; ncu --query-metrics --chips gb100); not run"},
    CounterRow{"tma_load",
               Family::tma,
               "smsp__sass_inst_executed_op_tma_ld.sum",
               {"UTMALDG", "UBLKCP.S.G", "", ""},
               AuditMatch::presence,
               "cp.async.bulk.tensor loads executed (as on Hopper; gb100 lists it); not run"},
    CounterRow{"tma_store",
               Family::tma,
               "smsp__sass_inst_executed_op_tma_st.sum",
               {"UTMASTG", "UBLKCP.G.S", "", ""},
               AuditMatch::presence,
               "cp.async.bulk.tensor stores executed (as on Hopper; gb100 lists it); not run"},
    CounterRow{"tma_reduce",
               Family::tma,
               "smsp__sass_inst_executed_op_tma_red.sum",
               {"UTMAREDG", "UBLKRED.G.S", "", ""},
               AuditMatch::presence,
               "cp.reduce.async.bulk.tensor executed (as on Hopper; gb100 lists it); not run"},
};

inline constexpr std::array kArchCounters{
    ArchCounters{"sm_90a", 9, 0, "GH100", kHopperCounters,
                 "sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32.sum", CountersRun::measured,
                 "H200 (GH100): range profiler and ncu audit agree (bench/results/)"},
    ArchCounters{"sm_100a", 10, 0, "GB100", kBlackwellCounters,
                 "sm__ops_path_tensor_op_utchmma_src_bf16_dst_fp32.sum", CountersRun::not_run,
                 "not run: no Blackwell GPU; names from ncu --query-metrics --chips gb100"},
};

// Every row's key is unique within its architecture, and every row names a metric and an opcode.
consteval bool arch_counters_well_formed() {
  for (const ArchCounters& arch : kArchCounters) {
    if (arch.rows.empty() || arch.flop_metric.empty())
      return false;
    for (std::size_t i = 0; i < arch.rows.size(); ++i) {
      if (arch.rows[i].metric.empty() || arch.rows[i].opcodes[0].empty())
        return false;
      for (std::size_t j = 0; j < i; ++j)
        if (arch.rows[j].key == arch.rows[i].key || arch.rows[j].metric == arch.rows[i].metric)
          return false;
    }
  }
  return true;
}
static_assert(arch_counters_well_formed(), "kArchCounters: a duplicate key or an empty row");

// The counters of a cubin target: sm_90a, sm_100a, and the family target sm_100f, which runs on
// the same 10.0 GPUs; nullptr for a target without a table (sm_103a has none yet).
const ArchCounters* counters_for(std::string_view arch);

// The counters of the GPUs of compute capability major.minor; nullptr without a table.
const ArchCounters* counters_for_compute_capability(int major, int minor);

// The metrics a counter configures for `arch`: every row's, then the FLOP metric.
std::vector<std::string> metric_names(const ArchCounters& arch);

// Whether the opcode (with modifiers, predicate removed) is one of `row`'s.
bool counts_opcode(const CounterRow& row, std::string_view opcode);

// One line per metric: `key  family  metric  opcodes  match`, then the FLOP metric and whether
// the table ran; the golden files tests/data/sass/counters.<arch>.txt.
std::string render_counters(const ArchCounters& arch);

constexpr std::string_view to_string(AuditMatch match) {
  return match == AuditMatch::exact ? "exact" : "presence";
}
constexpr std::string_view to_string(CountersRun run) {
  return run == CountersRun::measured ? "measured" : "not run";
}

} // namespace ptxbench::sass
