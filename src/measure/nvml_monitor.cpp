#include "measure/nvml_monitor.hpp"

#include "measure/check.hpp"

#include <array>
#include <dlfcn.h>
#include <fmt/format.h>
#include <nvml.h>
#include <utility>

// NVML calls go through the resolved table `lib`; the error name comes from nvmlErrorString.
#define PTXBENCH_NVML_TRY(lib, call)                                                               \
  do {                                                                                             \
    const nvmlReturn_t ptxbench_status_ = (lib).call;                                              \
    if (ptxbench_status_ != NVML_SUCCESS)                                                          \
      return ::ptxbench::util::make_error(                                                         \
          ::ptxbench::util::ErrorKind::unsupported,                                                \
          ::ptxbench::cuda::detail::describe_failure("NVML", (lib).error_string(ptxbench_status_), \
                                                     "", __FILE__, __LINE__, #call));              \
  } while (0)

namespace ptxbench::measure {

struct GpuMonitor::Library {
  void* handle = nullptr;
  bool initialised = false;
  nvmlDevice_t device = nullptr;
  decltype(&nvmlInit_v2) init = nullptr;
  decltype(&nvmlShutdown) shutdown = nullptr;
  decltype(&nvmlErrorString) error_string = nullptr;
  decltype(&nvmlDeviceGetHandleByPciBusId_v2) handle_by_pci = nullptr;
  decltype(&nvmlDeviceGetName) name = nullptr;
  decltype(&nvmlDeviceGetClockInfo) clock = nullptr;
  decltype(&nvmlDeviceGetMaxClockInfo) max_clock = nullptr;
  decltype(&nvmlDeviceGetPowerUsage) power = nullptr;
  decltype(&nvmlDeviceGetTemperature) temperature = nullptr;
  decltype(&nvmlDeviceGetCurrentClocksEventReasons) reasons = nullptr;
  // Optional: null where the driver's NVML lacks the function (the reading is then unset).
  decltype(&nvmlDeviceGetTotalEccErrors) ecc = nullptr;
  decltype(&nvmlDeviceGetTemperatureThreshold) threshold = nullptr;
  decltype(&nvmlEventSetCreate) event_set_create = nullptr;
  decltype(&nvmlDeviceRegisterEvents) register_events = nullptr;
  decltype(&nvmlEventSetWait_v2) event_set_wait = nullptr;
  decltype(&nvmlEventSetFree) event_set_free = nullptr;
  nvmlEventSet_t events = nullptr; // watch_xid_errors()

  ~Library() {
    if (events != nullptr)
      event_set_free(events);
    if (initialised)
      shutdown();
    if (handle != nullptr)
      dlclose(handle);
  }
};

namespace {

struct ReasonName {
  std::uint64_t bit;
  std::string_view name;
  bool slows;
};

constexpr std::array kReasons{
    ReasonName{0x1, "gpu_idle", false},
    ReasonName{0x2, "applications_clocks_setting", false},
    ReasonName{0x4, "sw_power_cap", true},
    ReasonName{0x8, "hw_slowdown", true},
    ReasonName{0x10, "sync_boost", false},
    ReasonName{0x20, "sw_thermal_slowdown", true},
    ReasonName{0x40, "hw_thermal_slowdown", true},
    ReasonName{0x80, "hw_power_brake_slowdown", true},
    ReasonName{0x100, "display_clock_setting", false},
};
static_assert(kReasons[2].bit == nvmlClocksEventReasonSwPowerCap, "NVML bit values");

// Events read per take_xid_errors(): a GPU that reports more at once is broken either way.
constexpr int kMaxXidEventsPerTake = 64;

// Whether NVML answered that this GPU, driver or user cannot have the reading ("where
// available"), as opposed to failing to give it.
bool not_offered(nvmlReturn_t status) {
  return status == NVML_ERROR_NOT_SUPPORTED || status == NVML_ERROR_NO_PERMISSION ||
         status == NVML_ERROR_FUNCTION_NOT_FOUND;
}

util::Error nvml_failure(const GpuMonitor::Library& lib, nvmlReturn_t status, int line,
                         const char* call) {
  return util::make_error(
      util::ErrorKind::unsupported,
      cuda::detail::describe_failure("NVML", lib.error_string(status), "", __FILE__, line, call));
}

template <typename Fn> bool resolve(void* handle, const char* symbol, Fn& out) {
  out = reinterpret_cast<Fn>(dlsym(handle, symbol));
  return out != nullptr;
}

util::Status resolve_all(GpuMonitor::Library& lib) {
  const bool ok = resolve(lib.handle, "nvmlInit_v2", lib.init) &&
                  resolve(lib.handle, "nvmlShutdown", lib.shutdown) &&
                  resolve(lib.handle, "nvmlErrorString", lib.error_string) &&
                  resolve(lib.handle, "nvmlDeviceGetHandleByPciBusId_v2", lib.handle_by_pci) &&
                  resolve(lib.handle, "nvmlDeviceGetName", lib.name) &&
                  resolve(lib.handle, "nvmlDeviceGetClockInfo", lib.clock) &&
                  resolve(lib.handle, "nvmlDeviceGetMaxClockInfo", lib.max_clock) &&
                  resolve(lib.handle, "nvmlDeviceGetPowerUsage", lib.power) &&
                  resolve(lib.handle, "nvmlDeviceGetTemperature", lib.temperature);
  if (!ok)
    return util::make_error(util::ErrorKind::unsupported,
                            fmt::format("libnvidia-ml.so.1 lacks a function: {}", dlerror()));
  // The pre-rename name is a fallback for older drivers.
  if (!resolve(lib.handle, "nvmlDeviceGetCurrentClocksEventReasons", lib.reasons) &&
      !resolve(lib.handle, "nvmlDeviceGetCurrentClocksThrottleReasons", lib.reasons))
    return util::make_error(util::ErrorKind::unsupported, "NVML has no clock-event reasons");
  resolve(lib.handle, "nvmlDeviceGetTotalEccErrors", lib.ecc);
  resolve(lib.handle, "nvmlDeviceGetTemperatureThreshold", lib.threshold);
  const bool events = resolve(lib.handle, "nvmlEventSetCreate", lib.event_set_create) &&
                      resolve(lib.handle, "nvmlDeviceRegisterEvents", lib.register_events) &&
                      resolve(lib.handle, "nvmlEventSetWait_v2", lib.event_set_wait) &&
                      resolve(lib.handle, "nvmlEventSetFree", lib.event_set_free);
  if (!events)
    lib.event_set_create = nullptr;
  return util::Ok{};
}

// The readings some GPUs and drivers do not offer: left unset where NVML says so.
util::Status read_optional(const GpuMonitor::Library& lib, GpuSnapshot& snap) {
  if (lib.ecc != nullptr) {
    unsigned long long count = 0;
    const nvmlReturn_t status =
        lib.ecc(lib.device, NVML_MEMORY_ERROR_TYPE_UNCORRECTED, NVML_VOLATILE_ECC, &count);
    if (status == NVML_SUCCESS)
      snap.ecc_uncorrected_volatile = count;
    else if (!not_offered(status))
      return nvml_failure(lib, status, __LINE__, "nvmlDeviceGetTotalEccErrors(...)");
  }
  if (lib.threshold != nullptr) {
    unsigned celsius = 0;
    const nvmlReturn_t status =
        lib.threshold(lib.device, NVML_TEMPERATURE_THRESHOLD_SLOWDOWN, &celsius);
    if (status == NVML_SUCCESS)
      snap.slowdown_temperature_c = celsius;
    else if (!not_offered(status))
      return nvml_failure(lib, status, __LINE__, "nvmlDeviceGetTemperatureThreshold(...)");
  }
  return util::Ok{};
}

util::Status open_device(GpuMonitor::Library& lib, int cuda_device) {
  std::array<char, 64> bus_id{};
  PTXBENCH_CUDA_TRY(
      cudaDeviceGetPCIBusId(bus_id.data(), static_cast<int>(bus_id.size()), cuda_device),
      util::ErrorKind::unsupported);
  PTXBENCH_NVML_TRY(lib, init());
  lib.initialised = true;
  PTXBENCH_NVML_TRY(lib, handle_by_pci(bus_id.data(), &lib.device));
  return util::Ok{};
}

} // namespace

std::vector<std::string> decode_clock_event_reasons(std::uint64_t mask) {
  std::vector<std::string> names;
  std::uint64_t known = 0;
  for (const ReasonName& reason : kReasons) {
    known |= reason.bit;
    if ((mask & reason.bit) != 0)
      names.emplace_back(reason.name);
  }
  for (std::uint64_t bit = 1; bit != 0; bit <<= 1)
    if ((mask & bit) != 0 && (known & bit) == 0)
      names.push_back(fmt::format("bit_{:#x}", bit));
  return names;
}

bool reasons_slow_the_gpu(std::uint64_t mask) {
  for (const ReasonName& reason : kReasons)
    if (reason.slows && (mask & reason.bit) != 0)
      return true;
  return false;
}

util::Expected<GpuMonitor> GpuMonitor::create(int cuda_device) {
  auto lib = std::make_unique<Library>();
  lib->handle = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib->handle == nullptr)
    return util::make_error(util::ErrorKind::unsupported,
                            fmt::format("NVML is not available: {}", dlerror()));
  PTXBENCH_TRY(resolve_all(*lib));
  PTXBENCH_TRY(open_device(*lib, cuda_device));
  return GpuMonitor(std::move(lib));
}

util::Expected<GpuSnapshot> GpuMonitor::snapshot() const {
  const Library& lib = *m_library;
  GpuSnapshot snap;
  std::array<char, NVML_DEVICE_NAME_V2_BUFFER_SIZE> name{};
  PTXBENCH_NVML_TRY(lib, name(lib.device, name.data(), static_cast<unsigned>(name.size())));
  snap.device_name = name.data();
  PTXBENCH_NVML_TRY(lib, clock(lib.device, NVML_CLOCK_SM, &snap.sm_clock_mhz));
  PTXBENCH_NVML_TRY(lib, clock(lib.device, NVML_CLOCK_MEM, &snap.memory_clock_mhz));
  PTXBENCH_NVML_TRY(lib, max_clock(lib.device, NVML_CLOCK_SM, &snap.max_sm_clock_mhz));
  unsigned power_mw = 0;
  PTXBENCH_NVML_TRY(lib, power(lib.device, &power_mw));
  snap.power_w = power_mw / 1000.0;
  PTXBENCH_NVML_TRY(lib, temperature(lib.device, NVML_TEMPERATURE_GPU, &snap.temperature_c));
  unsigned long long reasons = 0;
  PTXBENCH_NVML_TRY(lib, reasons(lib.device, &reasons));
  snap.clock_event_reasons = reasons;
  snap.clock_event_names = decode_clock_event_reasons(reasons);
  PTXBENCH_TRY(read_optional(lib, snap));
  return snap;
}

util::Expected<bool> GpuMonitor::watch_xid_errors() {
  Library& lib = *m_library;
  if (lib.events != nullptr)
    return true;
  if (lib.event_set_create == nullptr)
    return false;
  nvmlEventSet_t set = nullptr;
  PTXBENCH_NVML_TRY(lib, event_set_create(&set));
  const nvmlReturn_t status = lib.register_events(lib.device, nvmlEventTypeXidCriticalError, set);
  if (status != NVML_SUCCESS) {
    lib.event_set_free(set);
    if (not_offered(status))
      return false;
    return nvml_failure(lib, status, __LINE__, "nvmlDeviceRegisterEvents(...)");
  }
  lib.events = set;
  return true;
}

util::Expected<std::vector<std::uint64_t>> GpuMonitor::take_xid_errors() {
  const Library& lib = *m_library;
  std::vector<std::uint64_t> xids;
  for (int i = 0; lib.events != nullptr && i < kMaxXidEventsPerTake; ++i) {
    nvmlEventData_t data{};
    const nvmlReturn_t status = lib.event_set_wait(lib.events, &data, 0);
    if (status == NVML_ERROR_TIMEOUT)
      break;
    if (status != NVML_SUCCESS)
      return nvml_failure(lib, status, __LINE__, "nvmlEventSetWait_v2(...)");
    if ((data.eventType & nvmlEventTypeXidCriticalError) != 0)
      xids.push_back(data.eventData);
  }
  return xids;
}

GpuMonitor::GpuMonitor(std::unique_ptr<Library> library) : m_library(std::move(library)) {}
GpuMonitor::GpuMonitor(GpuMonitor&&) noexcept = default;
GpuMonitor& GpuMonitor::operator=(GpuMonitor&&) noexcept = default;
GpuMonitor::~GpuMonitor() = default;

} // namespace ptxbench::measure
