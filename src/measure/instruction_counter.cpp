// In-process dynamic verification with the CUPTI range profiler.
//
// Problem: the static SASS of a candidate can contain HGMMA/UTMALDG that never run (dead
// branch, a kernel never launched, a fast path taken only for some shapes). The paper proves
// execution with an `ncu` source-counter run, which costs seconds of process start-up and
// replay per kernel. We want the same evidence inside the evaluating process, per call.
//
// Approach: the CUPTI profiler host API turns metric names into a counter configuration for
// the chip (GH100 on H100/H200) once, in create(). count() then enables the range profiler on
// the current context, sets the configuration with auto ranges (one range per kernel launch)
// and kernel replay (CUPTI re-runs each kernel once per hardware pass, restoring memory in
// between), runs the call once between Start and Stop, decodes the counter data and sums
// every metric over all ranges, i.e. over every kernel the call launched, whichever stream.
// The metrics: the device's row of the counter table (sass/counters.hpp), chosen by compute
// capability — on Hopper the executed warp instructions of the GMMA and TMA families
// (`smsp__sass_inst_executed_op_{shared_gmma,tma_ld,tma_st,tma_red}.sum`) and the tensor-core
// FLOPs of the bf16→fp32 HGMMA path, which must equal 2·M·N·K for a GEMM that did all its
// work on tensor cores (measured on an H200: exactly 2·8192·7168·5120); on Blackwell the
// TCGEN05 rows (UTC*MMA, LDTM, STTM, UTCCP, UTCSHIFT), never run.
//
// Replay: with kernel replay CUPTI re-runs each kernel of the one call for every hardware pass
// and restores device memory in between; with user replay the caller's call runs once per
// pass (outputs reset before each run, outside the range), which is how ncu's application
// replay gathers the paper's audit. The instruction-count metrics fit one pass on GH100; the
// tensor-FLOP metric needs a second (counter domains differ; cuptiProfilerHostGetNumOfPasses).
//
// Invariants: the profiler object exists only inside count() (Enable … Disable), and CUPTI
// activity tracing is paused for that time, so a timed call never runs under counters or
// replay; after Disable kernels run at full speed again (measured: no residue). Ranges
// dropped because the call launched more kernels than kMaxRanges make the count an error,
// never a silent under-count.
#include "measure/instruction_counter.hpp"

#include "cuda/device.hpp"
#include "measure/check.hpp"
#include "sass/counters.hpp"

#include <chrono>
#include <cstring>
#include <cuda.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>
#include <fmt/format.h>
#include <utility>

namespace ptxbench::measure {
namespace {

constexpr std::size_t kMaxRanges = 256;
constexpr util::ErrorKind kFailure = util::ErrorKind::unsupported;

// A zeroed CUPTI parameter struct with its size set (every CUPTI profiler call takes one).
template <typename Params> Params make_params(std::size_t struct_size) {
  Params params{};
  params.structSize = struct_size;
  return params;
}

CUcontext current_context() {
  using GetCurrent = CUresult (*)(CUcontext*);
  void* function = nullptr;
  cudaDriverEntryPointQueryResult found{};
  PTXBENCH_CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuCtxGetCurrent", &function, 12000,
                                                       cudaEnableDefault, &found));
  CUcontext context = nullptr;
  if (found != cudaDriverEntryPointSuccess ||
      reinterpret_cast<GetCurrent>(function)(&context) != CUDA_SUCCESS)
    throw util::Fatal("cuCtxGetCurrent is not available");
  return context;
}

std::vector<const char*> c_strings(const std::vector<std::string>& names) {
  std::vector<const char*> out;
  for (const std::string& name : names)
    out.push_back(name.c_str());
  return out;
}

using Clock = std::chrono::steady_clock;

// Appends the time since `since` as step `name` and restarts the clock.
void step(std::vector<util::Phase>& steps, const char* name, Clock::time_point& since) {
  const auto now = Clock::now();
  steps.push_back({name, std::chrono::duration_cast<std::chrono::microseconds>(now - since)});
  since = now;
}

