// The buffers an evaluation hands the child: class 11 of peers-and-cheats.md §2 (read the
// expected output). The child maps what `handles()` lists and nothing else, so the reference
// outputs and the reference's scratch outputs must never be among them.
#include "exec/buffers.hpp"
#include "unit/exec/gpu_supervisor.hpp"

#include <cuda_runtime.h>
#include <gtest/gtest.h>
#include <set>
#include <string>

namespace ptxbench::exec {
namespace {

using testing::supervisor;

// The IPC handle of the allocation `pointer` lies in, as lower-case hex (the wire's spelling).
std::string handle_hex(void* pointer) {
  cudaIpcMemHandle_t handle{};
  EXPECT_EQ(cudaIpcGetMemHandle(&handle, pointer), cudaSuccess);
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex;
  for (char byte : handle.reserved) {
    const auto value = static_cast<unsigned char>(byte);
    hex.push_back(kDigits[value >> 4]);
    hex.push_back(kDigits[value & 15]);
  }
  return hex;
}

TEST(EvalBuffersGpu, TheReferenceOutputsAreNeverHandedToTheChild) {
  auto problem = supervisor().suite->find("gemm_n7168_k5120");
  ASSERT_TRUE(problem);
  auto reference = reference::make_library_reference(**problem);
  ASSERT_TRUE(reference) << reference.error().message;
  cudaStream_t stream = nullptr;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  auto buffers =
      EvalBuffers::create(*supervisor().suite, **problem, **reference, 3, 0x5eed, stream);
  ASSERT_TRUE(buffers) << buffers.error().message;
  const std::size_t slots = buffers->slots().size();

  std::set<std::string> handed;
  for (const protocol::SetHandles& set : buffers->handles()) {
    EXPECT_EQ(set.size(), slots);
    for (const protocol::BufferHandle& handle : set)
      handed.insert(handle.ipc);
  }
  EXPECT_EQ(handed.size(), 3 * slots) << "every set has buffers of its own";

  for (int set = 0; set < buffers->set_count(); ++set) {
    const PtxbenchCall candidate = buffers->call(set, stream);
    const PtxbenchCall expected = buffers->reference_call(set, stream);
    const PtxbenchCall timing = buffers->timing_call(set, stream);
    for (std::size_t i = 0; i < slots; ++i) {
      // The spelling above is the wire's: the candidate's own buffers are found by it.
      EXPECT_EQ(handed.count(handle_hex(candidate.buffers[i])), 1u) << "slot " << i;
      if (!buffers->slots()[i].output)
        continue;
      EXPECT_EQ(handed.count(handle_hex(expected.buffers[i])), 0u)
          << "the expected output of set " << set << ", slot " << i << " has an IPC handle";
      EXPECT_EQ(handed.count(handle_hex(timing.buffers[i])), 0u)
          << "the reference's scratch output of slot " << i << " has an IPC handle";
    }
  }
  cudaStreamDestroy(stream);
}

} // namespace
} // namespace ptxbench::exec
