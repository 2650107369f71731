#include "protocol/device_buffer.hpp"

#include "cuda/check.hpp"

#include <cstdlib>
#include <cstring>
#include <cuda.h>
#include <utility>

// The driver API's pair of cuda/check.hpp's macros, for this file's virtual-memory calls.
#define PTXBENCH_CU_TRY(call, kind)                                                                \
  do {                                                                                             \
    const CUresult ptxbench_cu_status_ = (call);                                                   \
    if (ptxbench_cu_status_ != CUDA_SUCCESS)                                                       \
      return driver_failure(ptxbench_cu_status_, kind, __FILE__, __LINE__, #call);                 \
  } while (false)

namespace ptxbench::protocol {
namespace {

constexpr char kHexDigits[] = "0123456789abcdef";

constexpr std::size_t kEmptyTensorBytes = 256;
constexpr unsigned int kDriverApiVersion = 12000; // the ABI of the calls below

// The driver's virtual-memory calls, looked up through the runtime
// (cudaGetDriverEntryPointByVersion) rather than linked: libcuda.so.1 exists only where a driver
// is installed, and the CPU-only machines that build and test ptxbench have none. In the child
// the lookup passes its entry-point guard (none of these loads GPU code).
struct Driver {
  decltype(&::cuGetErrorName) error_name = nullptr;
  decltype(&::cuDeviceGet) device = nullptr;
  decltype(&::cuDeviceGetAttribute) attribute = nullptr;
  decltype(&::cuMemGetAllocationGranularity) granularity = nullptr;
  decltype(&::cuMemCreate) create = nullptr;
  decltype(&::cuMemRelease) release = nullptr;
  decltype(&::cuMemAddressReserve) reserve = nullptr;
  decltype(&::cuMemAddressFree) address_free = nullptr;
  decltype(&::cuMemMap) map = nullptr;
  decltype(&::cuMemUnmap) unmap = nullptr;
  decltype(&::cuMemSetAccess) set_access = nullptr;
  decltype(&::cuMemExportToShareableHandle) export_handle = nullptr;
  decltype(&::cuMemImportFromShareableHandle) import_handle = nullptr;
  bool complete = false;
};

template <typename Fn> bool look_up(Fn& function, const char* name) {
  void* found = nullptr;
  cudaDriverEntryPointQueryResult result{};
  if (cudaGetDriverEntryPointByVersion(name, &found, kDriverApiVersion, cudaEnableDefault,
                                       &result) != cudaSuccess ||
      result != cudaDriverEntryPointSuccess)
    return false;
  function = reinterpret_cast<Fn>(found);
  return function != nullptr;
}

const Driver& driver() {
  static const Driver table = [] {
    Driver d;
    d.complete = look_up(d.error_name, "cuGetErrorName") && look_up(d.device, "cuDeviceGet") &&
                 look_up(d.attribute, "cuDeviceGetAttribute") &&
                 look_up(d.granularity, "cuMemGetAllocationGranularity") &&
                 look_up(d.create, "cuMemCreate") && look_up(d.release, "cuMemRelease") &&
                 look_up(d.reserve, "cuMemAddressReserve") &&
                 look_up(d.address_free, "cuMemAddressFree") && look_up(d.map, "cuMemMap") &&
                 look_up(d.unmap, "cuMemUnmap") && look_up(d.set_access, "cuMemSetAccess") &&
                 look_up(d.export_handle, "cuMemExportToShareableHandle") &&
                 look_up(d.import_handle, "cuMemImportFromShareableHandle");
    return d;
  }();
  return table;
}

util::Error driver_failure(CUresult status, util::ErrorKind kind, const char* file, int line,
                           const char* call) {
  const char* name = nullptr;
  if (driver().error_name == nullptr || driver().error_name(status, &name) != CUDA_SUCCESS ||
      name == nullptr)
    name = "CUDA_ERROR_UNKNOWN";
  return util::make_error(
      kind, cuda::detail::describe_failure("CUDA driver", name, "", file, line, call));
}

int hex_value(char c) {
  if (c >= '0' && c <= '9')
    return c - '0';
  if (c >= 'a' && c <= 'f')
    return c - 'a' + 10;
  return -1;
}

util::Status driver_complete() {
  if (!driver().complete)
    return util::make_error(util::ErrorKind::unsupported,
                            "the CUDA driver's virtual-memory calls are not available");
  return util::Ok{};
}

util::Expected<int> current_device() {
  int device = 0;
  PTXBENCH_CUDA_TRY(cudaGetDevice(&device), util::ErrorKind::unsupported);
  return device;
}

CUmemAllocationProp allocation_properties(int device) {
  CUmemAllocationProp properties{};
  properties.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  properties.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  properties.location.id = device;
  properties.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  return properties;
}

bool device_attribute(CUdevice_attribute attribute, int ordinal) {
  CUdevice device = 0;
  int value = 0;
  return driver().device(&device, ordinal) == CUDA_SUCCESS &&
         driver().attribute(&value, attribute, device) == CUDA_SUCCESS && value != 0;
}

} // namespace

std::string_view to_string(Sharing sharing) {
  return sharing == Sharing::file_descriptor ? "file_descriptor" : "cuda_ipc";
}

util::Expected<Sharing> preferred_sharing() {
  const char* asked = std::getenv("PTXBENCH_BUFFER_SHARING");
  const std::string_view value = asked != nullptr ? asked : "";
  if (value == "cuda_ipc")
    return Sharing::cuda_ipc;
  if (!value.empty() && value != "file_descriptor")
    return util::make_error(util::ErrorKind::invalid_input,
                            "PTXBENCH_BUFFER_SHARING is \"" + std::string(value) +
                                "\"; it takes file_descriptor or cuda_ipc");
  PTXBENCH_TRY_ASSIGN(int device, current_device());
  const bool supported =
      driver().complete &&
      device_attribute(CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, device) &&
      device_attribute(CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED, device);
  if (!supported && !value.empty())
    return util::make_error(util::ErrorKind::unsupported,
                            "PTXBENCH_BUFFER_SHARING=file_descriptor, and this device or driver "
                            "cannot share memory by POSIX descriptor");
  return supported ? Sharing::file_descriptor : Sharing::cuda_ipc;
}

VirtualMapping::VirtualMapping(VirtualMapping&& other) noexcept
    : m_address(std::exchange(other.m_address, 0)), m_span(std::exchange(other.m_span, 0)),
      m_allocation(std::exchange(other.m_allocation, 0)) {}

VirtualMapping& VirtualMapping::operator=(VirtualMapping&& other) noexcept {
  if (this != &other) {
    reset();
    m_address = std::exchange(other.m_address, 0);
    m_span = std::exchange(other.m_span, 0);
    m_allocation = std::exchange(other.m_allocation, 0);
  }
  return *this;
}

void* VirtualMapping::data() const {
  // NOLINTNEXTLINE(performance-no-int-to-ptr): the driver's device addresses are integers
  return reinterpret_cast<void*>(m_address);
}

void VirtualMapping::reset() noexcept {
  if (m_address != 0) {
    static_cast<void>(cudaDeviceSynchronize());
    static_cast<void>(driver().unmap(m_address, m_span));
    static_cast<void>(driver().address_free(m_address, m_span));
  }
  if (m_allocation != 0)
    static_cast<void>(driver().release(m_allocation));
  m_address = 0;
  m_span = 0;
  m_allocation = 0;
}

util::Expected<VirtualMapping> VirtualMapping::allocate(std::size_t bytes) {
  PTXBENCH_TRY(driver_complete());
  PTXBENCH_TRY_ASSIGN(int device, current_device());
  const CUmemAllocationProp properties = allocation_properties(device);
  std::size_t granularity = 0;
  PTXBENCH_CU_TRY(
      driver().granularity(&granularity, &properties, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED),
      util::ErrorKind::unsupported);
  const std::size_t wanted = bytes == 0 ? kEmptyTensorBytes : bytes;
  VirtualMapping mapping;
  mapping.m_span = (wanted + granularity - 1) / granularity * granularity;
  CUmemGenericAllocationHandle allocation = 0;
  PTXBENCH_CU_TRY(driver().create(&allocation, mapping.m_span, &properties, 0),
                  util::ErrorKind::unsupported);
  mapping.m_allocation = allocation;
  PTXBENCH_TRY(mapping.map(device));
  return mapping;
}

util::Expected<VirtualMapping> VirtualMapping::import(const util::Fd& descriptor,
                                                      std::size_t span_bytes) {
  PTXBENCH_TRY(driver_complete());
  PTXBENCH_TRY_ASSIGN(int device, current_device());
  CUmemGenericAllocationHandle allocation = 0;
  // The descriptor is passed by value, as an integer in a pointer (the driver's convention).
  // NOLINTNEXTLINE(performance-no-int-to-ptr): that convention
  void* shareable = reinterpret_cast<void*>(static_cast<std::uintptr_t>(descriptor.get()));
  PTXBENCH_CU_TRY(
      driver().import_handle(&allocation, shareable, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR),
      util::ErrorKind::subprocess);
  VirtualMapping mapping;
  mapping.m_allocation = allocation;
  mapping.m_span = span_bytes;
  PTXBENCH_TRY(mapping.map(device));
  // The mapping holds the allocation from here on.
  static_cast<void>(driver().release(std::exchange(mapping.m_allocation, 0)));
  return mapping;
}

util::Status VirtualMapping::map(int device) {
  CUdeviceptr address = 0;
  PTXBENCH_CU_TRY(driver().reserve(&address, m_span, 0, 0, 0), util::ErrorKind::unsupported);
  if (const CUresult mapped = driver().map(address, m_span, 0, m_allocation, 0);
      mapped != CUDA_SUCCESS) {
    static_cast<void>(driver().address_free(address, m_span));
    return driver_failure(mapped, util::ErrorKind::unsupported, __FILE__, __LINE__, "cuMemMap");
  }
  m_address = address;
  CUmemAccessDesc access{};
  access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  access.location.id = device;
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  PTXBENCH_CU_TRY(driver().set_access(address, m_span, &access, 1), util::ErrorKind::unsupported);
  return util::Ok{};
}

util::Expected<util::Fd> VirtualMapping::export_descriptor() const {
  if (m_allocation == 0)
    return util::make_error(util::ErrorKind::invalid_input,
                            "only the process that allocated a buffer exports it");
  int descriptor = -1;
  PTXBENCH_CU_TRY(driver().export_handle(&descriptor, m_allocation,
                                         CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
                  util::ErrorKind::unsupported);
  return util::Fd(descriptor);
}

util::Expected<SharedBuffer> SharedBuffer::allocate(std::size_t bytes, Sharing sharing) {
  SharedBuffer buffer;
  buffer.m_sharing = sharing;
  buffer.m_bytes = bytes;
  if (sharing == Sharing::cuda_ipc) {
    PTXBENCH_TRY_ASSIGN(buffer.m_ipc, DeviceBuffer::allocate(bytes));
  } else {
    PTXBENCH_TRY_ASSIGN(buffer.m_vmm, VirtualMapping::allocate(bytes));
  }
  return buffer;
}

BufferHandle SharedBuffer::handle(bool output) const {
  if (m_sharing == Sharing::cuda_ipc)
    return {m_ipc.ipc_handle_hex(), m_bytes, output, 0};
  return {"", m_bytes, output, m_vmm.span_bytes()};
}

util::Expected<DeviceBuffer> DeviceBuffer::allocate(std::size_t bytes) {
  void* memory = nullptr;
  // Zero-sized tensors still get a distinct, valid allocation.
  PTXBENCH_CUDA_TRY(cudaMalloc(&memory, bytes == 0 ? kEmptyTensorBytes : bytes),
                    util::ErrorKind::unsupported);
  DeviceBuffer buffer;
  buffer.m_memory = cuda::DeviceMemory(memory);
  buffer.m_bytes = bytes;
  return buffer;
}

std::string DeviceBuffer::ipc_handle_hex() const {
  cudaIpcMemHandle_t handle{};
  PTXBENCH_CUDA_CHECK(cudaIpcGetMemHandle(&handle, m_memory.get()));
  std::string hex;
  hex.reserve(2 * sizeof handle.reserved);
  for (char byte : handle.reserved) {
    const auto value = static_cast<unsigned char>(byte);
    hex.push_back(kHexDigits[value >> 4]);
    hex.push_back(kHexDigits[value & 15]);
  }
  return hex;
}

util::Expected<IpcMapping> IpcMapping::open(const std::string& handle_hex, std::size_t bytes) {
  cudaIpcMemHandle_t handle{};
  if (handle_hex.size() != 2 * sizeof handle.reserved)
    return util::make_error(util::ErrorKind::invalid_input, "IPC handle of the wrong length");
  for (std::size_t i = 0; i < sizeof handle.reserved; ++i) {
    const int hi = hex_value(handle_hex[2 * i]), lo = hex_value(handle_hex[2 * i + 1]);
    if (hi < 0 || lo < 0)
      return util::make_error(util::ErrorKind::invalid_input, "IPC handle is not hex");
    handle.reserved[i] = static_cast<char>(hi * 16 + lo);
  }
  void* data = nullptr;
  PTXBENCH_CUDA_TRY(cudaIpcOpenMemHandle(&data, handle, cudaIpcMemLazyEnablePeerAccess),
                    util::ErrorKind::subprocess);
  IpcMapping mapping;
  mapping.m_mapping = cuda::Owned<void*, IpcClose>(data);
  mapping.m_bytes = bytes;
  return mapping;
}

} // namespace ptxbench::protocol
