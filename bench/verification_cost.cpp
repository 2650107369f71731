// Cost of dynamic target-instruction verification for one call of the wgmma+TMA GEMM
// (M=8192, N=7168, K=5120): the in-process CUPTI range-profiler pass (InstructionCounter)
// against the paper's out-of-process `ncu` source-page audit of the same call. The ncu
// target is this program re-run with --probe (one warm-up call, one call inside the NVTX
// range "ptxbench_eval").
//   verification_cost [--repeats N]     prints a markdown report on stdout
//   verification_cost --breakdown       where a counting pass's time goes: create() and count()
//                                       step by step, kernel vs user replay, and a one-pass
//                                       hardware-counter metric set for comparison
#include "bench/phase_text.hpp"
#include "bench/wgmma_gemm_call.hpp"
#include "measure/instruction_counter.hpp"
#include "measure/ncu_audit.hpp"
#include "measure/nvml_monitor.hpp"
#include "util/phases.hpp"
#include "util/subprocess.hpp"

#include <chrono>
#include <cstdint>
#include <cstring>
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <filesystem>
#include <fmt/format.h>
#include <nvtx3/nvToolsExt.h>
#include <vector>

namespace {

using namespace ptxbench;
constexpr std::int64_t kM = bench::kGemmM, kN = bench::kGemmN, kK = bench::kGemmK;
using Gemm = bench::WgmmaGemmCall;

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

int probe() {
  Gemm gemm;
  gemm(nullptr);
  cudaDeviceSynchronize();
  nvtxRangePushA("ptxbench_eval");
  gemm(nullptr);
  const cudaError_t status = cudaDeviceSynchronize();
  nvtxRangePop();
  return status == cudaSuccess ? 0 : 1;
}

void in_process(int repeats) {
  Gemm gemm;
  gemm(nullptr);
  cudaDeviceSynchronize();
  const auto created = std::chrono::steady_clock::now();
  auto counter = measure::InstructionCounter::create(0);
  if (!counter)
    throw util::Fatal(counter.error().message);
  fmt::print("## In-process range profiler (InstructionCounter)\n\ncreate(): {:.1f} ms, chip {}, "
             "rejected metrics: {}\n\n| pass | wall ms | passes | GMMA | TMA ld | TMA st | "
             "TMA red | hgmma bf16 FLOPs | = 2MNK |\n|---|---|---|---|---|---|---|---|---|\n",
             ms_since(created), counter->chip(), counter->rejected_metrics().size());
  for (int i = 0; i < repeats; ++i) {
    auto counts = counter->count([&](cudaStream_t s) { return gemm(s); }, nullptr);
    if (!counts)
      throw util::Fatal(counts.error().message);
    auto total = [&](const char* metric) { return counts->total(metric).value_or(0.0); };
    const double flops = total("sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32.sum");
    fmt::print("| {} | {:.1f} | {} | {:.0f} | {:.0f} | {:.0f} | {:.0f} | {:.6g} | {} |\n", i,
               counts->pass_ms, counts->passes,
               total("smsp__sass_inst_executed_op_shared_gmma.sum"),
               total("smsp__sass_inst_executed_op_tma_ld.sum"),
               total("smsp__sass_inst_executed_op_tma_st.sum"),
               total("smsp__sass_inst_executed_op_tma_red.sum"), flops,
               flops == 2.0 * kM * kN * kK ? "yes" : "no");
  }
}

// The hardware-counter alternative to the SASS-instruction metrics: one pass, no SASS
// patching; measured here only, to compare its values with the default set's.
std::vector<std::string> hardware_metrics() {
  return {"smsp__inst_executed_pipe_tensor_op_gmma.sum", "smsp__inst_executed_op_tma_ld.sum",
          "smsp__inst_executed_op_tma_st.sum", "sm__inst_executed_pipe_tma.sum",
          "sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32.sum"};
}

std::string metrics_text(const measure::InstructionCounts& counts) {
  std::string out;
  for (const measure::MetricValue& m : counts.metrics)
    out += fmt::format("{}{} {:.6g}", out.empty() ? "" : ", ", m.name, m.value);
  return out;
}

void breakdown() {
  Gemm gemm;
  gemm(nullptr);
  cudaDeviceSynchronize();
  fmt::print("## Counting pass, step by step (ms)\n\n| metric set | replay | count | wall ms | "
             "passes | calls | steps | values |\n|---|---|---|---|---|---|---|---|\n");
  struct Setting {
    const char* name;
    std::vector<std::string> metrics;
    measure::CounterReplay replay;
  };
  const std::vector<Setting> settings{
      {"default (SASS instruction metrics)", {}, measure::CounterReplay::kernel},
      {"default (SASS instruction metrics)", {}, measure::CounterReplay::user},
      {"hardware counters", hardware_metrics(), measure::CounterReplay::user}};
  for (const Setting& setting : settings) {
    measure::CounterOptions options;
    options.metrics = setting.metrics;
    options.replay = setting.replay;
    options.availability = measure::CounterAvailability::assume;
    const auto created = std::chrono::steady_clock::now();
    auto counter = measure::InstructionCounter::create_with(0, options);
    if (!counter) {
      fmt::print("| {} | {} | create | error: {} | | | | |\n", setting.name,
                 to_string(setting.replay), counter.error().message);
      continue;
    }
    fmt::print("| {} | {} | create | {:.1f} | {} | | {} | |\n", setting.name,
               to_string(setting.replay), ms_since(created), counter->passes(),
               bench::phases_text(counter->setup_steps()));
    for (int i = 0; i < 3; ++i) {
      auto counts = counter->count([&](cudaStream_t s) { return gemm(s); }, nullptr,
                                   [&](cudaStream_t s) { gemm.reset(s); });
      if (!counts) {
        fmt::print("| {} | {} | {} | error: {} | | | | |\n", setting.name,
                   to_string(setting.replay), i, counts.error().message);
        break;
      }
      fmt::print("| {} | {} | {} | {:.1f} | {} | {} | {} | {} |\n", setting.name,
                 to_string(counts->replay), i, counts->pass_ms, counts->passes, counts->calls,
                 bench::phases_text(counts->steps), metrics_text(*counts));
    }
  }
}

void ncu_audit(int repeats, const std::string& self) {
  fmt::print("\n## ncu source-page audit (paper method)\n\n`{}`\n\n| run | wall ms | GMMA "
             "| UTMALDG | UTMASTG | rows |\n|---|---|---|---|---|---|\n",
             fmt::join(measure::ncu_audit_command({self, "--probe"}, {}), " "));
  util::PosixProcessRunner runner;
  for (int i = 0; i < repeats; ++i) {
    auto audit = measure::run_ncu_audit(runner, {self, "--probe"}, {});
    if (!audit) {
      fmt::print("| {} | error: {} | | | | |\n", i, audit.error().message);
      continue;
    }
    fmt::print("| {} | {:.0f} | {} | {} | {} | {} |\n", i, audit->wall_ms, audit->families.gmma,
               audit->families.tma_load, audit->families.tma_store, audit->instruction_rows);
  }
  const auto started = std::chrono::steady_clock::now();
  auto plain = runner.run({self, "--probe"}, {});
  fmt::print("\nThe probe alone (process start, CUDA init, 2 GEMM calls): {:.0f} ms (exit {})\n",
             ms_since(started), plain ? plain->exit_code : -1);
}

} // namespace

int main(int argc, char** argv) {
  if (argc > 1 && std::strcmp(argv[1], "--probe") == 0)
    return probe();
  if (argc > 1 && std::strcmp(argv[1], "--breakdown") == 0) {
    breakdown();
    return 0;
  }
  const int repeats = argc > 2 && std::strcmp(argv[1], "--repeats") == 0 ? std::atoi(argv[2]) : 5;
  const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  if (auto monitor = measure::GpuMonitor::create(0); monitor) {
    if (auto snap = monitor->snapshot(); snap)
      fmt::print("# verification_cost\n\nGPU {}: SM {} MHz, {:.0f} W, {} C\n\n", snap->device_name,
                 snap->sm_clock_mhz, snap->power_w, snap->temperature_c);
  }
  in_process(repeats);
  ncu_audit(2, self);
  return 0;
}
