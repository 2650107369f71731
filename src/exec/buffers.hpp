// The device buffers of one evaluation, owned by the supervisor.
//
// Problem. A candidate must see several input sets with values it cannot predict, inputs it
// must not change, and outputs that prove a write; the expected outputs must never be within
// its reach, and no call may reach the inputs of another call (a first call that found every
// set could compute them all and replay them later: catalogue row 4).
//
// Approach. N input sets (3 by default) are generated on the GPU from a 64-bit seed, secret
// unless the caller fixed it (each set's seed is derived from it), following suite::recipe_for:
// normal or spiky Philox values, index blobs and scalars from the workload, and for the MHA
// backward problems O and L from the library forward on the set's Q, K, V. The sets and their
// reference outputs are never shared. The child is handed one **call slot** (inputs and
// outputs, the only buffers it can map; protocol/device_buffer.hpp says how they are shared):
// before every candidate call the supervisor copies the inputs of the set it chose into the slot
// (stage), so a call sees one set and nothing else. The reference's timed calls read a slot of
// their own, staged the same way, and write scratch outputs, so both sides do the same work around
// each call.
//
// Fresh inputs. A set seen before can be answered from a cache: an output kept from its first
// sight, replayed on later calls behind enough idle time to pass the first-sight time rule
// (catalogue row 4: up to 2x of a speedup that no work made). So every candidate timed call
// gets inputs no call has seen: one more set, the fresh set, is drawn again before each of
// them (draw) from a seed derived from the draw secret and a draw counter, and its reference
// outputs are computed only when that call's output is compared (fresh_reference). The fresh
// set, like the others, is never shared. The draw secret is given by every evaluation
// that uses the buffers (reseed_draws): a caller may fix the seed of the correctness sets
// (EvalOptions::seed), never the fresh inputs of the timed calls.
//
// Invariants. Buffer order is the ABI order (tensor inputs, then outputs); every buffer is a
// whole allocation (cudaMalloc, or the call slot's shared ones); the correctness sets' inputs are
// written only here, before the child exists, the fresh set's only by draw, and the child can reach
// none of them.
#pragma once

#include "compile/ptxbench_call.h"
#include "exec/gpu_ops.hpp"
#include "protocol/device_buffer.hpp"
#include "protocol/protocol.hpp"
#include "reference/reference.hpp"
#include "suite/problem.hpp"
#include "suite/suite.hpp"
#include "util/error.hpp"

#include <cstdint>
#include <cuda_runtime.h>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace ptxbench::exec {

struct TensorSlot {
  std::string name;
  trace::DType dtype = trace::DType::float32;
  std::size_t elements = 0;
  std::size_t bytes = 0;
  bool output = false;
};

class EvalBuffers {
public:
  // Allocates and fills `sets` input sets of `problem` (inputs, sentinel-filled outputs, and
  // reference outputs computed with `reference`). Synchronises `stream` before returning.
  static util::Expected<EvalBuffers> create(const suite::Suite& suite,
                                            const suite::Problem& problem,
                                            reference::Reference& reference, int sets,
                                            std::uint64_t seed, cudaStream_t stream);

  // The correctness sets (0 .. set_count() - 1); the fresh set is set_count().
  int set_count() const { return static_cast<int>(m_sets.size()) - 1; }
  int fresh_set() const { return set_count(); }
  // Draws new inputs into the fresh set (enqueued on `stream`); its reference outputs are then
  // unknown until fresh_reference. Returns fresh_set().
  util::Expected<int> draw(cudaStream_t stream);
  // The secret the following draws derive from (an evaluation's, never the caller's seed); the
  // draw count starts again.
  void reseed_draws(std::uint64_t secret);
  // Computes the fresh set's reference outputs with `reference` when the current draw has none
  // yet (synchronises `stream`).
  util::Status fresh_reference(reference::Reference& reference, cudaStream_t stream);
  // The inputs drawn so far into the fresh set.
  std::uint64_t draws() const { return m_draws; }
  const std::vector<TensorSlot>& slots() const { return m_slots; }
  // Copies the inputs of `set` into the call slot (stage) or the reference's slot
  // (stage_reference), enqueued on `stream`.
  util::Status stage(int set, cudaStream_t stream);
  util::Status stage_reference(int set, cudaStream_t stream);
  int staged_set() const { return m_staged; }
  // The uniform call on the call slot (what the child is handed), or on set `set`'s inputs
  // writing its reference outputs.
  PtxbenchCall slot_call(cudaStream_t stream);
  PtxbenchCall reference_call(int set, cudaStream_t stream);
  // The call on the reference's slot writing scratch outputs: the reference's timed calls,
  // which must touch neither the candidate's outputs nor the expected ones.
  PtxbenchCall timing_call(cudaStream_t stream);
  // The handles of the call slot: one entry, the only buffers the child maps.
  std::vector<protocol::SetHandles> handles() const;
  // New descriptors of the call slot's buffers shared by descriptor, in handles()'s order: to
  // be sent on the child's buffer socket before the request that carries handles().
  util::Expected<std::vector<util::Fd>> export_descriptors() const;
  protocol::Sharing sharing() const { return m_sharing; }
  // The buffers of one set, unshared (sizes and output flags), for a single-call run.
  protocol::SetHandles layout() const;
  // Appends the raw bytes of every input tensor of `set`, in ABI order, to `out`.
  util::Status write_inputs(int set, std::ostream& out) const;
  std::vector<std::uint64_t> scalar_bits() const;
  const std::vector<std::int64_t>& var_axes() const { return m_var_axes; }

