#include "child/candidate.hpp"

#include "child/entry_point_guard.hpp"
#include "child/system_call_filter.hpp"
#include "cuda/check.hpp"
#include "cuda/device.hpp"
#include "measure/timing.hpp"
#include "protocol/call_status.hpp"
#include "util/descriptor_passing.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <dlfcn.h>
#include <fmt/format.h>
#include <string>
#include <sys/prctl.h>
#include <unistd.h>

namespace ptxbench::child {
namespace {

bool write_line(int fd, const std::string& text) {
  std::string line = text + "\n";
  std::size_t done = 0;
  while (done < line.size()) {
    const ssize_t n = ::write(fd, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

// Reads one '\n'-terminated line; false at end of input.
bool read_line(int fd, std::string& pending, std::string& line) {
  for (;;) {
    if (auto newline = pending.find('\n'); newline != std::string::npos) {
      line = pending.substr(0, newline);
      pending.erase(0, newline + 1);
      return true;
    }
    char buffer[65536];
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    pending.append(buffer, static_cast<std::size_t>(n));
  }
}

std::string dl_error() {
  const char* text = dlerror();
  return text != nullptr ? text : "unknown dlopen error";
}

// Records the wall time since the last lap under `name` in `steps` (ms).
class Laps {
public:
  explicit Laps(trace::Json& steps) : m_steps(steps) {}
  void lap(const char* name) {
    const auto now = std::chrono::steady_clock::now();
    m_steps[name] = std::chrono::duration<double, std::milli>(now - m_since).count();
    m_since = now;
  }

private:
  trace::Json& m_steps;
  std::chrono::steady_clock::time_point m_since = std::chrono::steady_clock::now();
};

} // namespace

CandidateServer::~CandidateServer() {
  // Buffers are unmapped before the library goes; the library is never unloaded (its static
  // destructors could run candidate code after we stopped watching).
  m_sets.clear();
  m_stream.reset();
}

void CandidateServer::start_host() {
  Laps laps(m_startup);
  (void)cuda::device_count(); // driver initialisation; no context yet
  laps.lap("cuda_driver");
  (void)measure::cupti_call_timer(); // tracing on before any module loads; time() reports errors
  laps.lap("cupti_tracing");
  measure::CounterOptions options;
  options.replay = measure::CounterReplay::user;
  options.availability = measure::CounterAvailability::assume;
  auto counter = measure::InstructionCounter::create_with(m_device, std::move(options));
  if (counter)
    m_counter = std::make_unique<measure::InstructionCounter>(std::move(*counter));
  else
    m_counter_error = counter.error().message;
  laps.lap("counter_config");
}

protocol::Reply CandidateServer::prepare(const protocol::Request& request) {
  if (m_startup.empty())
    start_host();
  Laps laps(m_startup);
  if (cudaSetDevice(m_device) != cudaSuccess || cudaFree(nullptr) != cudaSuccess)
    return protocol::Reply::failure(
        protocol::ChildError::cuda,
        fmt::format("cannot create a CUDA context on device {}", m_device));
  laps.lap("context");
  if (!m_stream)
    if (protocol::Reply reply = create_stream(); !reply.ok)
      return reply;
  if (!m_flusher) {
    auto flusher = measure::L2Flusher::create(m_device);
    if (!flusher)
      return protocol::Reply::failure(protocol::ChildError::timer, flusher.error().message);
    m_flusher = std::make_unique<measure::L2Flusher>(std::move(*flusher));
  }
  laps.lap("stream_and_l2_scratch");
  if (request.counter_session && m_counter && !m_counter->session_open()) {
    // A session that cannot open (the counters are busy elsewhere) leaves `count` to open
    // its own; the reason travels with the start-up steps.
    if (auto warm = m_counter->open_session(measure::launch_warmup_kernel, m_stream.get()); !warm)
      m_startup["counter_session_error"] = warm.error().message;
    laps.lap("counter_session");
  }
  protocol::Reply reply;
  reply.startup = m_startup;
  reply.counter_session_open = m_counter && m_counter->session_open();
  return reply;
}

int CandidateServer::serve(int request_fd, int reply_fd, int buffer_fd) {
  m_buffer_fd = buffer_fd;
  // Not dumpable: no other process of the same user (another candidate's child, a spare that
  // will run the next candidate) may attach to this one or open its /proc memory, and no core
  // file keeps its inputs. The single-call mode runs under compute-sanitizer and ncu, which
  // inject themselves, and stays as it is.
  (void)prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  std::string pending, line;
  std::size_t modules_sent = 0;
  while (read_line(request_fd, pending, line)) {
    auto request = protocol::decode_request(line);
    protocol::Reply reply =
        request ? handle(*request)
                : protocol::Reply::failure(protocol::ChildError::protocol, request.error().message);
    reply.refused = refused_entry_points();
    // Each module once: the modules loaded since the last reply (the supervisor keeps the list).
    std::vector<measure::LoadedModule> loaded = measure::cupti_loaded_modules();
    for (std::size_t m = std::min(modules_sent, loaded.size()); m < loaded.size(); ++m)
      reply.modules.push_back({std::move(loaded[m].sha256), std::move(loaded[m].functions)});
    modules_sent = loaded.size();
    reply.stream_ordered_frees = measure::cupti_stream_ordered_frees() - m_own_stream_ordered_frees;
    if (request)
      reply.id = request->id;
    if (!write_line(reply_fd, encode(reply)))
      return 1;
    if (request && request->op == protocol::RequestOp::exit)
      return 0;
    // A CUDA error after a call may be sticky: this process is done for.
    if (reply.error == protocol::ChildError::cuda)
      return 2;
  }
  return 0;
}

protocol::Reply CandidateServer::handle(const protocol::Request& request) {
  // A calibration runs the harness's own kernel: the supervisor's cap on the calibrations
  // comes from those before the load (exec/trial_pairs.hpp calibration_cap).
  const bool calibration = request.op == protocol::RequestOp::time && request.calibrate;
  const bool before_load = request.op == protocol::RequestOp::load ||
                           request.op == protocol::RequestOp::exit ||
                           request.op == protocol::RequestOp::prepare ||
                           request.op == protocol::RequestOp::end_session ||
                           request.op == protocol::RequestOp::ping || calibration;
  if (!before_load && m_invoke == nullptr)
    return protocol::Reply::failure(protocol::ChildError::protocol, "no candidate loaded");
  if (!before_load && request.op != protocol::RequestOp::time &&
      (request.set < 0 || request.set >= static_cast<int>(m_sets.size())))
    return protocol::Reply::failure(protocol::ChildError::protocol,
                                    "no input set " + std::to_string(request.set));
  switch (request.op) {
  case protocol::RequestOp::prepare:
    return prepare(request);
  case protocol::RequestOp::end_session:
    if (m_counter)
      m_counter->close_session();
    return protocol::Reply{};
  case protocol::RequestOp::load:
    if (m_startup.empty())
      start_host();
    return load(request);
  case protocol::RequestOp::call:
    return call(request.set);
  case protocol::RequestOp::time:
    return time(request);
  case protocol::RequestOp::count:
    return count(request.set);
  case protocol::RequestOp::exit:
  case protocol::RequestOp::ping:
    return protocol::Reply{};
  }
  return protocol::Reply::failure(protocol::ChildError::protocol, "unknown request");
}

// The slot is mapped first: before the filter (descriptors arrive by recvmsg) and before any
// candidate code has run in this process.
protocol::Reply CandidateServer::load(const protocol::Request& request) {
  if (protocol::Reply mapped = map_sets(request); !mapped.ok)
    return mapped;
  if (m_host == nullptr)
    if (protocol::Reply reply = filter_system_calls(); !reply.ok)
      return reply;
  if (protocol::Reply reply = m_host != nullptr ? load_host(request) : load_library(request);
      !reply.ok)
    return reply;
  if (!m_stream)
    if (protocol::Reply reply = create_stream(); !reply.ok)
      return reply;
  if (m_host == nullptr)
    return protocol::Reply{};
  protocol::Reply reply = warm_up();
  if (reply.ok)
    if (protocol::Reply filtered = filter_system_calls(); !filtered.ok)
      return filtered;
  return reply;
}

protocol::Reply CandidateServer::map_sets(const protocol::Request& request) {
  std::size_t by_descriptor = 0;
  for (const protocol::SetHandles& handles : request.sets)
    by_descriptor += static_cast<std::size_t>(std::count_if(
        handles.begin(), handles.end(), [](const auto& handle) { return handle.span > 0; }));
  std::vector<util::Fd> descriptors;
  if (by_descriptor > 0) {
    if (m_buffer_fd < 0)
      return protocol::Reply::failure(protocol::ChildError::ipc,
                                      "buffers shared by descriptor, and no --buffer-fd");
    auto received = util::receive_descriptors(m_buffer_fd, by_descriptor);
    if (!received)
      return protocol::Reply::failure(protocol::ChildError::ipc, received.error().message);
    descriptors = std::move(*received);
  }
  std::size_t next = 0;
  for (const protocol::SetHandles& handles : request.sets) {
    Set& set = m_sets.emplace_back();
    for (const protocol::BufferHandle& handle : handles) {
      if (handle.output)
        set.output_indices.push_back(set.pointers.size());
      set.bytes.push_back(handle.bytes);
      if (handle.span > 0) {
        if (handle.span < handle.bytes)
          return protocol::Reply::failure(protocol::ChildError::ipc, "a span under its tensor");
        auto imported = protocol::VirtualMapping::import(descriptors[next++], handle.span);
        if (!imported)
          return protocol::Reply::failure(protocol::ChildError::ipc, imported.error().message);
        set.pointers.push_back(imported->data());
        set.imported.push_back(std::move(*imported));
        continue;
      }
      auto mapping = protocol::IpcMapping::open(handle.ipc, handle.bytes);
      if (!mapping)
        return protocol::Reply::failure(protocol::ChildError::ipc, mapping.error().message);
      set.pointers.push_back(mapping->data());
      set.mappings.push_back(std::move(*mapping));
    }
  }
  return protocol::Reply{};
}

// From here on the candidate runs with the allow-list of system_call_filter.hpp: a kernel.so
// from before its first instruction (its static constructors run inside dlopen), a host from
// after the warm-up call (Triton's JIT compiles with ptxas and writes its cache).
//
// The stream-ordered allocator opens a file for writing the first time a process uses it (on
// the H200 the filter refused that openat inside a candidate's first cudaMallocAsync); so one
// allocation and its free come first, and the frees the candidate is charged with
// (Reply::stream_ordered_frees) start after it.
protocol::Reply CandidateServer::filter_system_calls() {
  void* warm = nullptr;
  if (cudaMallocAsync(&warm, 256, nullptr) == cudaSuccess) {
    (void)cudaFreeAsync(warm, nullptr);
    (void)cudaStreamSynchronize(nullptr);
  }
  (void)cudaGetLastError();
  m_own_stream_ordered_frees = measure::cupti_stream_ordered_frees();
  if (auto filtered = install_system_call_filter(); !filtered)
    return protocol::Reply::failure(protocol::ChildError::protocol, filtered.error().message);
  return protocol::Reply{};
}

protocol::Reply CandidateServer::load_host(const protocol::Request& request) {
  if (m_invoke != nullptr)
    return protocol::Reply::failure(protocol::ChildError::protocol, "already loaded");
  if (m_host->version != PTXBENCH_CHILD_HOST_VERSION || m_host->load == nullptr ||
      m_host->invoke == nullptr)
    return protocol::Reply::failure(protocol::ChildError::dlopen,
                                    "the candidate's host is not a PtxbenchChildHost version " +
                                        std::to_string(PTXBENCH_CHILD_HOST_VERSION));
  char message[4096] = {};
  if (m_host->load(m_host->user, request.library.c_str(), request.signature.c_str(),
                   request.binding.c_str(), message, sizeof message) != 0) {
    message[sizeof message - 1] = '\0';
    return protocol::Reply::failure(protocol::ChildError::signature_mismatch, message);
  }
  m_invoke = m_host->invoke;
  return scalars_and_axes(request);
}

// The host's first call on input set 0, before any traced or timed call: Triton compiles (and
// autotunes) here, loading its cubins, which the entry-point guard allows only now.
protocol::Reply CandidateServer::warm_up() {
  if (m_sets.empty())
    return protocol::Reply::failure(protocol::ChildError::protocol, "no input set to warm up on");
  const auto start = std::chrono::steady_clock::now();
  set_code_loading(CodeLoading::warm_up);
  protocol::Reply reply = plain_call(0);
  set_code_loading(CodeLoading::refused);
  reply.jit_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  if (!reply.ok)
    reply.message =
        "the warm-up call (Triton JIT compilation and autotuning) failed: " + reply.message;
  return reply;
}

protocol::Reply CandidateServer::load_library(const protocol::Request& request) {
  if (m_library != nullptr)
    return protocol::Reply::failure(protocol::ChildError::protocol, "already loaded");
  m_library = dlopen(request.library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (m_library == nullptr)
    return protocol::Reply::failure(protocol::ChildError::dlopen, dl_error());
  auto signature =
      reinterpret_cast<PtxbenchAbiSignatureFn>(dlsym(m_library, "ptxbench_abi_signature"));
  m_invoke = reinterpret_cast<PtxbenchInvokeFn>(dlsym(m_library, "ptxbench_invoke"));
  if (signature == nullptr || m_invoke == nullptr) {
    m_invoke = nullptr;
    return protocol::Reply::failure(protocol::ChildError::dlopen,
                                    "kernel.so lacks the ptxbench shim symbols");
  }
  const std::string actual = signature();
  if (actual != request.signature) {
    m_invoke = nullptr;
    return protocol::Reply::failure(protocol::ChildError::signature_mismatch,
                                    "kernel.so was built for `" + actual + "`, expected `" +
                                        request.signature + "`");
  }
  return scalars_and_axes(request);
}

protocol::Reply CandidateServer::scalars_and_axes(const protocol::Request& request) {
  for (std::uint64_t bits : request.scalars) {
    PtxbenchScalar scalar{};
    std::memcpy(&scalar, &bits, sizeof scalar);
    m_scalars.push_back(scalar);
  }
  m_var_axes = request.var_axes;
  return protocol::Reply{};
}

protocol::Reply CandidateServer::create_stream() {
  // A blocking stream, as a stream the candidate is handed in a framework would be.
  auto stream = cuda::create_stream(cudaStreamDefault);
  if (!stream)
    return protocol::Reply::failure(protocol::ChildError::cuda, stream.error().message);
  m_stream = std::move(*stream);
  return protocol::Reply{};
}

PtxbenchCall CandidateServer::record(int set) {
  const Set& s = m_sets[static_cast<std::size_t>(set)];
  PtxbenchCall call{};
  call.version = PTXBENCH_CALL_VERSION;
  call.num_buffers = static_cast<std::uint32_t>(s.pointers.size());
  call.num_scalars = static_cast<std::uint32_t>(m_scalars.size());
  call.num_var_axes = static_cast<std::uint32_t>(m_var_axes.size());
  call.buffers = s.pointers.data();
  call.scalars = m_scalars.data();
  call.var_axes = m_var_axes.data();
  return call;
}

int CandidateServer::invoke(int set, cudaStream_t stream) {
  PtxbenchCall call = record(set);
  call.stream = stream;
  return m_invoke(&call);
}

protocol::Reply CandidateServer::after_call(int status) {
  // Everything the call started, on any stream, must be finished before the supervisor reads.
  const cudaError_t sync = cudaDeviceSynchronize();
  protocol::Reply reply;
  reply.invoke_status = status;
  if (sync != cudaSuccess) {
    reply = protocol::Reply::failure(protocol::ChildError::cuda, "CUDA error after the call");
    reply.cuda_error = protocol::call_status_text(sync);
  } else if (status == PTXBENCH_INVOKE_EXCEPTION && m_host != nullptr) {
    reply = protocol::Reply::failure(protocol::ChildError::invoke,
                                     "`run` raised a Python exception (its traceback is in the "
                                     "candidate's log)");
  } else if (status != 0) {
    reply =
        protocol::Reply::failure(protocol::ChildError::invoke, "ptxbench_invoke reported an error");
    reply.cuda_error = protocol::call_status_text(status);
  }
  reply.invoke_status = status;
  return reply;
}

std::vector<protocol::KernelSeen> kernels_seen(std::vector<measure::GpuActivity> activities) {
  std::erase_if(activities, [](const measure::GpuActivity& a) {
    return a.kind != measure::GpuActivity::Kind::kernel;
  });
  std::stable_sort(activities.begin(), activities.end(), [](const auto& a, const auto& b) {
    return a.correlation_id < b.correlation_id;
  });
  std::vector<protocol::KernelSeen> kernels;
  for (const measure::GpuActivity& a : activities)
    kernels.push_back(
        {a.name, a.stream_id, static_cast<double>(a.end_ns - a.start_ns) * 1e-6, a.launch});
  return kernels;
}

protocol::Reply CandidateServer::plain_call(int set) {
  return after_call(invoke(set, m_stream.get()));
}

// One call inside a CUPTI window when tracing works (its latency and kernels go back for the
// evaluator's checks between calls), else a plain call; either way synchronised after.
protocol::Reply CandidateServer::call(int set) {
  auto timer = measure::cupti_call_timer();
  if (!timer)
    return plain_call(set);
  (void)cudaDeviceSynchronize(); // the window's precondition; errors surface in after_call
  auto traced =
      (*timer)->time_call([&](cudaStream_t stream) { return invoke(set, stream); }, m_stream.get());
  if (!traced)
    return protocol::Reply::failure(protocol::ChildError::timer, traced.error().message);
  protocol::Reply reply = after_call(traced->call_status);
  if (!reply.ok)
    return reply;
  reply.call_ms = traced->latency_ms;
  reply.kernels = kernels_seen(traced->activities);
  return reply;
}

void CandidateServer::reset_outputs(int set, cudaStream_t stream) {
  const Set& s = m_sets[static_cast<std::size_t>(set)];
  for (std::size_t index : s.output_indices)
    PTXBENCH_CUDA_CHECK(cudaMemsetAsync(s.pointers[index], 0xFF, s.bytes[index], stream));
}

} // namespace ptxbench::child
