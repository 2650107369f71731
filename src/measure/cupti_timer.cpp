// The CUPTI activity call timer.
//
// Problem: a candidate's call may launch kernels, copies and memsets on any stream and from
// any thread, and may return before its work is finished. CUDA events on the call stream see
// only that stream, so they under-charge a call that forks work onto other streams or
// threads, and they include host launch gaps in launch-bound calls.
//
// Approach: CUPTI activity tracing (CONCURRENT_KERNEL, MEMCPY, MEMSET) records device start and
// end timestamps of every such activity in the process. A call window opens at a CUPTI host
// timestamp taken just before the call and closes at one taken after the call stream has
// synchronised; CUPTI timestamps and cuptiGetTimestamp share one clock. Every activity that
// starts inside the window is charged, and the latency is last end − first start of the
// charged activities. After the window the device is synchronised and the buffers flushed
// (cuptiActivityFlushAll forced), so work that was still running when the window closed
// (it ends after the close) or that only started after it (queued behind the window's work on
// another stream) is seen and reported as late work, a violation. CUDA events on the call
// stream give a cross-check latency.
//
// Batched mode (time_batch): the same records, read once per batch. While the caller's boundary
// function runs, a runtime/driver API callback marks the correlation ids of the memsets it
// enqueues, so the boundaries can be found among the records; batch_attribution.hpp places
// every other activity. Dropped records (CUPTI had no buffer) make a batch unattributable.
//
// Invariants: before each window the device is synchronised, so everything from before the
// window (the L2 flush, input rotation) ends before it opens and is never charged (records
// that start before the window are discarded; one forced flush per call, after it); the timer
// is process-wide (CUPTI tracing is); kernel records are joined with the module that defines
// the function (CUPTI module-load callback: module id and cubin CRC), so the evaluator can
// flag kernels that do not come from the candidate's library.
#include "cuda/device.hpp"
#include "measure/activity_buffers.hpp"
#include "measure/batch_attribution.hpp"
#include "measure/check.hpp"
#include "measure/cubin_symbols.hpp"
#include "measure/timing.hpp"
#include "util/hash.hpp"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cupti.h>
#include <cupti_pcsampling.h>
#include <fmt/format.h>
#include <mutex>
#include <unordered_map>

namespace ptxbench::measure {
namespace {

// Activity buffers (activity_buffers.hpp): one strict call's records take a few hundred bytes,
// a batched trial's a few tens of kilobytes. PTXBENCH_CUPTI_BUFFER_BYTES and
// PTXBENCH_CUPTI_IDLE_BUFFERS override both for the overhead benchmarks (0 idle: a fresh
// allocation per buffer, as before the pool), clamped to 4 KiB–64 MiB and at most 256.
constexpr std::size_t kBufferBytes = std::size_t{256} << 10;
constexpr std::size_t kIdleBuffers = 16;

std::size_t size_from_environment(const char* name, std::size_t fallback) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0')
    return fallback;
  char* end = nullptr;
  const unsigned long long value = std::strtoull(text, &end, 10);
  return end != nullptr && *end == '\0' ? static_cast<std::size_t>(value) : fallback;
}

// Never destroyed: CUPTI may hand buffers back until the process exits.
ActivityBuffers& activity_buffers() {
  static auto* buffers = new ActivityBuffers(
      std::clamp(size_from_environment("PTXBENCH_CUPTI_BUFFER_BYTES", kBufferBytes),
                 std::size_t{4} << 10, std::size_t{64} << 20),
      std::min(size_from_environment("PTXBENCH_CUPTI_IDLE_BUFFERS", kIdleBuffers),
               std::size_t{256}));
  return *buffers;
}

// Where CUPTI keeps the records of kernels, copies and memsets before a flush: its own
// device-side buffers (CUPTI's defaults), or, for the overhead benchmarks only,
// PTXBENCH_CUPTI_DEVICE_BUFFER_BYTES (their size) and PTXBENCH_CUPTI_HOST_PINNED=1 (pinned host
// memory instead). Set before the first buffer is made; CUPTI reads them for new buffers.
void set_record_buffers_from_environment() {
  if (std::size_t bytes = size_from_environment("PTXBENCH_CUPTI_DEVICE_BUFFER_BYTES", 0);
      bytes > 0) {
    std::size_t size = sizeof bytes;
    PTXBENCH_CUPTI_CHECK(
        cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE, &size, &bytes));
  }
  if (size_from_environment("PTXBENCH_CUPTI_HOST_PINNED", 0) == 1) {
    std::uint8_t pinned = 1;
    std::size_t size = sizeof pinned;
    PTXBENCH_CUPTI_CHECK(cuptiActivitySetAttribute(
        CUPTI_ACTIVITY_ATTR_MEM_ALLOCATION_TYPE_HOST_PINNED, &size, &pinned));
  }
}

