// The child side of the protocol (protocol.hpp): `ptxbench-candidate` serves requests for one
// candidate binary until `exit`, end of input, or its own death. It owns nothing the
// supervisor needs: buffers are mappings of the supervisor's allocations, and the only thing
// it reports that the supervisor cannot recompute is timing and instruction counts.
//
// Start-up waits for `prepare` (or `load`): a spare child has only been exec'd (its libraries
// loaded) and touches neither the driver nor the GPU until the supervisor allows GPU work.
// `prepare` initialises the driver, CUPTI activity tracing and the range profiler's
// configuration, then creates the context, stream and L2 scratch and, when the supervisor
// grants it, opens the range profiler's session and warms it with a one-block kernel: a
// session's first pass is slow, so paid here, while the GPU is idle, it leaves the counting pass
// only its own passes (bench/results/counter_session_h200.md). (Driver and profiler
// initialisation alone, with no context, slowed another process's timed trial —
// bench/results/eval_wall_time_h200.md — so nothing of it runs early.)
//
// A host (child/ptxbench_child.h: `python3 -m ptxbench_triton.child` for a Triton candidate)
// replaces the kernel.so: `load` hands the candidate's file, signature and binding to the host's
// load function, maps the buffers, then runs one warm-up call on input set 0 — Triton's JIT
// compilation and autotuning — with code loading allowed (entry_point_guard.hpp) and reports its
// wall time (`jit_ms`); every later call goes to the host's invoke exactly where a kernel.so's
// ptxbench_invoke would be called. The supervisor refills the outputs' sentinel before every
// correctness call, so the warm-up's outputs are never read.
//
// The same server also runs one call on its own (`--single-call`, candidate_single_call.cpp)
// for the external tools: compute-sanitizer memcheck and the ncu source-counter audit.
#pragma once

#include "child/ptxbench_child.h"
#include "compile/ptxbench_call.h"
#include "cuda/owned.hpp"
#include "measure/instruction_counter.hpp"
#include "measure/timing.hpp"
#include "protocol/device_buffer.hpp"
#include "protocol/protocol.hpp"
#include "protocol/single_call.hpp"
#include "trace/schema.hpp"

#include <cstdint>
#include <cuda_runtime.h>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace ptxbench::child {

// The kernels among `activities` in launch order (correlation ids follow the API calls): the
// counting pass's ranges, which CUPTI numbers in the same order, are matched to these names.
std::vector<protocol::KernelSeen> kernels_seen(std::vector<measure::GpuActivity> activities);

class CandidateServer {
public:
  // `device`: the CUDA device its context is created on (the supervisor's `--device`).
  // `host`: the candidate's host instead of a kernel.so, or null (it must outlive the server).
  explicit CandidateServer(int device, const PtxbenchChildHost* host = nullptr)
      : m_device(device), m_host(host) {}
  CandidateServer(const CandidateServer&) = delete;
  CandidateServer& operator=(const CandidateServer&) = delete;
  ~CandidateServer();

  // Serves until `exit` or end of input; returns the process exit status. The call slot's
  // descriptors arrive on `buffer_fd` (-1: none; the slot must then come by CUDA IPC).
  int serve(int request_fd, int reply_fd, int buffer_fd);
  protocol::Reply handle(const protocol::Request& request);
  // One call on the first set of `spec` (a `load` request without IPC handles) whose inputs
  // are read from `inputs`; prints the reply after kSingleCallReplyPrefix and returns the
  // process exit status (kSingleCall*).
  int single_call(const protocol::Request& spec, const std::filesystem::path& inputs,
                  const protocol::SingleCallOptions& options);

private:
  // One input set: mappings of the supervisor's buffers, or (single call) buffers of our own.
  struct Set {
    std::vector<protocol::IpcMapping> mappings;
    std::vector<protocol::VirtualMapping> imported;
    std::vector<protocol::DeviceBuffer> owned;
    std::vector<void*> pointers;
    std::vector<std::size_t> bytes;
    std::vector<std::size_t> output_indices;
  };

  void start_host();
  protocol::Reply prepare(const protocol::Request& request);
  protocol::Reply load(const protocol::Request& request);
  protocol::Reply load_library(const protocol::Request& request);
  protocol::Reply load_host(const protocol::Request& request);
  protocol::Reply map_sets(const protocol::Request& request);
  protocol::Reply scalars_and_axes(const protocol::Request& request);
  protocol::Reply warm_up();
  protocol::Reply filter_system_calls();
  protocol::Reply load_own_set(const protocol::SetHandles& handles,
                               const std::filesystem::path& inputs);
  protocol::Reply create_stream();
  protocol::Reply call(int set);       // traced by CUPTI: its latency and kernels go back
  protocol::Reply plain_call(int set); // untraced: under compute-sanitizer and ncu, which own CUPTI
  protocol::Reply time(const protocol::Request& request);
  protocol::Reply count(int set);
  PtxbenchCall record(int set);
  int invoke(int set, cudaStream_t stream);
  void reset_outputs(int set, cudaStream_t stream);
  protocol::Reply after_call(int status);

  int m_device;
  const PtxbenchChildHost* m_host;
  int m_buffer_fd = -1;
  void* m_library = nullptr;
  PtxbenchInvokeFn m_invoke = nullptr;
  std::vector<Set> m_sets;
  std::vector<PtxbenchScalar> m_scalars;
  std::vector<std::int64_t> m_var_axes;
  cuda::Stream m_stream;
  std::unique_ptr<measure::L2Flusher> m_flusher;
  std::unique_ptr<measure::InstructionCounter> m_counter;
  std::string m_counter_error;                   // why there is no counter (start_host), or empty
  std::uint64_t m_own_stream_ordered_frees = 0;  // the allocator's warm-up (filter_system_calls)
  trace::Json m_startup = trace::Json::object(); // start-up step -> wall ms
};

} // namespace ptxbench::child
