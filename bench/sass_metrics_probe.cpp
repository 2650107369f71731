// Whether CUPTI's SASS Metrics API (instrumentation: the driver patches the kernel's SASS; no
// hardware performance monitor) could count the executed GMMA instructions without the range
// profiler's per-process session, whose first Start costs 0.36–0.93 s and holds the driver
// beside other processes (issue 18; bench/results/counter_session_h200.md,
// bench/results/eval_throughput_h200.md stop 19). Run on the H200 in stop 20: it counts a plain
// kernel but never the wgmma kernel, and crashes a timed process
// (bench/results/sass_metrics_probe_h200.md).
//
//   sass_metrics_probe [--cycles N]    N counting cycles of one call of the wgmma+TMA GEMM
//                                      (M=8192, N=7168, K=5120): enable, call, flush, disable,
//                                      each step timed; the GMMA count (the executed count of
//                                      every HGMMA instruction, the opcodes read from this
//                                      binary's own SASS with cuobjdump) against the range
//                                      profiler's 9,175,040; strict trials before and after,
//                                      to see that no patched code is left behind
//   sass_metrics_probe --hold S        enables collection, waits S seconds, counts, disables:
//                                      run two at once to see whether two processes may
//   sass_metrics_probe --trials S      strict trials for S seconds, one line each (run beside
//                                      --cycles in another process: does instrumenting there
//                                      stretch or move the trials here?)
//   sass_metrics_probe --opcodes       the opcodes read from this binary's SASS, counted (no GPU)
// Each cycle also runs a control kernel with no tensor-core instruction
// (bench/sass_probe_control.cu), and reports each function's records and executed count apart.
// Environment: PROBE_EAGER=1 patches every function at enable (no lazy patching);
// PROBE_NO_TIMER=1 leaves out the CUPTI activity timer and the strict trials of --cycles;
// PROBE_NO_PAUSE=1 keeps the timer's activity tracing on while counting (it is paused otherwise,
// as the range profiler's count pauses it); PROBE_NO_WARM=1 leaves out the GEMM call and trial
// before the first count, so the GEMM's first launch in the process is the counted one.
// Prints markdown on stdout; exit 1 on a CUPTI or CUDA error.
#include "bench/wgmma_gemm_call.hpp"
#include "measure/timing.hpp"

#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda.h>
#include <cuda_runtime.h>
#include <cupti_profiler_target.h>
#include <cupti_sass_metrics.h>
#include <cupti_target.h>
#include <filesystem>
#include <fmt/format.h>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

void sass_probe_control(int* out, int rounds, cudaStream_t stream);

namespace {

using namespace ptxbench;
using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

void check(CUptiResult result, const char* what) {
  if (result == CUPTI_SUCCESS)
    return;
  const char* text = nullptr;
  cuptiGetResultString(result, &text);
  throw util::Fatal(fmt::format("{}: {}", what, text != nullptr ? text : "unknown CUPTI error"));
}

// Every CUPTI parameter struct starts with its size and a private pointer.
template <typename Params> Params params(std::size_t size) {
  Params p;
  std::memset(&p, 0, sizeof p);
  p.structSize = size;
  return p;
}

// (function name, pc offset) → opcode of every instruction in this binary's SASS, read from
// `cuobjdump -sass` (lines "/*0a70*/   HGMMA.64x256x16.F32.BF16 ..." under "Function : NAME").
std::map<std::pair<std::string, std::uint32_t>, std::string> sass_opcodes() {
  std::map<std::pair<std::string, std::uint32_t>, std::string> out;
  // This process's own path: "/proc/self/exe" inside the command would name cuobjdump.
  const std::string self = std::filesystem::read_symlink("/proc/self/exe").string();
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(("cuobjdump -sass '" + self + "'").c_str(), "r"),
                                             pclose);
  if (!pipe)
    throw util::Fatal("cannot run cuobjdump");
  std::array<char, 4096> line{};
  std::string function;
  while (std::fgets(line.data(), line.size(), pipe.get()) != nullptr) {
    const std::string text = line.data();
    if (const auto at = text.find("Function : "); at != std::string::npos) {
      function = text.substr(at + 11);
      while (!function.empty() && (function.back() == '\n' || function.back() == ' '))
        function.pop_back();
      continue;
    }
    const auto open = text.find("/*");
    const auto close = text.find("*/", open == std::string::npos ? 0 : open);
    if (function.empty() || open == std::string::npos || close == std::string::npos)
      continue;
    char* end = nullptr;
    const unsigned long offset = std::strtoul(text.c_str() + open + 2, &end, 16);
    if (end != text.c_str() + close)
      continue; // a comment, not an address
    std::size_t start = text.find_first_not_of(" \t", close + 2);
    if (start == std::string::npos)
      continue;
    if (text[start] == '@') // a predicate: "@P0 HGMMA…"
      start = text.find_first_not_of(" \t", text.find_first_of(" \t", start));
    const std::size_t stop = text.find_first_of(" \t;.", start);
    out[{function, static_cast<std::uint32_t>(offset)}] = text.substr(start, stop - start);
  }
  return out;
}