constexpr std::array kActivityKinds{CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
                                    CUPTI_ACTIVITY_KIND_MEMCPY, CUPTI_ACTIVITY_KIND_MEMSET};
constexpr std::array kRuntimeMemsets{CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_v3020,
                                     CUPTI_RUNTIME_TRACE_CBID_cudaMemsetAsync_ptsz_v7000};
// The driver's stream-ordered frees (cudaFreeAsync lands in these): a free inside a call leaves
// its executed counts unclassified unless memcheck checked the call (exec/dynamic_report.hpp).
constexpr std::array kStreamOrderedFrees{CUPTI_DRIVER_TRACE_CBID_cuMemFreeAsync,
                                         CUPTI_DRIVER_TRACE_CBID_cuMemFreeAsync_ptsz};

constexpr std::array kDriverMemsets{CUPTI_DRIVER_TRACE_CBID_cuMemsetD8Async,
                                    CUPTI_DRIVER_TRACE_CBID_cuMemsetD16Async,
                                    CUPTI_DRIVER_TRACE_CBID_cuMemsetD32Async,
                                    CUPTI_DRIVER_TRACE_CBID_cuMemsetD2D8Async,
                                    CUPTI_DRIVER_TRACE_CBID_cuMemsetD2D16Async,
                                    CUPTI_DRIVER_TRACE_CBID_cuMemsetD2D32Async,
                                    CUPTI_DRIVER_TRACE_CBID_cuMemsetD8Async_ptsz,
                                    CUPTI_DRIVER_TRACE_CBID_cuMemsetD16Async_ptsz,
                                    CUPTI_DRIVER_TRACE_CBID_cuMemsetD32Async_ptsz,
                                    CUPTI_DRIVER_TRACE_CBID_cuMemsetD2D8Async_ptsz,
                                    CUPTI_DRIVER_TRACE_CBID_cuMemsetD2D16Async_ptsz,
                                    CUPTI_DRIVER_TRACE_CBID_cuMemsetD2D32Async_ptsz};

// The memsets of the boundary being enqueued on this thread (null outside boundaries), and
// how deep inside a runtime memset call this thread is (its driver call joins the same memset).
struct BoundaryMarking {
  std::vector<MarkedMemset>* memsets = nullptr;
  int runtime_depth = 0;
};
thread_local BoundaryMarking t_marking;

// Marks the memsets enqueued on this thread for its lifetime.
struct MarkingScope {
  explicit MarkingScope(std::vector<MarkedMemset>& memsets) { t_marking = {&memsets, 0}; }
  ~MarkingScope() { t_marking = {}; }
  MarkingScope(const MarkingScope&) = delete;
  MarkingScope& operator=(const MarkingScope&) = delete;
};

std::string memcpy_name(std::uint8_t copy_kind) {
  switch (copy_kind) {
  case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
    return "memcpy HtoD";
  case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
    return "memcpy DtoH";
  case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
    return "memcpy DtoD";
  case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH:
    return "memcpy HtoH";
  case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP:
    return "memcpy PtoP";
  default:
    return fmt::format("memcpy kind {}", copy_kind);
  }
}

template <typename Record>
GpuActivity common_fields(const Record& record, GpuActivity::Kind kind, std::string name) {
  GpuActivity activity;
  activity.kind = kind;
  activity.name = std::move(name);
  activity.stream_id = record.streamId;
  activity.start_ns = record.start;
  activity.end_ns = record.end;
  activity.device_id = record.deviceId;
  activity.context_id = record.contextId;
  activity.correlation_id = record.correlationId;
  return activity;
}

// Start/stop events of the timed calls (grown on demand, reused). Created at the first timed
// call, not with the timer: creating an event creates the CUDA context, which a child creates
// as a step of its own (child/candidate.hpp).
class EventPool {
public:
  void reserve_pairs(std::size_t pairs) {
    while (m_events.size() < 2 * pairs)
      m_events.push_back(cuda::make_event());
  }
  cudaEvent_t start(std::size_t pair) const { return m_events[2 * pair].get(); }
  cudaEvent_t stop(std::size_t pair) const { return m_events[2 * pair + 1].get(); }

private:
  std::vector<cuda::Event> m_events;
};