// Disables the range profiler object when count() leaves, whatever the path.
struct ProfilerSession {
  CUpti_RangeProfiler_Object* object = nullptr;
  ProfilerSession() = default;
  ProfilerSession(const ProfilerSession&) = delete;
  ProfilerSession& operator=(const ProfilerSession&) = delete;
  ~ProfilerSession() { disable(); }
  void disable() {
    if (object == nullptr)
      return;
    auto params = make_params<CUpti_RangeProfiler_Disable_Params>(
        CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE);
    params.pRangeProfilerObject = std::exchange(object, nullptr);
    cuptiRangeProfilerDisable(&params);
  }
};

} // namespace

struct InstructionCounter::Impl {
  int device = 0;
  std::string chip;
  std::string arch;
  std::vector<std::string> metrics;
  std::vector<std::string> rejected;
  std::vector<std::uint8_t> availability;
  std::vector<std::uint8_t> config;
  std::size_t passes = 0;
  CounterReplay replay = CounterReplay::kernel;
  std::vector<util::Phase> setup_steps;
  CUpti_Profiler_Host_Object* host = nullptr;
  bool profiler_initialised = false;
  ProfilerSession kept;                 // open between open_session() and close_session()
  std::vector<std::uint8_t> next_image; // initialised for the next count() in that session

  ~Impl() {
    kept.disable(); // before the profiler goes
    if (host != nullptr) {
      auto params = make_params<CUpti_Profiler_Host_Deinitialize_Params>(
          CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE);
      params.pHostObject = host;
      cuptiProfilerHostDeinitialize(&params);
    }
    if (profiler_initialised) {
      auto params = make_params<CUpti_Profiler_DeInitialize_Params>(
          CUpti_Profiler_DeInitialize_Params_STRUCT_SIZE);
      cuptiProfilerDeInitialize(&params);
    }
  }

  util::Status initialise_profiler(CounterAvailability query);
  util::Expected<CUpti_Profiler_Host_Object*> new_host() const;
  bool add_metrics(CUpti_Profiler_Host_Object* object, const std::vector<std::string>& names) const;
  bool host_accepts(const std::vector<std::string>& names) const;
  util::Status build_config();
  util::Status run_passes(const CallFn& call, cudaStream_t stream,
                          const std::function<void(cudaStream_t)>& before_pass,
                          ProfilerSession& session, std::vector<std::uint8_t>& image,
                          InstructionCounts& counts);
  util::Status evaluate(const std::vector<std::uint8_t>& image, InstructionCounts& counts);
  util::Status warm_session(const CallFn& warm, cudaStream_t stream, InstructionCounts& counts);
};

util::Status InstructionCounter::Impl::initialise_profiler(CounterAvailability query) {
  auto since = Clock::now();
  auto init =
      make_params<CUpti_Profiler_Initialize_Params>(CUpti_Profiler_Initialize_Params_STRUCT_SIZE);
  PTXBENCH_CUPTI_TRY(cuptiProfilerInitialize(&init), kFailure);
  profiler_initialised = true;
  auto name =
      make_params<CUpti_Device_GetChipName_Params>(CUpti_Device_GetChipName_Params_STRUCT_SIZE);
  name.deviceIndex = static_cast<std::size_t>(device);
  PTXBENCH_CUPTI_TRY(cuptiDeviceGetChipName(&name), kFailure);
  chip = name.pChipName;
  step(setup_steps, "profiler_init", since);
  if (query == CounterAvailability::assume)
    return util::Ok{};
  PTXBENCH_CUDA_TRY(cudaSetDevice(device), kFailure);
  PTXBENCH_CUDA_TRY(cudaFree(nullptr), kFailure); // creates the primary context
  step(setup_steps, "context", since);
  auto avail = make_params<CUpti_Profiler_GetCounterAvailability_Params>(
      CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE);
  avail.ctx = current_context();
  PTXBENCH_CUPTI_TRY(cuptiProfilerGetCounterAvailability(&avail), kFailure);
  availability.resize(avail.counterAvailabilityImageSize);
  avail.pCounterAvailabilityImage = availability.data();
  PTXBENCH_CUPTI_TRY(cuptiProfilerGetCounterAvailability(&avail), kFailure);
  step(setup_steps, "counter_availability", since);
  return util::Ok{};
}

util::Expected<CUpti_Profiler_Host_Object*> InstructionCounter::Impl::new_host() const {
  auto params = make_params<CUpti_Profiler_Host_Initialize_Params>(
      CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE);
  params.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
  params.pChipName = chip.c_str();
  params.pCounterAvailabilityImage = availability.empty() ? nullptr : availability.data();
  PTXBENCH_CUPTI_TRY(cuptiProfilerHostInitialize(&params), kFailure);
  return params.pHostObject;
}

