// The buffers an evaluation hands the child: classes 11 (read the expected output) and 4 (a
// first call that precomputes every set, an output replayed from a set's first sight) of
// peers-and-cheats.md §2. The child maps what
// `handles()` lists and nothing else: the call slot, never an input set, a reference output or
// the reference's own buffers.
#include "exec/buffers.hpp"
#include "unit/exec/gpu_supervisor.hpp"

#include <cstdlib>
#include <cuda_runtime.h>
#include <gtest/gtest.h>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace ptxbench::exec {
namespace {

using testing::supervisor;

// The IPC handle of the allocation `pointer` lies in, as lower-case hex (the wire's spelling
// when the slot is shared by CUDA IPC).
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

// One problem's library reference, a stream, and its buffers: 3 input sets from `seed`.
class EvalBuffersGpu : public ::testing::Test {
protected:
  void make(const std::string& problem_name, std::uint64_t seed) {
    auto problem = supervisor().suite->find(problem_name);
    ASSERT_TRUE(problem);
    auto made = reference::make_library_reference(**problem);
    ASSERT_TRUE(made) << made.error().message;
    reference = std::move(*made);
    ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
    auto created = EvalBuffers::create(*supervisor().suite, **problem, *reference, 3, seed, stream);
    ASSERT_TRUE(created) << created.error().message;
    buffers.emplace(std::move(*created));
  }
  void TearDown() override {
    buffers.reset();
    if (stream != nullptr)
      cudaStreamDestroy(stream);
  }
  // Output elements of the call slot that miss set `set`'s reference outputs.
  std::size_t failed(int set) {
    std::size_t wrong = 0;
    for (const CompareStats& stats : buffers->compare(set, stream))
      wrong += stats.failed;
    return wrong;
  }
  // Catalogue row 4: every draw is inputs no call has seen, and its reference is computed on
  // those inputs. `problem_name` is a forward problem or a backward one (whose O and L come
  // from the forward on each draw's Q, K, V).
  void expect_draws_are_new_inputs(const std::string& problem_name);
  // Catalogue rows 4 and 11: handles() lists the call slot and nothing else, shared `sharing`'s
  // way.
  void expect_only_the_call_slot_handed(protocol::Sharing sharing);