class CuptiCallTimer final : public CallTimer {
public:
  CuptiCallTimer();
  util::Expected<CallTiming> time_call(const CallFn& call, cudaStream_t stream) override;
  util::Expected<BatchTiming> time_batch(const Batch& batch, cudaStream_t stream) override;
  void set_tracing(bool enabled);
  void add_buffer(const std::uint8_t* buffer, std::size_t valid_bytes);
  void add_dropped(std::size_t dropped) { m_dropped += dropped; }
  void module_loaded(const CUpti_ModuleResourceData& module);
  std::vector<LoadedModule> loaded_modules();
  void stream_ordered_free() { ++m_stream_ordered_frees; }
  std::uint64_t stream_ordered_frees() const { return m_stream_ordered_frees.load(); }

private:
  std::vector<GpuActivity> flush_and_take();
  GpuActivity to_activity(const CUpti_Activity& record);
  static void charge(std::vector<GpuActivity> records, std::uint64_t open_ns,
                     std::uint64_t close_ns, CallTiming& timing);
  int enqueue_batch(const Batch& batch, cudaStream_t stream,
                    std::vector<std::vector<MarkedMemset>>& boundaries);
  void fill_batch(const Batch& batch, BatchAttribution attribution, BatchTiming& timing);

  std::mutex m_mutex;
  std::vector<GpuActivity> m_records;
  std::unordered_map<std::string, std::string> m_function_modules;
  std::vector<LoadedModule> m_modules;
  CUpti_SubscriberHandle m_subscriber = nullptr;
  EventPool m_events;
  std::atomic<std::size_t> m_dropped{0};
  std::atomic<std::uint64_t> m_stream_ordered_frees{0};
};

std::atomic<CuptiCallTimer*> g_timer{nullptr};

void CUPTIAPI buffer_requested(std::uint8_t** buffer, std::size_t* size, std::size_t* max_records) {
  ActivityBuffers& buffers = activity_buffers();
  *buffer = buffers.take();
  *size = *buffer != nullptr ? buffers.buffer_bytes() : 0;
  *max_records = 0;
}

void CUPTIAPI buffer_completed(CUcontext context, std::uint32_t stream_id, std::uint8_t* buffer,
                               std::size_t, std::size_t valid_bytes) {
  if (CuptiCallTimer* timer = g_timer.load(); timer != nullptr) {
    if (valid_bytes > 0)
      timer->add_buffer(buffer, valid_bytes);
    std::size_t dropped = 0;
    if (cuptiActivityGetNumDroppedRecords(context, stream_id, &dropped) == CUPTI_SUCCESS)
      timer->add_dropped(dropped);
  }
  activity_buffers().give_back(buffer);
}

// Marks the correlation ids of the memsets a boundary enqueues on this thread.
void mark_memset(CUpti_CallbackDomain domain, const CUpti_CallbackData& call) {
  BoundaryMarking& marking = t_marking;
  if (marking.memsets == nullptr)
    return;
  const bool runtime = domain == CUPTI_CB_DOMAIN_RUNTIME_API;
  if (call.callbackSite == CUPTI_API_EXIT) {
    if (runtime && marking.runtime_depth > 0)
      --marking.runtime_depth;
    return;
  }
  if (runtime || marking.runtime_depth == 0)
    marking.memsets->push_back({call.correlationId}); // a memset of its own
  else
    marking.memsets->back().push_back(call.correlationId); // the driver call inside it
  if (runtime)
    ++marking.runtime_depth;
}