bool env_set(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr && std::strcmp(value, "1") == 0;
}

// What one flush collected: per function, its records and their executed count; the GMMA
// instructions' executed count; and the instances per record.
struct Flushed {
  std::map<std::string, std::pair<std::size_t, double>> functions;
  double gmma = 0;
  std::size_t records = 0, instances = 0;
  double executed(const std::string& part) const {
    double sum = 0;
    for (const auto& [name, function] : functions)
      sum += name.find(part) != std::string::npos ? function.second : 0;
    return sum;
  }
};

struct Probe {
  std::string chip;
  std::uint64_t metric_id = 0;
  CUcontext context = nullptr;
  bench::WgmmaGemmCall gemm;
  cudaStream_t stream = nullptr;
  int* control_out = nullptr;
  std::map<std::pair<std::string, std::uint32_t>, std::string> opcodes;

  Probe() {
    cudaSetDevice(0);
    cudaFree(nullptr);
    cuCtxGetCurrent(&context);
    cudaStreamCreate(&stream);
    cudaMalloc(&control_out, 132 * 128 * sizeof(int));
    auto init =
        params<CUpti_Profiler_Initialize_Params>(CUpti_Profiler_Initialize_Params_STRUCT_SIZE);
    check(cuptiProfilerInitialize(&init), "cuptiProfilerInitialize");
    auto supported = params<CUpti_Profiler_DeviceSupported_Params>(
        CUpti_Profiler_DeviceSupported_Params_STRUCT_SIZE);
    supported.cuDevice = 0;
    supported.api = CUPTI_PROFILER_SASS_METRICS;
    check(cuptiProfilerDeviceSupported(&supported), "cuptiProfilerDeviceSupported");
    fmt::print("SASS metrics supported on device 0: {} (architecture {}, vGPU {}, confidential "
               "compute {})\n",
               static_cast<int>(supported.isSupported), static_cast<int>(supported.architecture),
               static_cast<int>(supported.vGpu), static_cast<int>(supported.confidentialCompute));
    auto name =
        params<CUpti_Device_GetChipName_Params>(CUpti_Device_GetChipName_Params_STRUCT_SIZE);
    name.deviceIndex = 0;
    check(cuptiDeviceGetChipName(&name), "cuptiDeviceGetChipName");
    chip = name.pChipName;
    auto property = params<CUpti_SassMetrics_GetProperties_Params>(
        CUpti_SassMetrics_GetProperties_Params_STRUCT_SIZE);
    property.pChipName = chip.c_str();
    property.pMetricName = "smsp__sass_inst_executed";
    check(cuptiSassMetricsGetProperties(&property), "cuptiSassMetricsGetProperties");
    metric_id = property.metric.metricId;
    CUpti_SassMetrics_Config config{metric_id, CUPTI_SASS_METRICS_OUTPUT_GRANULARITY_GPU};
    auto set =
        params<CUpti_SassMetricsSetConfig_Params>(CUpti_SassMetricsSetConfig_Params_STRUCT_SIZE);
    set.numOfMetricConfig = 1;
    set.pConfigs = &config;
    set.deviceIndex = 0;
    check(cuptiSassMetricsSetConfig(&set), "cuptiSassMetricsSetConfig");
  }

  void list_metrics() const {
    auto count = params<CUpti_SassMetrics_GetNumOfMetrics_Params>(
        CUpti_SassMetrics_GetNumOfMetrics_Params_STRUCT_SIZE);
    count.pChipName = chip.c_str();
    check(cuptiSassMetricsGetNumOfMetrics(&count), "cuptiSassMetricsGetNumOfMetrics");
    std::vector<CUpti_SassMetrics_MetricDetails> details(count.numOfMetrics);
    auto list = params<CUpti_SassMetrics_GetMetrics_Params>(
        CUpti_SassMetrics_GetMetrics_Params_STRUCT_SIZE);
    list.pChipName = chip.c_str();
    list.numOfMetrics = details.size();
    list.pMetricsList = details.data();
    check(cuptiSassMetricsGetMetrics(&list), "cuptiSassMetricsGetMetrics");
    std::string names;
    for (const auto& metric : details)
      names += fmt::format("{}{}", names.empty() ? "" : ", ", metric.pMetricName);
    fmt::print("chip {}: {} SASS metrics: {}\n\n", chip, details.size(), names);
  }

