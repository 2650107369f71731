// pm_sampling_probe: whether CUPTI's PM sampling API is a cheaper route to the executed-GMMA
// count than the range profiler (issue 35). The range profiler's session costs ~0.4 s to open
// in every fresh candidate process (counter_session_h200.md); the SASS Metrics API never counts
// the wgmma+TMA GEMM (sass_metrics_probe_h200.md). PM sampling reads hardware counters
// device-wide at a fixed interval with no per-kernel replay; the hardware GMMA counter
// (`smsp__inst_executed_pipe_tensor_op_gmma.sum`) matched the SASS metric exactly under the
// range profiler (9,175,040 for this GEMM). What this probe asks, in the candidate child's
// set-up (CUPTI activity tracing on first):
//   1. which GMMA/TMA/tensor metrics the chip offers for PM sampling, and how many passes each
//      needs (PM sampling takes one-pass configurations only);
//   2. the cost of each step (enable, set_config, counter data image, start, the call, stop,
//      decode, evaluate, disable) over a few cycles: is the first Start as slow as the range
//      profiler's?
//   3. whether the samples' sum over the call equals the exact count (GMMA 9,175,040; bf16
//      tensor FLOPs 2·M·N·K = 6.01295e11), and how it varies with the sampling interval.
// Device-wide sampling also counts other processes' kernels: as a counting route it needs the
// GPU to itself during the call, which the evaluator's counting phase already has (exclusive
// GPU lock).
//   pm_sampling_probe [--cycles N]   (default 3) prints a markdown report on stdout
#include "bench/phase_text.hpp"
#include "bench/wgmma_gemm_call.hpp"
#include "measure/check.hpp"
#include "measure/timing.hpp"
#include "util/error.hpp"

#include <chrono>
#include <cstring>
#include <cuda_runtime.h>
#include <cupti_pmsampling.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_target.h>
#include <fmt/format.h>
#include <string>
#include <utility>
#include <vector>