  std::unique_ptr<reference::Reference> reference;
  cudaStream_t stream = nullptr;
  std::optional<EvalBuffers> buffers;
};

void EvalBuffersGpu::expect_only_the_call_slot_handed(protocol::Sharing sharing) {
  ASSERT_NO_FATAL_FAILURE(make("gemm_n7168_k5120", 0x5eed));
  ASSERT_EQ(buffers->sharing(), sharing);
  const std::size_t slots = buffers->slots().size();
  // Catalogue row 4: the child is handed one call slot, never the input sets.
  const std::vector<protocol::SetHandles> sets = buffers->handles();
  ASSERT_EQ(sets.size(), 1u) << "the child maps the call slot and nothing else";
  EXPECT_EQ(sets[0].size(), slots);
  const PtxbenchCall candidate = buffers->slot_call(stream);
  const PtxbenchCall timing = buffers->timing_call(stream);
  // Every pointer that must stay out of the child's reach: the reference's timing buffers and
  // every set's inputs and expected outputs (the fresh set's too).
  std::vector<void*> kept{timing.buffers, timing.buffers + slots};
  for (int set = 0; set <= buffers->fresh_set(); ++set) {
    const PtxbenchCall expected = buffers->reference_call(set, stream);
    kept.insert(kept.end(), expected.buffers, expected.buffers + slots);
  }
  if (buffers->sharing() == protocol::Sharing::cuda_ipc) {
    std::set<std::string> handed;
    for (const protocol::BufferHandle& handle : sets[0])
      handed.insert(handle.ipc);
    EXPECT_EQ(handed.size(), slots) << "every buffer of the slot is an allocation of its own";
    for (std::size_t i = 0; i < slots; ++i) // the wire's spelling finds the candidate's buffers
      EXPECT_EQ(handed.count(handle_hex(candidate.buffers[i])), 1u) << "slot " << i;
    for (void* pointer : kept)
      EXPECT_EQ(handed.count(handle_hex(pointer)), 0u) << "a kept buffer has an IPC handle";
    return;
  }
  // Shared by descriptor: each descriptor handed names the slot's buffer of its place (a byte
  // written through this process's own import of it is read at the slot's pointer), and no
  // kept buffer lies inside a slot buffer's span.
  auto descriptors = buffers->export_descriptors();
  ASSERT_TRUE(descriptors) << descriptors.error().message;
  ASSERT_EQ(descriptors->size(), slots);
  for (std::size_t i = 0; i < slots; ++i) {
    ASSERT_GT(sets[0][i].span, 0u);
    auto imported = protocol::VirtualMapping::import((*descriptors)[i], sets[0][i].span);
    ASSERT_TRUE(imported) << imported.error().message;
    const auto mark = static_cast<unsigned char>(0x40 + i);
    ASSERT_EQ(cudaMemset(imported->data(), mark, 1), cudaSuccess);
    unsigned char seen = 0;
    ASSERT_EQ(cudaMemcpy(&seen, candidate.buffers[i], 1, cudaMemcpyDeviceToHost), cudaSuccess);
    EXPECT_EQ(seen, mark) << "descriptor " << i << " names slot " << i << "'s buffer";
    const auto* begin = static_cast<const char*>(candidate.buffers[i]);
    for (void* pointer : kept) {
      const auto* at = static_cast<const char*>(pointer);
      EXPECT_FALSE(at >= begin && at < begin + sets[0][i].span)
          << "a kept buffer lies in slot " << i << "'s shared allocation";
    }
  }
}

TEST_F(EvalBuffersGpu, TheReferenceOutputsAreNeverHandedToTheChild) {
  // The default on a GPU with the virtual-memory API (every one this project supports).
  expect_only_the_call_slot_handed(protocol::Sharing::file_descriptor);
}

TEST_F(EvalBuffersGpu, TheReferenceOutputsAreNeverHandedToTheChildOverCudaIpcEither) {
  struct Fallback { // set for this test only, even when an assertion returns early
    Fallback() { ::setenv("PTXBENCH_BUFFER_SHARING", "cuda_ipc", 1); }
    ~Fallback() { ::unsetenv("PTXBENCH_BUFFER_SHARING"); }
  } fallback;
  expect_only_the_call_slot_handed(protocol::Sharing::cuda_ipc);
}

TEST_F(EvalBuffersGpu, StagingCopiesOneSetIntoTheSlotAndItsOutputMatchesOnlyThatSet) {
  ASSERT_NO_FATAL_FAILURE(make("gemm_n7168_k5120", 0xfeed));
  ASSERT_TRUE(buffers->stage(1, stream));
  EXPECT_EQ(buffers->staged_set(), 1);
  EXPECT_TRUE(buffers->slot_inputs_intact(stream));
  // The library computes into the slot what the candidate would: it matches set 1 only.
  ASSERT_TRUE(reference->run(buffers->slot_call(stream)));
  ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  EXPECT_EQ(failed(1), 0u);
  EXPECT_GT(failed(0), 0u);
  EXPECT_GT(failed(2), 0u);
  // A write into the slot's inputs is seen; staging again restores them.
  const PtxbenchCall slot = buffers->slot_call(stream);
  ASSERT_EQ(cudaMemset(slot.buffers[0], 0, 2), cudaSuccess);
  EXPECT_FALSE(buffers->slot_inputs_intact(stream));
  ASSERT_TRUE(buffers->stage(1, stream));
  EXPECT_TRUE(buffers->slot_inputs_intact(stream));
}

void EvalBuffersGpu::expect_draws_are_new_inputs(const std::string& problem_name) {
  ASSERT_NO_FATAL_FAILURE(make(problem_name, 7));
  auto drawn = buffers->draw(stream);
  ASSERT_TRUE(drawn) << drawn.error().message;
  EXPECT_EQ(*drawn, buffers->fresh_set());
  ASSERT_TRUE(buffers->stage(*drawn, stream));
  EXPECT_TRUE(buffers->slot_inputs_intact(stream));
  ASSERT_TRUE(reference->run(buffers->slot_call(stream)));
  ASSERT_TRUE(buffers->fresh_reference(*reference, stream));
  EXPECT_EQ(failed(*drawn), 0u) << "the library on the drawn inputs matches their reference";
  for (int set = 0; set < buffers->set_count(); ++set)
    EXPECT_GT(failed(set), 0u) << "the drawn inputs are those of correctness set " << set;
  // The next draw: the output of the last one answers it no more.
  ASSERT_TRUE(buffers->draw(stream));
  ASSERT_TRUE(buffers->fresh_reference(*reference, stream));
  EXPECT_GT(failed(buffers->fresh_set()), 0u) << "two draws gave the same inputs";
  EXPECT_FALSE(buffers->slot_inputs_intact(stream)) << "the slot still holds the last draw";
  EXPECT_EQ(buffers->draws(), 2u);
}

TEST_F(EvalBuffersGpu, EveryDrawIsInputsNoCallHasSeenWithItsReferenceOnThem) {
  expect_draws_are_new_inputs("gemm_n7168_k5120");
}

TEST_F(EvalBuffersGpu, ABackwardProblemsDrawTakesItsForwardOutputsFromTheDrawnInputs) {
  expect_draws_are_new_inputs("mha_bwd_d128");
}

// The fresh inputs follow the evaluation's protocol secret (reseed_draws), not the seed of the
// correctness sets, which a caller may fix: the same secret draws the same inputs again, another
// secret others.
TEST_F(EvalBuffersGpu, TheDrawsFollowTheProtocolSecretNotTheInputSeed) {
  ASSERT_NO_FATAL_FAILURE(make("gemm_n7168_k5120", 7));
  buffers->reseed_draws(0x5ec2e7);
  ASSERT_TRUE(buffers->draw(stream));
  ASSERT_TRUE(buffers->stage(buffers->fresh_set(), stream));
  ASSERT_TRUE(reference->run(buffers->slot_call(stream))); // the slot's outputs: draw 1's
  buffers->reseed_draws(0x5ec2e7);
  EXPECT_EQ(buffers->draws(), 0u);
  ASSERT_TRUE(buffers->draw(stream));
  ASSERT_TRUE(buffers->fresh_reference(*reference, stream));
  EXPECT_EQ(failed(buffers->fresh_set()), 0u) << "the same secret drew other inputs";
  buffers->reseed_draws(0x5ec2e8);
  ASSERT_TRUE(buffers->draw(stream));
  ASSERT_TRUE(buffers->fresh_reference(*reference, stream));
  EXPECT_GT(failed(buffers->fresh_set()), 0u) << "another secret drew the same inputs";
}

} // namespace
} // namespace ptxbench::exec