bool InstructionCounter::Impl::add_metrics(CUpti_Profiler_Host_Object* object,
                                           const std::vector<std::string>& names) const {
  auto pointers = c_strings(names);
  auto add = make_params<CUpti_Profiler_Host_ConfigAddMetrics_Params>(
      CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE);
  add.pHostObject = object;
  add.ppMetricNames = pointers.data();
  add.numMetrics = pointers.size();
  return cuptiProfilerHostConfigAddMetrics(&add) == CUPTI_SUCCESS;
}

bool InstructionCounter::Impl::host_accepts(const std::vector<std::string>& names) const {
  auto probe = new_host();
  if (!probe)
    return false;
  const bool accepted = add_metrics(*probe, names);
  auto done = make_params<CUpti_Profiler_Host_Deinitialize_Params>(
      CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE);
  done.pHostObject = *probe;
  cuptiProfilerHostDeinitialize(&done);
  return accepted;
}

util::Status InstructionCounter::Impl::build_config() {
  auto since = Clock::now();
  PTXBENCH_TRY_ASSIGN(auto made, new_host());
  host = made;
  if (!add_metrics(host, metrics)) { // find the rejected ones, keep the rest
    auto done = make_params<CUpti_Profiler_Host_Deinitialize_Params>(
        CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE);
    done.pHostObject = std::exchange(host, nullptr);
    cuptiProfilerHostDeinitialize(&done);
    std::vector<std::string> accepted;
    for (const std::string& metric : metrics)
      (host_accepts({metric}) ? accepted : rejected).push_back(metric);
    metrics = std::move(accepted);
    if (metrics.empty())
      return util::make_error(kFailure, fmt::format("chip {} accepts none of the metrics", chip));
    PTXBENCH_TRY_ASSIGN(auto again, new_host());
    host = again;
    if (!add_metrics(host, metrics))
      return util::make_error(kFailure, "the accepted metrics were rejected together");
  }
  auto size = make_params<CUpti_Profiler_Host_GetConfigImageSize_Params>(
      CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE);
  size.pHostObject = host;
  PTXBENCH_CUPTI_TRY(cuptiProfilerHostGetConfigImageSize(&size), kFailure);
  config.resize(size.configImageSize);
  auto image = make_params<CUpti_Profiler_Host_GetConfigImage_Params>(
      CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE);
  image.pHostObject = host;
  image.configImageSize = config.size();
  image.pConfigImage = config.data();
  PTXBENCH_CUPTI_TRY(cuptiProfilerHostGetConfigImage(&image), kFailure);
  auto passes_params = make_params<CUpti_Profiler_Host_GetNumOfPasses_Params>(
      CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE);
  passes_params.configImageSize = config.size();
  passes_params.pConfigImage = config.data();
  PTXBENCH_CUPTI_TRY(cuptiProfilerHostGetNumOfPasses(&passes_params), kFailure);
  passes = passes_params.numOfPasses;
  step(setup_steps, "config", since);
  return util::Ok{};
}

std::optional<double> InstructionCounts::total(std::string_view metric) const {
  for (const MetricValue& m : metrics)
    if (m.name == metric)
      return m.value;
  return std::nullopt;
}

namespace {

// The device's row of the counter table, by compute capability (no context needed).
util::Expected<const sass::ArchCounters*> device_counters(int device) {
  int major = 0;
  int minor = 0;
  PTXBENCH_CUDA_TRY(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device),
                    kFailure);
  PTXBENCH_CUDA_TRY(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device),
                    kFailure);
  const sass::ArchCounters* table = sass::counters_for_compute_capability(major, minor);
  if (table == nullptr)
    return util::make_error(kFailure, fmt::format("no counter table for compute capability "
                                                  "{}.{} (sass/counters.hpp)",
                                                  major, minor));
  return table;
}

} // namespace

util::Expected<InstructionCounter> InstructionCounter::create(int device,
                                                              std::vector<std::string> metrics) {
  CounterOptions options;
  options.metrics = std::move(metrics);
  return create_with(device, std::move(options));
}