namespace {

using namespace ptxbench;
using Clock = std::chrono::steady_clock;
constexpr util::ErrorKind kFailure = util::ErrorKind::unsupported;

template <typename Params> Params make_params(std::size_t struct_size) {
  Params params{};
  params.structSize = struct_size;
  return params;
}

void step(std::vector<util::Phase>& steps, const char* name, Clock::time_point& since) {
  const auto now = Clock::now();
  steps.push_back({name, std::chrono::duration_cast<std::chrono::microseconds>(now - since)});
  since = now;
}

struct Host {
  std::string chip;
  std::vector<std::uint8_t> availability;
};

util::Expected<Host> host_set_up() {
  auto init =
      make_params<CUpti_Profiler_Initialize_Params>(CUpti_Profiler_Initialize_Params_STRUCT_SIZE);
  PTXBENCH_CUPTI_TRY(cuptiProfilerInitialize(&init), kFailure);
  auto name =
      make_params<CUpti_Device_GetChipName_Params>(CUpti_Device_GetChipName_Params_STRUCT_SIZE);
  name.deviceIndex = 0;
  PTXBENCH_CUPTI_TRY(cuptiDeviceGetChipName(&name), kFailure);
  Host host{name.pChipName, {}};
  auto avail = make_params<CUpti_PmSampling_GetCounterAvailability_Params>(
      CUpti_PmSampling_GetCounterAvailability_Params_STRUCT_SIZE);
  avail.deviceIndex = 0;
  PTXBENCH_CUPTI_TRY(cuptiPmSamplingGetCounterAvailability(&avail), kFailure);
  host.availability.resize(avail.counterAvailabilityImageSize);
  avail.pCounterAvailabilityImage = host.availability.data();
  PTXBENCH_CUPTI_TRY(cuptiPmSamplingGetCounterAvailability(&avail), kFailure);
  return host;
}

// A PM-sampling host object for `metrics`: its config image and pass count, or why not.
struct Config {
  CUpti_Profiler_Host_Object* object = nullptr;
  std::vector<std::uint8_t> image;
  std::size_t passes = 0;
};

util::Expected<CUpti_Profiler_Host_Object*> new_host(const Host& host) {
  auto params = make_params<CUpti_Profiler_Host_Initialize_Params>(
      CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE);
  params.profilerType = CUPTI_PROFILER_TYPE_PM_SAMPLING;
  params.pChipName = host.chip.c_str();
  params.pCounterAvailabilityImage = host.availability.data();
  PTXBENCH_CUPTI_TRY(cuptiProfilerHostInitialize(&params), kFailure);
  return params.pHostObject;
}

void free_host(CUpti_Profiler_Host_Object* object) {
  auto done = make_params<CUpti_Profiler_Host_Deinitialize_Params>(
      CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE);
  done.pHostObject = object;
  cuptiProfilerHostDeinitialize(&done);
}

util::Expected<Config> configure(const Host& host, const std::vector<const char*>& metrics) {
  PTXBENCH_TRY_ASSIGN(auto object, new_host(host));
  Config config{object, {}, 0};
  auto add = make_params<CUpti_Profiler_Host_ConfigAddMetrics_Params>(
      CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE);
  add.pHostObject = object;
  add.ppMetricNames = const_cast<const char**>(metrics.data());
  add.numMetrics = metrics.size();
  if (cuptiProfilerHostConfigAddMetrics(&add) != CUPTI_SUCCESS) {
    free_host(object);
    return util::make_error(kFailure, "rejected");
  }
  auto size = make_params<CUpti_Profiler_Host_GetConfigImageSize_Params>(
      CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE);
  size.pHostObject = object;
  PTXBENCH_CUPTI_TRY(cuptiProfilerHostGetConfigImageSize(&size), kFailure);
  config.image.resize(size.configImageSize);
  auto image = make_params<CUpti_Profiler_Host_GetConfigImage_Params>(
      CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE);
  image.pHostObject = object;
  image.configImageSize = config.image.size();
  image.pConfigImage = config.image.data();
  PTXBENCH_CUPTI_TRY(cuptiProfilerHostGetConfigImage(&image), kFailure);
  auto passes = make_params<CUpti_Profiler_Host_GetNumOfPasses_Params>(
      CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE);
  passes.configImageSize = config.image.size();
  passes.pConfigImage = config.image.data();
  PTXBENCH_CUPTI_TRY(cuptiProfilerHostGetNumOfPasses(&passes), kFailure);
  config.passes = passes.numOfPasses;
  return config;
}

// Part 1: the base counter metrics whose names mention GMMA, TMA or the tensor path.
void list_metrics(const Host& host) {
  auto object = new_host(host);
  if (!object) {
    fmt::print("host object: {}\n", object.error().message);
    return;
  }
  auto base = make_params<CUpti_Profiler_Host_GetBaseMetrics_Params>(
      CUpti_Profiler_Host_GetBaseMetrics_Params_STRUCT_SIZE);
  base.pHostObject = *object;
  base.metricType = CUPTI_METRIC_TYPE_COUNTER;
  if (cuptiProfilerHostGetBaseMetrics(&base) != CUPTI_SUCCESS) {
    fmt::print("cuptiProfilerHostGetBaseMetrics failed\n");
    free_host(*object);
    return;
  }
  fmt::print("{} base counter metrics for PM sampling on {}; those naming gmma, tma or "
             "tensor_op:\n\n",
             base.numMetrics, host.chip);
  for (std::size_t i = 0; i < base.numMetrics; ++i) {
    const std::string name = base.ppMetricNames[i];
    if (name.find("gmma") != std::string::npos || name.find("tma") != std::string::npos ||
        name.find("tensor_op") != std::string::npos)
      fmt::print("- `{}`\n", name);
  }
  free_host(*object);
}

struct Sampled {
  std::vector<util::Phase> steps;
  std::size_t samples = 0;
  bool overflow = false;
  std::vector<double> sums; // per metric, over every completed sample
};

// Parts 2 and 3: one sampled call of the GEMM.
util::Expected<Sampled> sample_call(const Config& config, const std::vector<const char*>& metrics,
                                    std::uint64_t interval_ns, const bench::WgmmaGemmCall& gemm,
                                    cudaStream_t stream) {
  Sampled out;
  auto since = Clock::now();
  auto enable =
      make_params<CUpti_PmSampling_Enable_Params>(CUpti_PmSampling_Enable_Params_STRUCT_SIZE);
  enable.deviceIndex = 0;
  PTXBENCH_CUPTI_TRY(cuptiPmSamplingEnable(&enable), kFailure);
  CUpti_PmSampling_Object* object = enable.pPmSamplingObject;
  step(out.steps, "enable", since);
  struct Disable {
    CUpti_PmSampling_Object* object;
    ~Disable() {
      auto off =
          make_params<CUpti_PmSampling_Disable_Params>(CUpti_PmSampling_Disable_Params_STRUCT_SIZE);
      off.pPmSamplingObject = object;
      cuptiPmSamplingDisable(&off);
    }
  } disable{object};
  auto set =
      make_params<CUpti_PmSampling_SetConfig_Params>(CUpti_PmSampling_SetConfig_Params_STRUCT_SIZE);
  set.pPmSamplingObject = object;
  set.configSize = config.image.size();
  set.pConfig = config.image.data();
  set.hardwareBufferSize = std::size_t{512} << 20;
  set.samplingInterval = interval_ns;
  set.triggerMode = CUPTI_PM_SAMPLING_TRIGGER_MODE_GPU_TIME_INTERVAL;
  set.hwBufferAppendMode = CUPTI_PM_SAMPLING_HARDWARE_BUFFER_APPEND_MODE_KEEP_OLDEST;
  PTXBENCH_CUPTI_TRY(cuptiPmSamplingSetConfig(&set), kFailure);
  step(out.steps, "set_config", since);
  auto size = make_params<CUpti_PmSampling_GetCounterDataSize_Params>(
      CUpti_PmSampling_GetCounterDataSize_Params_STRUCT_SIZE);
  size.pPmSamplingObject = object;
  size.pMetricNames = const_cast<const char**>(metrics.data());
  size.numMetrics = metrics.size();
  size.maxSamples = 100000;
  PTXBENCH_CUPTI_TRY(cuptiPmSamplingGetCounterDataSize(&size), kFailure);
  std::vector<std::uint8_t> image(size.counterDataSize);
  auto init = make_params<CUpti_PmSampling_CounterDataImage_Initialize_Params>(
      CUpti_PmSampling_CounterDataImage_Initialize_Params_STRUCT_SIZE);
  init.pPmSamplingObject = object;
  init.counterDataSize = image.size();
  init.pCounterData = image.data();
  PTXBENCH_CUPTI_TRY(cuptiPmSamplingCounterDataImageInitialize(&init), kFailure);
  step(out.steps, "counter_data_image", since);
  auto start =
      make_params<CUpti_PmSampling_Start_Params>(CUpti_PmSampling_Start_Params_STRUCT_SIZE);
  start.pPmSamplingObject = object;
  PTXBENCH_CUPTI_TRY(cuptiPmSamplingStart(&start), kFailure);
  step(out.steps, "start", since);
  gemm.reset(stream);
  cudaStreamSynchronize(stream);
  step(out.steps, "reset", since);
  if (gemm(stream) != 0 || cudaStreamSynchronize(stream) != cudaSuccess)
    return util::make_error(kFailure, "the GEMM failed under PM sampling");
  step(out.steps, "call", since);
  auto stop = make_params<CUpti_PmSampling_Stop_Params>(CUpti_PmSampling_Stop_Params_STRUCT_SIZE);
  stop.pPmSamplingObject = object;
  PTXBENCH_CUPTI_TRY(cuptiPmSamplingStop(&stop), kFailure);
  step(out.steps, "stop", since);
  auto decode = make_params<CUpti_PmSampling_DecodeData_Params>(
      CUpti_PmSampling_DecodeData_Params_STRUCT_SIZE);
  decode.pPmSamplingObject = object;
  decode.pCounterDataImage = image.data();
  decode.counterDataImageSize = image.size();
  PTXBENCH_CUPTI_TRY(cuptiPmSamplingDecodeData(&decode), kFailure);
  out.overflow = decode.overflow != 0;
  step(out.steps, "decode", since);
  auto info = make_params<CUpti_PmSampling_GetCounterDataInfo_Params>(
      CUpti_PmSampling_GetCounterDataInfo_Params_STRUCT_SIZE);
  info.pCounterDataImage = image.data();
  info.counterDataImageSize = image.size();
  PTXBENCH_CUPTI_TRY(cuptiPmSamplingGetCounterDataInfo(&info), kFailure);
  out.samples = info.numCompletedSamples;
  out.sums.assign(metrics.size(), 0.0);
  std::vector<double> values(metrics.size());
  for (std::size_t sample = 0; sample < info.numCompletedSamples; ++sample) {
    auto eval = make_params<CUpti_Profiler_Host_EvaluateToGpuValues_Params>(
        CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE);
    eval.pHostObject = config.object;
    eval.pCounterDataImage = image.data();
    eval.counterDataImageSize = image.size();
    eval.rangeIndex = sample;
    eval.ppMetricNames = const_cast<const char**>(metrics.data());
    eval.numMetrics = metrics.size();
    eval.pMetricValues = values.data();
    PTXBENCH_CUPTI_TRY(cuptiProfilerHostEvaluateToGpuValues(&eval), kFailure);
    for (std::size_t m = 0; m < values.size(); ++m)
      out.sums[m] += values[m];
  }
  step(out.steps, "evaluate", since);
  return out;
}

} // namespace