  void enable() const {
    auto on = params<CUpti_SassMetricsEnable_Params>(CUpti_SassMetricsEnable_Params_STRUCT_SIZE);
    on.ctx = context;
    on.enableLazyPatching = env_set("PROBE_EAGER") ? 0 : 1;
    check(cuptiSassMetricsEnable(&on), "cuptiSassMetricsEnable");
  }

  // The records dropped because they were not flushed.
  std::size_t disable() const {
    auto off = params<CUpti_SassMetricsDisable_Params>(CUpti_SassMetricsDisable_Params_STRUCT_SIZE);
    off.ctx = context;
    check(cuptiSassMetricsDisable(&off), "cuptiSassMetricsDisable");
    return off.numOfDroppedRecords;
  }

  void control() {
    sass_probe_control(control_out, 1000, stream);
    if (cudaStreamSynchronize(stream) != cudaSuccess)
      throw util::Fatal("the control kernel failed");
  }

  void call() {
    gemm.reset(stream);
    if (gemm(stream) != 0 || cudaStreamSynchronize(stream) != cudaSuccess)
      throw util::Fatal("the GEMM call failed");
  }

  // Flushes the collected records. With `show`, prints the first three records raw.
  Flushed flush(bool show = false) const {
    auto properties = params<CUpti_SassMetricsGetDataProperties_Params>(
        CUpti_SassMetricsGetDataProperties_Params_STRUCT_SIZE);
    properties.ctx = context;
    check(cuptiSassMetricsGetDataProperties(&properties), "cuptiSassMetricsGetDataProperties");
    const std::size_t records = properties.numOfPatchedInstructionRecords;
    const std::size_t instances = properties.numOfInstances;
    if (records == 0 || instances == 0)
      return {}; // nothing patched ran: flushing nothing is an invalid parameter
    std::vector<CUpti_SassMetrics_InstanceValue> values(records * instances);
    std::vector<CUpti_SassMetrics_Data> data(records);
    for (std::size_t i = 0; i < records; ++i) {
      data[i].structSize = sizeof(CUpti_SassMetrics_Data);
      data[i].pInstanceValues = values.data() + i * instances;
    }
    auto flush =
        params<CUpti_SassMetricsFlushData_Params>(CUpti_SassMetricsFlushData_Params_STRUCT_SIZE);
    flush.ctx = context;
    flush.numOfPatchedInstructionRecords = records;
    flush.numOfInstances = instances;
    flush.pMetricsData = data.data();
    check(cuptiSassMetricsFlushData(&flush), "cuptiSassMetricsFlushData");
    Flushed out;
    out.records = records;
    out.instances = instances;
    for (const CUpti_SassMetrics_Data& record : data) {
      double executed = 0;
      for (std::size_t k = 0; k < instances; ++k)
        executed += static_cast<double>(record.pInstanceValues[k].value);
      const std::string name = record.functionName != nullptr ? record.functionName : "?";
      auto& function = out.functions[name];
      ++function.first;
      function.second += executed;
      const auto found = opcodes.find({name, record.pcOffset});
      if (found != opcodes.end() && found->second == "HGMMA")
        out.gmma += executed;
      if (show && (&record - data.data()) < 3)
        fmt::print("record {}: {} pc {:#x} crc {:#x} metric {} value {}\n", &record - data.data(),
                   name, record.pcOffset, record.cubinCrc,
                   instances > 0 ? record.pInstanceValues[0].metricId : 0,
                   instances > 0 ? record.pInstanceValues[0].value : 0);
    }
    return out;
  }

  double trial(measure::CallTimer& timer, measure::L2Flusher& flusher) {
    return bench::strict_trial_median(timer, flusher, gemm, stream);
  }
};