util::Expected<InstructionCounter> InstructionCounter::create_with(int device,
                                                                   CounterOptions options) {
  PTXBENCH_TRY(cuda::require_device());
  auto impl = std::make_unique<Impl>();
  impl->device = device;
  if (options.metrics.empty()) {
    PTXBENCH_TRY_ASSIGN(const sass::ArchCounters* table, device_counters(device));
    impl->arch = table->arch;
    impl->metrics = sass::metric_names(*table);
  } else {
    impl->metrics = std::move(options.metrics);
  }
  impl->replay = options.replay;
  PTXBENCH_TRY(impl->initialise_profiler(options.availability));
  PTXBENCH_TRY(impl->build_config());
  return InstructionCounter(std::move(impl));
}

util::Status InstructionCounter::Impl::run_passes(
    const CallFn& call, cudaStream_t stream, const std::function<void(cudaStream_t)>& before_pass,
    ProfilerSession& session, std::vector<std::uint8_t>& image, InstructionCounts& counts) {
  auto since = Clock::now();
  auto set = make_params<CUpti_RangeProfiler_SetConfig_Params>(
      CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE);
  set.pRangeProfilerObject = session.object;
  set.configSize = config.size();
  set.pConfig = config.data();
  set.counterDataImageSize = image.size();
  set.pCounterDataImage = image.data();
  set.range = CUPTI_AutoRange;
  set.replayMode = replay == CounterReplay::kernel ? CUPTI_KernelReplay : CUPTI_UserReplay;
  set.maxRangesPerPass = kMaxRanges;
  set.numNestingLevels = 1;
  set.minNestingLevel = 1;
  if (replay == CounterReplay::user && cuptiRangeProfilerSetConfig(&set) != CUPTI_SUCCESS) {
    replay = CounterReplay::kernel; // this CUPTI refuses auto ranges with user replay
    set.replayMode = CUPTI_KernelReplay;
    PTXBENCH_CUPTI_TRY(cuptiRangeProfilerSetConfig(&set), kFailure);
  } else if (replay == CounterReplay::kernel) {
    PTXBENCH_CUPTI_TRY(cuptiRangeProfilerSetConfig(&set), kFailure);
  }
  counts.replay = replay;
  step(counts.steps, "set_config", since);
  // Kernel replay finishes every pass inside the first Start/Stop; user replay needs one
  // Start/Stop per pass; the bound is a safeguard.
  for (std::size_t round = 0; round <= passes; ++round) {
    if (before_pass) {
      before_pass(stream);
      PTXBENCH_CUDA_TRY(cudaStreamSynchronize(stream), kFailure);
    }
    step(counts.steps, "before_pass", since);
    auto start =
        make_params<CUpti_RangeProfiler_Start_Params>(CUpti_RangeProfiler_Start_Params_STRUCT_SIZE);
    start.pRangeProfilerObject = session.object;
    PTXBENCH_CUPTI_TRY(cuptiRangeProfilerStart(&start), kFailure);
    step(counts.steps, "start", since);
    counts.call_status = call(stream);
    ++counts.calls;
    step(counts.steps, "call", since);
    if (counts.call_status == 0)
      counts.call_status = cudaDeviceSynchronize();
    step(counts.steps, "sync", since);
    auto stop =
        make_params<CUpti_RangeProfiler_Stop_Params>(CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE);
    stop.pRangeProfilerObject = session.object;
    PTXBENCH_CUPTI_TRY(cuptiRangeProfilerStop(&stop), kFailure);
    step(counts.steps, "stop", since);
    if (stop.isAllPassSubmitted || counts.call_status != 0)
      return util::Ok{};
  }
  return util::make_error(kFailure, "range profiler passes did not complete");
}

