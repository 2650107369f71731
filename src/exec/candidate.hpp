// The child side of the protocol (protocol.hpp): `ptxbench-candidate` serves requests for one
// candidate binary until `exit`, end of input, or its own death. It owns nothing the
// supervisor needs: buffers are mappings of the supervisor's allocations, and the only thing
// it reports that the supervisor cannot recompute is timing and instruction counts.
#pragma once

#include "compile/ptxbench_call.h"
#include "exec/device_buffer.hpp"
#include "exec/protocol.hpp"
#include "measure/instruction_counter.hpp"
#include "measure/timing.hpp"

#include <cuda_runtime.h>

#include <memory>
#include <vector>

namespace ptxbench::exec {

class CandidateServer {
public:
  CandidateServer() = default;
  CandidateServer(const CandidateServer&) = delete;
  CandidateServer& operator=(const CandidateServer&) = delete;
  ~CandidateServer();

  // Serves until `exit` or end of input; returns the process exit status.
  int serve(int request_fd, int reply_fd);
  Reply handle(const Request& request);

private:
  struct Set {
    std::vector<IpcMapping> buffers;
    std::vector<void*> pointers;
    std::vector<std::size_t> output_indices;
  };

  Reply load(const Request& request);
  Reply call(int set);
  Reply time(const Request& request);
  Reply count(int set);
  PtxbenchCall record(int set);
  int invoke(int set, cudaStream_t stream);
  void reset_outputs(int set, cudaStream_t stream);
  Reply after_call(int status);

  void* m_library = nullptr;
  PtxbenchInvokeFn m_invoke = nullptr;
  std::vector<Set> m_sets;
  std::vector<PtxbenchScalar> m_scalars;
  std::vector<std::int64_t> m_var_axes;
  cudaStream_t m_stream = nullptr;
  std::unique_ptr<measure::L2Flusher> m_flusher;
  std::unique_ptr<measure::InstructionCounter> m_counter;
};

} // namespace ptxbench::exec
