// Move-only owners of device memory: the supervisor's buffers, the call slot it shares with
// the candidate child, and the child's mappings of that slot.
//
// The slot is shared one of two ways (`Sharing`). By default its buffers are allocations made
// with the driver's virtual-memory API and exported as POSIX descriptors, which the supervisor
// passes over a Unix socket (util/descriptor_passing.hpp) and the child imports and maps with
// the same calls and the same 2 MiB granularity as memory of its own. The fallback is CUDA IPC
// (cudaIpcGetMemHandle / cudaIpcOpenMemHandle), where the device or the environment asks for it
// (PTXBENCH_BUFFER_SHARING=cuda_ipc). Why not CUDA IPC by default: a kernel can run slower on
// an IPC-opened buffer than on memory of the child's own, which moved a GQA problem's A/A
// outside ± 0.01 (docs/evaluation.md "The call slot's memory" has the measurement).
//
// Invariants: the supervisor owns every physical allocation of the slot; a child's mapping
// holds its own reference, so neither a child that unmaps, frees or dies nor one that never
// maps can free memory the supervisor still reads. Zero-sized tensors get a distinct, valid
// allocation.
#pragma once

#include "cuda/owned.hpp"
#include "protocol/protocol.hpp"
#include "util/error.hpp"
#include "util/process.hpp"

#include <cstddef>
#include <cstdint>
#include <cuda_runtime.h>
#include <string>
#include <string_view>

namespace ptxbench::protocol {

// One cudaMalloc allocation (never a sub-range: an IPC handle names a whole allocation).
class DeviceBuffer {
public:
  DeviceBuffer() = default;
  static util::Expected<DeviceBuffer> allocate(std::size_t bytes);

  void* data() const { return m_memory.get(); }
  std::size_t bytes() const { return m_bytes; }
  // The cudaIpcMemHandle_t of this allocation as lower-case hex (128 characters).
  std::string ipc_handle_hex() const;

private:
  cuda::DeviceMemory m_memory;
  std::size_t m_bytes = 0;
};

// How the call slot reaches the child. Explicit values.
enum class Sharing : std::uint8_t { cuda_ipc = 1, file_descriptor = 2 };
std::string_view to_string(Sharing sharing);

// file_descriptor where the current device supports the virtual-memory API with POSIX
// descriptors, unless PTXBENCH_BUFFER_SHARING=cuda_ipc; ErrorKind::invalid_input for any other
// value of that variable.
util::Expected<Sharing> preferred_sharing();

// A reserved and mapped range of the driver's virtual-memory API, readable and writable by the
// current device; unmapped and freed on destruction (after the device is synchronized, as
// cudaFree would). Owns the physical allocation's handle where it made it.
class VirtualMapping {
public:
  VirtualMapping() = default;
  // A new allocation of at least `bytes` (rounded up to the granularity), exportable as a
  // POSIX descriptor.
  static util::Expected<VirtualMapping> allocate(std::size_t bytes);
  // Maps the allocation `descriptor` names (exported by another process), `span_bytes` long.
  static util::Expected<VirtualMapping> import(const util::Fd& descriptor, std::size_t span_bytes);
  VirtualMapping(VirtualMapping&& other) noexcept;
  VirtualMapping& operator=(VirtualMapping&& other) noexcept;
  VirtualMapping(const VirtualMapping&) = delete;
  VirtualMapping& operator=(const VirtualMapping&) = delete;
  ~VirtualMapping() { reset(); }

  void* data() const;
  std::size_t span_bytes() const { return m_span; }
  // A new descriptor for the allocation (the caller closes it once sent).
  util::Expected<util::Fd> export_descriptor() const;

private:
  util::Status map(int device);
  void reset() noexcept;

  std::uintptr_t m_address = 0;
  std::size_t m_span = 0;
  std::uint64_t m_allocation = 0; // CUmemGenericAllocationHandle; 0 once mapped and imported
};

// One buffer of the call slot, allocated the way `sharing` says.
class SharedBuffer {
public:
  SharedBuffer() = default;
  static util::Expected<SharedBuffer> allocate(std::size_t bytes, Sharing sharing);

  void* data() const { return m_sharing == Sharing::cuda_ipc ? m_ipc.data() : m_vmm.data(); }
  std::size_t bytes() const { return m_bytes; }
  Sharing sharing() const { return m_sharing; }
  // What the child is told of it (a descriptor travels beside the request, see
  // export_descriptor).
  BufferHandle handle(bool output) const;
  util::Expected<util::Fd> export_descriptor() const { return m_vmm.export_descriptor(); }

private:
  Sharing m_sharing = Sharing::cuda_ipc;
  DeviceBuffer m_ipc;
  VirtualMapping m_vmm;
  std::size_t m_bytes = 0;
};

struct IpcClose {
  void operator()(void* p) const noexcept { static_cast<void>(cudaIpcCloseMemHandle(p)); }
};

// A buffer of another process opened with cudaIpcOpenMemHandle (closed on destruction).
class IpcMapping {
public:
  IpcMapping() = default;
  static util::Expected<IpcMapping> open(const std::string& handle_hex, std::size_t bytes);

  void* data() const { return m_mapping.get(); }
  std::size_t bytes() const { return m_bytes; }

private:
  cuda::Owned<void*, IpcClose> m_mapping;
  std::size_t m_bytes = 0;
};

} // namespace ptxbench::protocol