  // Device memory held: every set's tensors and its reference outputs.
  std::size_t device_bytes() const;
  // Digest of every input buffer of every correctness set (synchronises `stream`).
  std::uint64_t input_checksum(cudaStream_t stream) const;
  // Whether the call slot's inputs still equal those of the set staged last (synchronises).
  bool slot_inputs_intact(cudaStream_t stream) const;
  void fill_outputs_sentinel(cudaStream_t stream);
  // The scratch outputs of timing_call, reset like a candidate's outputs before each call.
  void fill_timing_outputs_sentinel(cudaStream_t stream);
  // Compares the call slot's outputs (compare) or the reference's scratch outputs
  // (compare_timing) with the reference outputs of `set`, one entry per output.
  std::vector<CompareStats> compare(int set, cudaStream_t stream) const;
  std::vector<CompareStats> compare_timing(int set, cudaStream_t stream) const;

private:
  struct Set {
    std::vector<protocol::DeviceBuffer> buffers;           // ABI order; none for outputs
    std::vector<protocol::DeviceBuffer> reference_outputs; // one per output slot
    std::vector<void*> reference_pointers;                 // inputs then reference outputs
    std::optional<std::uint64_t> digest;                   // of its inputs, once taken
  };
  // A tensor input drawn from the Philox generator (not a blob, not from the forward).
  struct RandomInput {
    std::size_t slot = 0;
    suite::Distribution distribution = suite::Distribution::normal;
    std::uint32_t tensor_index = 0;
  };
  // The forward problem whose outputs feed a backward problem's inputs, and its reference.
  struct Forward {
    suite::Problem problem;
    std::unique_ptr<reference::Reference> reference;
    std::map<std::string, std::size_t> slot_of_output; // forward output -> backward slot
  };
  // The pointers a call takes (ABI order) and the buffers they point into: shared ones (the
  // call slot, all of them) or owned ones (the reference's slot: its inputs; its outputs are
  // the scratch outputs).
  struct Slot {
    std::vector<protocol::SharedBuffer> shared;
    std::vector<protocol::DeviceBuffer> owned;
    std::vector<void*> pointers;
  };

  util::Status allocate(const suite::Problem& problem, int sets);
  util::Status fill_inputs(const suite::Suite& suite, const suite::Problem& problem,
                           std::uint64_t seed, cudaStream_t stream);
  util::Status fill_random_inputs(Set& set, std::uint64_t seed, cudaStream_t stream);
  util::Status prepare_forward(const suite::Suite& suite, const suite::Problem& problem);
  util::Status fill_from_forward(Set& set, cudaStream_t stream);
  util::Status compute_reference(reference::Reference& reference, cudaStream_t stream);
  util::Status copy_inputs(int set, Slot& slot, cudaStream_t stream);
  // Over the tensor inputs among `pointers` (ABI order).
  std::uint64_t inputs_checksum(const std::vector<void*>& pointers, cudaStream_t stream) const;
  std::vector<CompareStats> compare_with(const std::vector<void*>& pointers, int set,
                                         cudaStream_t stream) const;
  PtxbenchCall make_call(std::vector<void*>& pointers, cudaStream_t stream);

  std::vector<TensorSlot> m_slots;
  std::vector<Set> m_sets;
  std::vector<protocol::DeviceBuffer> m_scratch_outputs;     // one per output slot (timing_call)
  protocol::Sharing m_sharing = protocol::Sharing::cuda_ipc; // the call slot's
  Slot m_call_slot;      // the child's: inputs staged per call, outputs it writes
  Slot m_reference_slot; // the reference's timed calls: staged inputs, the scratch outputs
  int m_staged = -1;     // the set in the call slot
  std::vector<RandomInput> m_random;
  std::optional<Forward> m_forward; // backward problems only
  std::uint64_t m_draw_secret = 0;  // reseed_draws's
  std::uint64_t m_draws = 0;
  bool m_fresh_has_reference = false;
  Tolerance m_tolerance; // the problem's (suite::correctness_rule)
  std::vector<PtxbenchScalar> m_scalars;
  std::vector<std::int64_t> m_var_axes;
};

// The seed of input set `set` derived from the evaluation's seed (the fresh set's draws: from
// the draw secret).
std::uint64_t set_seed(std::uint64_t seed, int set);

} // namespace ptxbench::exec