int cycles(Probe& probe, measure::CallTimer* timer, measure::L2Flusher* flusher, int count) {
  probe.list_metrics();
  probe.opcodes = sass_opcodes();
  std::size_t hgmma = 0;
  for (const auto& [where, opcode] : probe.opcodes)
    hgmma += opcode == "HGMMA" ? 1 : 0;
  fmt::print("SASS of this binary: {} instructions, {} HGMMA\n\n", probe.opcodes.size(), hgmma);
  const bool trials = timer != nullptr;
  const bool warm = !env_set("PROBE_NO_WARM");
  if (warm)
    probe.call(); // loads the GEMM's module (lazy loading) before the first count
  const double before = trials && warm ? probe.trial(*timer, *flusher) : 0;
  const bool pause = !env_set("PROBE_NO_PAUSE");
  fmt::print("activity timer {}, tracing {} while counting, {} patching, GEMM {}\n\n",
             trials ? "on" : "off", trials && !pause ? "on" : "paused or absent",
             env_set("PROBE_EAGER") ? "eager" : "lazy",
             warm ? "called before the first count" : "first called in the first count");
  fmt::print("| cycle | enable ms | control ms | call ms | flush ms | disable ms | records | "
             "instances | dropped | control executed | GEMM executed | GMMA executed |\n"
             "|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (int cycle = 0; cycle < count; ++cycle) {
    std::optional<measure::ActivityTracingPause> paused;
    auto start = Clock::now();
    if (pause)
      paused.emplace();
    probe.enable();
    const double enable_ms = ms_since(start);
    start = Clock::now();
    probe.control();
    const double control_ms = ms_since(start);
    start = Clock::now();
    probe.call();
    const double call_ms = ms_since(start);
    start = Clock::now();
    const Flushed flushed = probe.flush(cycle == 0);
    const double flush_ms = ms_since(start);
    start = Clock::now();
    const std::size_t dropped = probe.disable();
    paused.reset();
    const double disable_ms = ms_since(start);
    fmt::print(
        "| {} | {:.1f} | {:.1f} | {:.1f} | {:.1f} | {:.1f} | {} | {} | {} | {:.0f} | {:.0f} | "
        "{:.0f} |\n",
        cycle, enable_ms, control_ms, call_ms, flush_ms, disable_ms, flushed.records,
        flushed.instances, dropped, flushed.executed("sass_probe_control"),
        flushed.executed("wgmma"), flushed.gmma);
    if (cycle == 0)
      for (const auto& [name, function] : flushed.functions)
        fmt::print("  function {}: {} records, {:.0f} executed\n", name, function.first,
                   function.second);
  }
  if (trials) {
    const double after = probe.trial(*timer, *flusher);
    fmt::print("\nstrict trial median before {:.4f} ms, after {:.4f} ms\n", before, after);
  }
  fmt::print("\n(range profiler, same GEMM call: GMMA 9175040)\n");
  return 0;
}

} // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0); // each line out before a crash
  try {
    const std::string mode = argc > 1 ? argv[1] : "--cycles";
    const double value = argc > 2 ? std::atof(argv[2]) : 4;
    if (mode == "--opcodes") { // the SASS parse alone, no GPU needed
      std::map<std::string, int> counts;
      for (const auto& [where, opcode] : sass_opcodes())
        ++counts[opcode];
      for (const auto& [opcode, count] : counts)
        fmt::print("{} {}\n", opcode, count);
      return 0;
    }
    if (mode == "--cycles" && env_set("PROBE_NO_TIMER")) {
      Probe probe;
      return cycles(probe, nullptr, nullptr, static_cast<int>(value));
    }
    auto timer = measure::cupti_call_timer(); // tracing before any module loads
    if (!timer)
      throw util::Fatal(timer.error().message);
    auto flusher = measure::L2Flusher::create(0);
    if (!flusher)
      throw util::Fatal(flusher.error().message);
    Probe probe;
    if (mode == "--cycles")
      return cycles(probe, *timer, &*flusher, static_cast<int>(value));
    if (mode == "--hold") {
      // As first measured: tracing on, the GEMM first called inside the range, so that both
      // processes patch it (bench/results/sass_metrics_probe_h200.md).
      probe.opcodes = sass_opcodes();
      const auto start = Clock::now();
      probe.enable();
      fmt::print("hold: enabled after {:.1f} ms\n", ms_since(start));
      std::this_thread::sleep_for(std::chrono::duration<double>(value));
      probe.call();
      const Flushed flushed = probe.flush();
      probe.disable();
      fmt::print(
          "hold: GMMA {:.0f}, GEMM executed {:.0f}, {} records, done {:.0f} ms after start\n",
          flushed.gmma, flushed.executed("wgmma"), flushed.records, ms_since(start));
      return 0;
    }
    if (mode == "--trials") {
      const auto start = Clock::now();
      while (ms_since(start) < value * 1000.0) {
        const auto trial_start = Clock::now();
        const double median = probe.trial(**timer, *flusher);
        fmt::print("trial at {:.0f} ms: median {:.4f} ms, wall {:.1f} ms\n", ms_since(start),
                   median, ms_since(trial_start));
      }
      return 0;
    }
    throw util::Fatal("unknown mode " + mode);
  } catch (const std::exception& e) {
    fmt::print(stderr, "sass_metrics_probe: {}\n", e.what());
    return 1;
  }
}
