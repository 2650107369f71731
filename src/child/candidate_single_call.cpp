// One candidate call on its own, for the external tools (docs/evaluation.md "Sanitizer and
// ncu audit").
//
// Problem. compute-sanitizer memcheck and Nsight Compute must run the candidate's code inside
// a process they start themselves, and ncu's application replay starts that process once per
// counter pass, so the run must be repeatable without a supervisor on the other end of a
// pipe. memcheck also reports an access as out of bounds only against allocations it has
// seen being made.
//
// Approach. `ptxbench-candidate --single-call SPEC --inputs FILE` (or the Triton child with the
// same words, whose host loads kernel.py and warms it up first) reads a `load` request
// (library, signature, one input set described by sizes, scalars, var axes) from SPEC and the
// raw bytes of that set's input tensors, in ABI order, from FILE. Every buffer is a cudaMalloc
// of its own, so memcheck's bounds are exactly the tensor bounds; outputs are filled with the
// NaN sentinel. Then `warmup` calls, and the one observed call inside the NVTX push/pop range
// ncu selects on, followed by a device synchronise. The reply (protocol JSON) is printed on
// stdout after kSingleCallReplyPrefix.
//
// Invariants. Nothing is shared with the supervisor (no IPC), so a replay or a sanitizer
// instrumentation sees the same inputs every time and cannot disturb an evaluation; the exit
// status says how far the run got (kSingleCall*), whatever the candidate prints.
#include "child/candidate.hpp"
#include "cuda/check.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <nvtx3/nvToolsExt.h>
#include <vector>

namespace ptxbench::child {
namespace {

constexpr std::size_t kChunkBytes = std::size_t{64} << 20;

// Copies `bytes` bytes of `in` to the device pointer `device`, in chunks.
bool read_into(std::ifstream& in, void* device, std::size_t bytes, std::vector<char>& staging) {
  std::size_t done = 0;
  while (done < bytes) {
    const std::size_t n = std::min(kChunkBytes, bytes - done);
    staging.resize(n);
    if (!in.read(staging.data(), static_cast<std::streamsize>(n)))
      return false;
    if (cudaMemcpy(static_cast<char*>(device) + done, staging.data(), n, cudaMemcpyHostToDevice) !=
        cudaSuccess)
      return false;
    done += n;
  }
  return true;
}

int print_reply(const protocol::Reply& reply, int status) {
  std::fflush(stdout);
  std::printf("%s%s\n", protocol::kSingleCallReplyPrefix.data(), encode(reply).c_str());
  std::fflush(stdout);
  return status;
}

} // namespace

protocol::Reply CandidateServer::load_own_set(const protocol::SetHandles& handles,
                                              const std::filesystem::path& inputs) {
  std::ifstream in(inputs, std::ios::binary);
  if (!in)
    return protocol::Reply::failure(protocol::ChildError::protocol,
                                    "cannot open " + inputs.string());
  Set& set = m_sets.emplace_back();
  std::vector<char> staging;
  for (const protocol::BufferHandle& handle : handles) {
    auto buffer = protocol::DeviceBuffer::allocate(handle.bytes);
    if (!buffer)
      return protocol::Reply::failure(protocol::ChildError::cuda, buffer.error().message);
    if (handle.output) {
      set.output_indices.push_back(set.pointers.size());
    } else if (!read_into(in, buffer->data(), handle.bytes, staging)) {
      return protocol::Reply::failure(protocol::ChildError::protocol,
                                      "the inputs file ended early or a copy to the GPU failed");
    }
    set.pointers.push_back(buffer->data());
    set.bytes.push_back(handle.bytes);
    set.owned.push_back(std::move(*buffer));
  }
  return protocol::Reply{};
}

int CandidateServer::single_call(const protocol::Request& spec, const std::filesystem::path& inputs,
                                 const protocol::SingleCallOptions& options) {
  if (spec.op != protocol::RequestOp::load || spec.sets.empty())
    return print_reply(
        protocol::Reply::failure(protocol::ChildError::protocol, "the spec is not a load request"),
        protocol::kSingleCallSetupFailed);
  if (cudaSetDevice(m_device) != cudaSuccess)
    return print_reply(
        protocol::Reply::failure(protocol::ChildError::cuda,
                                 "cannot select CUDA device " + std::to_string(m_device)),
        protocol::kSingleCallSetupFailed);
  // A host (the Triton child) loads its candidate and then warms it up on set 0 (JIT, autotuning),
  // so under the tool its compilation and first launch are observed too.
  protocol::Reply setup = m_host != nullptr ? load_host(spec) : load_library(spec);
  if (setup.ok)
    setup = load_own_set(spec.sets.front(), inputs);
  if (setup.ok)
    setup = create_stream();
  if (setup.ok && m_host != nullptr)
    setup = warm_up();
  if (!setup.ok)
    return print_reply(setup, protocol::kSingleCallSetupFailed);
  for (int i = 0; i < options.warmup; ++i) {
    reset_outputs(0, m_stream.get());
    if (protocol::Reply reply = plain_call(0); !reply.ok)
      return print_reply(reply, protocol::kSingleCallFailed);
  }
  reset_outputs(0, m_stream.get());
  if (cudaStreamSynchronize(m_stream.get()) != cudaSuccess)
    return print_reply(protocol::Reply::failure(protocol::ChildError::cuda, "output reset failed"),
                       protocol::kSingleCallFailed);
  if (!options.nvtx_range.empty())
    nvtxRangePushA(options.nvtx_range.c_str());
  const protocol::Reply reply = plain_call(0);
  if (!options.nvtx_range.empty())
    nvtxRangePop();
  return print_reply(reply, reply.ok ? protocol::kSingleCallOk : protocol::kSingleCallFailed);
}

} // namespace ptxbench::child