int main(int argc, char** argv) {
  const int cycles = argc == 3 && std::strcmp(argv[1], "--cycles") == 0 ? std::atoi(argv[2]) : 3;
  auto timer = measure::cupti_call_timer(); // tracing on first, as in the candidate child
  if (!timer)
    throw util::Fatal(timer.error().message);
  cudaSetDevice(0);
  cudaFree(nullptr);
  cudaStream_t stream = nullptr;
  cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking);
  bench::WgmmaGemmCall gemm;
  gemm(stream);
  cudaStreamSynchronize(stream);
  auto host = host_set_up();
  if (!host) {
    fmt::print("PM sampling set-up failed: {}\n", host.error().message);
    return 1;
  }
  fmt::print("# pm_sampling_probe\n\n## 1. Metrics\n\n");
  list_metrics(*host);
  const std::vector<const char*> candidates = {
      "smsp__inst_executed_pipe_tensor_op_gmma.sum", "smsp__sass_inst_executed_op_shared_gmma.sum",
      "smsp__inst_executed_op_tma_ld.sum", "sm__inst_executed_pipe_tma.sum",
      "sm__ops_path_tensor_op_hgmma_src_bf16_dst_fp32.sum"};
  fmt::print("\n| metric | PM sampling config | passes |\n|---|---|---|\n");
  std::vector<const char*> one_pass;
  for (const char* metric : candidates) {
    auto config = configure(*host, {metric});
    fmt::print("| `{}` | {} | {} |\n", metric, config ? "accepted" : config.error().message,
               config ? std::to_string(config->passes) : "");
    if (config && config->passes == 1)
      one_pass.push_back(metric);
    if (config)
      free_host(config->object);
  }
  if (one_pass.empty()) {
    fmt::print("\nNo candidate metric fits one PM-sampling pass: not a counting route.\n");
    return 0;
  }
  // Together when they still fit one pass, else the first alone.
  std::vector<const char*> metrics = one_pass;
  auto config = configure(*host, metrics);
  if (!config || config->passes != 1) {
    if (config)
      free_host(config->object);
    metrics = {one_pass.front()};
    config = configure(*host, metrics);
  }
  if (!config) {
    fmt::print("configuration failed: {}\n", config.error().message);
    return 1;
  }
  fmt::print("\n## 2–3. Sampled calls of the GEMM (expected: GMMA 9175040, TMA loads 1146880, "
             "bf16 FLOPs 6.01295e+11)\n\nmetrics: {}\n\n| interval | cycle | wall ms | samples | "
             "overflow | sums | steps |\n|---|---|---|---|---|---|---|\n",
             fmt::join(metrics, ", "));
  for (std::uint64_t interval_ns : {20'000ULL, 100'000ULL, 1'000'000ULL})
    for (int cycle = 0; cycle < cycles; ++cycle) {
      const auto began = Clock::now();
      auto sampled = sample_call(*config, metrics, interval_ns, gemm, stream);
      const double wall = std::chrono::duration<double, std::milli>(Clock::now() - began).count();
      if (!sampled) {
        fmt::print("| {} µs | {} | {:.1f} | error: {} | | | |\n", interval_ns / 1000, cycle, wall,
                   sampled.error().message);
        continue;
      }
      fmt::print("| {} µs | {} | {:.1f} | {} | {} | {:.6g} | {} |\n", interval_ns / 1000, cycle,
                 wall, sampled->samples, sampled->overflow ? "yes" : "no",
                 fmt::join(sampled->sums, " / "), bench::phases_text(sampled->steps));
    }
  free_host(config->object);
  cudaStreamDestroy(stream);
  return 0;
}