void CUPTIAPI timer_callback(void* user, CUpti_CallbackDomain domain, CUpti_CallbackId id,
                             const void* data) {
  if (domain == CUPTI_CB_DOMAIN_DRIVER_API &&
      std::find(kStreamOrderedFrees.begin(), kStreamOrderedFrees.end(), id) !=
          kStreamOrderedFrees.end()) {
    if (static_cast<const CUpti_CallbackData*>(data)->callbackSite == CUPTI_API_ENTER)
      static_cast<CuptiCallTimer*>(user)->stream_ordered_free();
    return;
  }
  if (domain == CUPTI_CB_DOMAIN_RUNTIME_API || domain == CUPTI_CB_DOMAIN_DRIVER_API) {
    mark_memset(domain, *static_cast<const CUpti_CallbackData*>(data));
    return;
  }
  if (domain != CUPTI_CB_DOMAIN_RESOURCE || id != CUPTI_CBID_RESOURCE_MODULE_LOADED)
    return;
  const auto* resource = static_cast<const CUpti_ResourceData*>(data);
  const auto* module = static_cast<const CUpti_ModuleResourceData*>(resource->resourceDescriptor);
  if (module != nullptr)
    static_cast<CuptiCallTimer*>(user)->module_loaded(*module);
}

CuptiCallTimer::CuptiCallTimer() {
  PTXBENCH_CUPTI_CHECK(cuptiSubscribe(&m_subscriber, timer_callback, this));
  PTXBENCH_CUPTI_CHECK(cuptiEnableCallback(1, m_subscriber, CUPTI_CB_DOMAIN_RESOURCE,
                                           CUPTI_CBID_RESOURCE_MODULE_LOADED));
  for (auto cbid : kRuntimeMemsets)
    PTXBENCH_CUPTI_CHECK(cuptiEnableCallback(1, m_subscriber, CUPTI_CB_DOMAIN_RUNTIME_API, cbid));
  for (auto cbid : kDriverMemsets)
    PTXBENCH_CUPTI_CHECK(cuptiEnableCallback(1, m_subscriber, CUPTI_CB_DOMAIN_DRIVER_API, cbid));
  for (auto cbid : kStreamOrderedFrees)
    PTXBENCH_CUPTI_CHECK(cuptiEnableCallback(1, m_subscriber, CUPTI_CB_DOMAIN_DRIVER_API, cbid));
  set_record_buffers_from_environment();
  PTXBENCH_CUPTI_CHECK(cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed));
  set_tracing(true);
}