util::Status InstructionCounter::Impl::evaluate(const std::vector<std::uint8_t>& image,
                                                InstructionCounts& counts) {
  auto info = make_params<CUpti_RangeProfiler_GetCounterDataInfo_Params>(
      CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE);
  info.pCounterDataImage = image.data();
  info.counterDataImageSize = image.size();
  PTXBENCH_CUPTI_TRY(cuptiRangeProfilerGetCounterDataInfo(&info), kFailure);
  auto pointers = c_strings(metrics);
  std::vector<double> values(metrics.size());
  for (const std::string& metric : metrics)
    counts.metrics.push_back({metric, 0.0});
  for (std::size_t range = 0; range < info.numTotalRanges; ++range) {
    auto name = make_params<CUpti_RangeProfiler_CounterData_GetRangeInfo_Params>(
        CUpti_RangeProfiler_CounterData_GetRangeInfo_Params_STRUCT_SIZE);
    name.pCounterDataImage = image.data();
    name.counterDataImageSize = image.size();
    name.rangeIndex = range;
    name.rangeDelimiter = "/";
    PTXBENCH_CUPTI_TRY(cuptiRangeProfilerCounterDataGetRangeInfo(&name), kFailure);
    counts.kernels.emplace_back(name.rangeName != nullptr ? name.rangeName : "");
    auto eval = make_params<CUpti_Profiler_Host_EvaluateToGpuValues_Params>(
        CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE);
    eval.pHostObject = host;
    eval.pCounterDataImage = image.data();
    eval.counterDataImageSize = image.size();
    eval.rangeIndex = range;
    eval.ppMetricNames = pointers.data();
    eval.numMetrics = pointers.size();
    eval.pMetricValues = values.data();
    PTXBENCH_CUPTI_TRY(cuptiProfilerHostEvaluateToGpuValues(&eval), kFailure);
    for (std::size_t m = 0; m < values.size(); ++m)
      counts.metrics[m].value += values[m];
    counts.range_values.push_back(values);
  }
  return util::Ok{};
}

namespace {

util::Expected<std::vector<std::uint8_t>> counter_data_image(ProfilerSession& session,
                                                             std::vector<const char*> names) {
  auto size = make_params<CUpti_RangeProfiler_GetCounterDataSize_Params>(
      CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE);
  size.pRangeProfilerObject = session.object;
  size.pMetricNames = names.data();
  size.numMetrics = names.size();
  size.maxNumOfRanges = kMaxRanges;
  size.maxNumRangeTreeNodes = kMaxRanges;
  PTXBENCH_CUPTI_TRY(cuptiRangeProfilerGetCounterDataSize(&size), kFailure);
  std::vector<std::uint8_t> image(size.counterDataSize);
  auto init = make_params<CUpti_RangeProfiler_CounterDataImage_Initialize_Params>(
      CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE);
  init.pRangeProfilerObject = session.object;
  init.counterDataSize = image.size();
  init.pCounterData = image.data();
  PTXBENCH_CUPTI_TRY(cuptiRangeProfilerCounterDataImageInitialize(&init), kFailure);
  return image;
}

util::Status enable_session(ProfilerSession& session) {
  auto enable =
      make_params<CUpti_RangeProfiler_Enable_Params>(CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE);
  enable.ctx = current_context();
  PTXBENCH_CUPTI_TRY(cuptiRangeProfilerEnable(&enable), kFailure);
  session.object = enable.pRangeProfilerObject;
  return util::Ok{};
}

// Moves the finished passes' counters into the counter data image.
util::Status decode(ProfilerSession& session) {
  auto decode = make_params<CUpti_RangeProfiler_DecodeData_Params>(
      CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE);
  decode.pRangeProfilerObject = session.object;
  PTXBENCH_CUPTI_TRY(cuptiRangeProfilerDecodeData(&decode), kFailure);
  if (decode.numOfRangeDropped > 0)
    return util::make_error(kFailure, fmt::format("the call launched more than {} kernels; {} "
                                                  "ranges dropped",
                                                  kMaxRanges, decode.numOfRangeDropped));
  return util::Ok{};
}

} // namespace

util::Expected<InstructionCounts> InstructionCounter::count(const CallFn& call,
                                                            cudaStream_t stream) {
  return count(call, stream, {});
}