void CuptiCallTimer::set_tracing(bool enabled) {
  if (!enabled)
    PTXBENCH_CUPTI_CHECK(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
  for (CUpti_ActivityKind kind : kActivityKinds) {
    if (enabled)
      PTXBENCH_CUPTI_CHECK(cuptiActivityEnable(kind));
    else
      PTXBENCH_CUPTI_CHECK(cuptiActivityDisable(kind));
  }
}

void CuptiCallTimer::module_loaded(const CUpti_ModuleResourceData& module) {
  CUpti_GetCubinCrcParams crc{};
  crc.size = CUpti_GetCubinCrcParamsSize;
  crc.cubinSize = module.cubinSize;
  crc.cubin = module.pCubin;
  if (module.pCubin == nullptr || cuptiGetCubinCrc(&crc) != CUPTI_SUCCESS)
    crc.cubinCrc = 0;
  const std::string identity =
      fmt::format("cupti-module:{} crc:{:016x}", module.moduleId, crc.cubinCrc);
  const auto* bytes = reinterpret_cast<const std::byte*>(module.pCubin);
  const std::size_t size = module.pCubin ? module.cubinSize : 0;
  const auto names = cubin_function_names({bytes, size});
  LoadedModule loaded{util::sha256_hex({module.pCubin, size}), names};
  std::lock_guard lock(m_mutex);
  for (const std::string& name : names)
    m_function_modules[name] = identity;
  m_modules.push_back(std::move(loaded));
}

std::vector<LoadedModule> CuptiCallTimer::loaded_modules() {
  std::lock_guard lock(m_mutex);
  return m_modules;
}

GpuActivity CuptiCallTimer::to_activity(const CUpti_Activity& record) {
  switch (record.kind) {
  case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
  case CUPTI_ACTIVITY_KIND_KERNEL: {
    const auto& kernel = reinterpret_cast<const CUpti_ActivityKernel10&>(record);
    GpuActivity activity =
        common_fields(kernel, GpuActivity::Kind::kernel, kernel.name != nullptr ? kernel.name : "");
    if (auto it = m_function_modules.find(activity.name); it != m_function_modules.end())
      activity.module = it->second;
    activity.launch = fmt::format(
        "grid {}x{}x{} block {}x{}x{} cluster {}x{}x{} smem {}+{} B (executed {} B) regs {}",
        kernel.gridX, kernel.gridY, kernel.gridZ, kernel.blockX, kernel.blockY, kernel.blockZ,
        kernel.clusterX, kernel.clusterY, kernel.clusterZ, kernel.staticSharedMemory,
        kernel.dynamicSharedMemory, kernel.sharedMemoryExecuted, kernel.registersPerThread);
    return activity;
  }
  case CUPTI_ACTIVITY_KIND_MEMCPY: {
    const auto& copy = reinterpret_cast<const CUpti_ActivityMemcpy6&>(record);
    return common_fields(copy, GpuActivity::Kind::memcpy, memcpy_name(copy.copyKind));
  }
  default: {
    const auto& set = reinterpret_cast<const CUpti_ActivityMemset4&>(record);
    return common_fields(set, GpuActivity::Kind::memset, "memset");
  }
  }
}

void CuptiCallTimer::add_buffer(const std::uint8_t* buffer, std::size_t valid_bytes) {
  std::lock_guard lock(m_mutex);
  CUpti_Activity* record = nullptr;
  auto* data = const_cast<std::uint8_t*>(buffer);
  while (cuptiActivityGetNextRecord(data, valid_bytes, &record) == CUPTI_SUCCESS) {
    const CUpti_ActivityKind kind = record->kind;
    if (kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL || kind == CUPTI_ACTIVITY_KIND_KERNEL ||
        kind == CUPTI_ACTIVITY_KIND_MEMCPY || kind == CUPTI_ACTIVITY_KIND_MEMSET)
      m_records.push_back(to_activity(*record));
  }
}

std::vector<GpuActivity> CuptiCallTimer::flush_and_take() {
  PTXBENCH_CUPTI_CHECK(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
  std::lock_guard lock(m_mutex);
  return std::exchange(m_records, {});
}

void CuptiCallTimer::charge(std::vector<GpuActivity> records, std::uint64_t open_ns,
                            std::uint64_t close_ns, CallTiming& timing) {
  std::erase_if(records, [&](const GpuActivity& a) { return a.start_ns < open_ns; });
  std::sort(records.begin(), records.end(),
            [](const GpuActivity& a, const GpuActivity& b) { return a.start_ns < b.start_ns; });
  std::uint64_t first = UINT64_MAX, last = 0;
  for (const GpuActivity& activity : records) {
    if (activity.start_ns > close_ns || activity.end_ns > close_ns)
      ++timing.late_activities;
    if (activity.start_ns > close_ns)
      continue;
    first = std::min(first, activity.start_ns);
    last = std::max(last, activity.end_ns);
  }
  timing.late_work = timing.late_activities > 0;
  timing.latency_ms = last > first ? static_cast<double>(last - first) * 1e-6 : 0.0;
  timing.activities = std::move(records);
}

int first_failure(int status, cudaError_t error) {
  return status != 0 ? status : static_cast<int>(error);
}

util::Expected<CallTiming> CuptiCallTimer::time_call(const CallFn& call, cudaStream_t stream) {
  PTXBENCH_CUDA_TRY(cudaDeviceSynchronize(), util::ErrorKind::invalid_input);
  m_events.reserve_pairs(1);
  CallTiming timing;
  std::uint64_t open_ns = 0, close_ns = 0;
  PTXBENCH_CUPTI_CHECK(cuptiGetTimestamp(&open_ns));
  // One statement per step: the order of record, call, record must not be left to argument
  // evaluation order.
  int status = static_cast<int>(cudaEventRecord(m_events.start(0), stream));
  if (status == 0)
    status = call(stream);
  status = first_failure(status, cudaEventRecord(m_events.stop(0), stream));
  status = first_failure(status, cudaStreamSynchronize(stream));
  PTXBENCH_CUPTI_CHECK(cuptiGetTimestamp(&close_ns));
  timing.call_status = first_failure(status, cudaDeviceSynchronize());
  charge(flush_and_take(), open_ns, close_ns, timing);
  float event_ms = 0.0f;
  if (timing.call_status == 0 &&
      cudaEventElapsedTime(&event_ms, m_events.start(0), m_events.stop(0)) == cudaSuccess)
    timing.event_ms = event_ms;
  return timing;
}

// Enqueues boundary, (start event,) call, (stop event) per call, marking each boundary's
// memsets; stops at the first failing call and returns its status.
int CuptiCallTimer::enqueue_batch(const Batch& batch, cudaStream_t stream,
                                  std::vector<std::vector<MarkedMemset>>& boundaries) {
  boundaries.assign(static_cast<std::size_t>(batch.calls), {});
  for (int index = 0; index < batch.calls; ++index) {
    {
      MarkingScope marking(boundaries[static_cast<std::size_t>(index)]);
      batch.boundary(index);
    }
    const bool timed = index >= batch.first_timed;
    const auto pair = static_cast<std::size_t>(index - batch.first_timed);
    int status = timed ? static_cast<int>(cudaEventRecord(m_events.start(pair), stream)) : 0;
    if (status == 0)
      status = batch.call(stream);
    if (timed)
      status = first_failure(status, cudaEventRecord(m_events.stop(pair), stream));
    if (status != 0) {
      boundaries.resize(static_cast<std::size_t>(index) + 1);
      return status;
    }
  }
  return 0;
}

void CuptiCallTimer::fill_batch(const Batch& batch, BatchAttribution attribution,
                                BatchTiming& timing) {
  timing.unattributable = std::move(attribution.unattributable);
  timing.min_gap_ns = attribution.min_gap_ns;
  if (!timing.unattributable.empty())
    return;
  for (int index = batch.first_timed; index < batch.calls; ++index) {
    const auto pair = static_cast<std::size_t>(index - batch.first_timed);
    CallTiming call;
    call.latency_ms = attribution.latency_ms[static_cast<std::size_t>(index)];
    call.activities = std::move(attribution.calls[static_cast<std::size_t>(index)]);
    float event_ms = 0.0f;
    if (cudaEventElapsedTime(&event_ms, m_events.start(pair), m_events.stop(pair)) == cudaSuccess)
      call.event_ms = event_ms;
    timing.timed.push_back(std::move(call));
  }
}

util::Expected<BatchTiming> CuptiCallTimer::time_batch(const Batch& batch, cudaStream_t stream) {
  if (batch.calls <= 0 || batch.first_timed < 0 || batch.first_timed > batch.calls)
    return util::make_error(util::ErrorKind::invalid_input, "a batch needs calls to time");
  m_events.reserve_pairs(static_cast<std::size_t>(batch.calls - batch.first_timed));
  PTXBENCH_CUDA_TRY(cudaDeviceSynchronize(), util::ErrorKind::invalid_input);
  flush_and_take();
  const std::size_t dropped_before = m_dropped.load();
  BatchTiming timing;
  std::vector<std::vector<MarkedMemset>> boundaries;
  int status = enqueue_batch(batch, stream, boundaries);
  status = first_failure(status, cudaStreamSynchronize(stream));
  std::uint64_t close_ns = 0;
  PTXBENCH_CUPTI_CHECK(cuptiGetTimestamp(&close_ns));
  timing.call_status = first_failure(status, cudaDeviceSynchronize());
  std::vector<GpuActivity> records = flush_and_take();
  if (timing.call_status != 0)
    return timing;
  if (const std::size_t dropped = m_dropped.load() - dropped_before; dropped > 0) {
    timing.unattributable = fmt::format("CUPTI dropped {} activity records", dropped);
    return timing;
  }
  fill_batch(batch, attribute_batch(std::move(records), boundaries, close_ns), timing);
  return timing;
}

} // namespace

util::Expected<CallTimer*> cupti_call_timer() {
  static std::mutex creation;
  std::lock_guard lock(creation);
  if (CuptiCallTimer* timer = g_timer.load())
    return static_cast<CallTimer*>(timer);
  PTXBENCH_TRY(cuda::require_device());
  static CuptiCallTimer timer; // process lifetime: CUPTI may call back until exit
  g_timer.store(&timer);
  return static_cast<CallTimer*>(&timer);
}

std::vector<LoadedModule> cupti_loaded_modules() {
  CuptiCallTimer* timer = g_timer.load();
  return timer != nullptr ? timer->loaded_modules() : std::vector<LoadedModule>{};
}

std::uint64_t cupti_stream_ordered_frees() {
  CuptiCallTimer* timer = g_timer.load();
  return timer != nullptr ? timer->stream_ordered_frees() : 0;
}

ActivityTracingPause::ActivityTracingPause() {
  if (CuptiCallTimer* timer = g_timer.load()) {
    timer->set_tracing(false);
    m_paused = true;
  }
}

ActivityTracingPause::~ActivityTracingPause() {
  if (m_paused)
    g_timer.load()->set_tracing(true);
}

} // namespace ptxbench::measure