util::Expected<InstructionCounts>
InstructionCounter::count(const CallFn& call, cudaStream_t stream,
                          const std::function<void(cudaStream_t)>& before_pass) {
  const auto began = Clock::now();
  auto since = began;
  InstructionCounts counts;
  counts.arch = m_impl->arch;
  counts.passes = m_impl->passes;
  ActivityTracingPause pause;
  PTXBENCH_CUDA_TRY(cudaSetDevice(m_impl->device), util::ErrorKind::invalid_input);
  PTXBENCH_CUDA_TRY(cudaDeviceSynchronize(), util::ErrorKind::invalid_input);
  step(counts.steps, "pause_tracing", since);
  // Without an open session this count opens one for itself and closes it at the end.
  ProfilerSession own;
  ProfilerSession& session = m_impl->kept.object != nullptr ? m_impl->kept : own;
  if (session.object == nullptr) {
    PTXBENCH_TRY(enable_session(own));
    step(counts.steps, "enable", since);
  }
  std::vector<std::uint8_t> image = std::exchange(m_impl->next_image, {});
  if (image.empty()) {
    PTXBENCH_TRY_ASSIGN(auto made, counter_data_image(session, c_strings(m_impl->metrics)));
    image = std::move(made);
    step(counts.steps, "counter_data_image", since);
  }
  PTXBENCH_TRY(m_impl->run_passes(call, stream, before_pass, session, image, counts));
  since = Clock::now();
  if (counts.call_status != 0)
    return counts;
  PTXBENCH_TRY(decode(session));
  step(counts.steps, "decode", since);
  PTXBENCH_TRY(m_impl->evaluate(image, counts));
  step(counts.steps, "evaluate", since);
  if (own.object != nullptr) {
    own.disable();
    step(counts.steps, "disable", since);
  }
  counts.pass_ms = std::chrono::duration<double, std::milli>(Clock::now() - began).count();
  return counts;
}

util::Expected<std::vector<util::Phase>> InstructionCounter::open_session(const CallFn& warm,
                                                                          cudaStream_t stream) {
  if (m_impl->kept.object != nullptr)
    return util::make_error(util::ErrorKind::invalid_input, "a profiler session is open already");
  auto since = Clock::now();
  InstructionCounts counts;
  ActivityTracingPause pause;
  PTXBENCH_CUDA_TRY(cudaSetDevice(m_impl->device), util::ErrorKind::invalid_input);
  PTXBENCH_CUDA_TRY(cudaDeviceSynchronize(), util::ErrorKind::invalid_input);
  PTXBENCH_TRY(enable_session(m_impl->kept));
  step(counts.steps, "enable", since);
  if (auto warmed = m_impl->warm_session(warm, stream, counts); !warmed) {
    m_impl->kept.disable(); // no half-open session is left behind
    return warmed.take_error();
  }
  return std::move(counts.steps);
}

// The enabled session's first pass over `warm`, and the counter data image of the next count.
util::Status InstructionCounter::Impl::warm_session(const CallFn& warm, cudaStream_t stream,
                                                    InstructionCounts& counts) {
  auto since = Clock::now();
  PTXBENCH_TRY_ASSIGN(auto image, counter_data_image(kept, c_strings(metrics)));
  step(counts.steps, "counter_data_image", since);
  PTXBENCH_TRY(run_passes(warm, stream, {}, kept, image, counts));
  since = Clock::now();
  if (counts.call_status != 0)
    return util::make_error(kFailure,
                            fmt::format("the warm-up call failed: {}",
                                        cudaGetErrorString(cudaError_t(counts.call_status))));
  PTXBENCH_TRY(decode(kept));
  step(counts.steps, "decode", since);
  PTXBENCH_TRY_ASSIGN(auto next, counter_data_image(kept, c_strings(metrics)));
  next_image = std::move(next);
  step(counts.steps, "next_counter_data_image", since);
  return util::Ok{};
}

util::Phase InstructionCounter::close_session() {
  const auto since = Clock::now();
  m_impl->kept.disable();
  m_impl->next_image.clear();
  return {"disable", std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - since)};
}

bool InstructionCounter::session_open() const {
  return m_impl->kept.object != nullptr;
}

const std::string& InstructionCounter::chip() const {
  return m_impl->chip;
}
const std::string& InstructionCounter::arch() const {
  return m_impl->arch;
}
const std::vector<std::string>& InstructionCounter::metrics() const {
  return m_impl->metrics;
}
const std::vector<std::string>& InstructionCounter::rejected_metrics() const {
  return m_impl->rejected;
}
std::size_t InstructionCounter::passes() const {
  return m_impl->passes;
}
CounterReplay InstructionCounter::replay() const {
  return m_impl->replay;
}
const std::vector<util::Phase>& InstructionCounter::setup_steps() const {
  return m_impl->setup_steps;
}

InstructionCounter::InstructionCounter(std::unique_ptr<Impl> impl) : m_impl(std::move(impl)) {}
InstructionCounter::InstructionCounter(InstructionCounter&&) noexcept = default;
InstructionCounter& InstructionCounter::operator=(InstructionCounter&&) noexcept = default;
InstructionCounter::~InstructionCounter() = default;

} // namespace ptxbench::measure
