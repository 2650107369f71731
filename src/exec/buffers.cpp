#include "exec/buffers.hpp"

#include "cuda/check.hpp"
#include "exec/gpu_ops.hpp"
#include "suite/correctness.hpp"
#include "suite/recipes.hpp"
#include "suite/safetensors.hpp"

#include <algorithm>
#include <cstring>
#include <map>

namespace ptxbench::exec {
namespace {

util::Error invalid(std::string message) {
  return util::make_error(util::ErrorKind::invalid_input, std::move(message));
}

const trace::InputSpec* workload_input(const trace::Workload& workload, const std::string& name) {
  for (const auto& [input, spec] : workload.inputs)
    if (input == name)
      return &spec;
  return nullptr;
}

util::Expected<PtxbenchScalar> scalar_value(const suite::ResolvedTensor& tensor,
                                            const trace::ScalarInput& input) {
  PtxbenchScalar scalar{};
  const double real = std::visit([](auto v) { return static_cast<double>(v); }, input.value);
  const auto integer = static_cast<std::int64_t>(real);
  switch (tensor.dtype) {
  case trace::DType::float32:
    scalar.f32 = static_cast<float>(real);
    break;
  case trace::DType::int64:
    scalar.i64 = integer;
    break;
  case trace::DType::int32:
    scalar.i32 = static_cast<std::int32_t>(integer);
    break;
  case trace::DType::int16:
    scalar.i16 = static_cast<std::int16_t>(integer);
    break;
  case trace::DType::int8:
    scalar.i8 = static_cast<std::int8_t>(integer);
    break;
  case trace::DType::boolean:
    scalar.u8 = integer != 0;
    break;
  default:
    return invalid("scalar input " + tensor.name + " has a dtype without a scalar form");
  }
  return scalar;
}

// The forward problem of a backward one, resized to the backward workload's shapes.
util::Expected<suite::Problem> forward_problem(const suite::Suite& suite,
                                               const suite::Problem& backward) {
  PTXBENCH_TRY_ASSIGN(auto found, suite.find(suite::forward_definition_of(backward.name())));
  suite::Problem forward = *found;
  forward.workload.axes = backward.workload.axes;
  forward.var_axes = backward.var_axes;
  auto dims_of = [&](const std::string& name) -> const std::vector<std::int64_t>* {
    for (const auto& t : backward.inputs)
      if (t.name == name)
        return &t.dims;
    return nullptr;
  };
  for (auto& t : forward.inputs)
    if (auto dims = dims_of(t.name))
      t.dims = *dims;
  for (auto& t : forward.outputs)
    for (const auto& row : suite::kRecipeRows)
      if (row.forward_output == t.name && backward.name().starts_with(row.definition_prefix))
        if (auto dims = dims_of(std::string(row.input)))
          t.dims = *dims;
  return forward;
}

} // namespace

std::uint64_t set_seed(std::uint64_t seed, int set) {
  std::uint64_t x = seed + 0x9E3779B97F4A7C15ull * static_cast<std::uint64_t>(set + 1);
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

util::Expected<EvalBuffers> EvalBuffers::create(const suite::Suite& suite,
                                                const suite::Problem& problem,
                                                reference::Reference& reference, int sets,
                                                std::uint64_t seed, cudaStream_t stream) {
  EvalBuffers buffers;
  const suite::CorrectnessRule rule = suite::correctness_rule(problem);
  buffers.m_tolerance = {static_cast<float>(rule.atol), static_cast<float>(rule.rtol)};
  buffers.m_draw_secret = seed;                      // until an evaluation reseeds the draws
  PTXBENCH_TRY(buffers.allocate(problem, sets + 1)); // the correctness sets and the fresh one
  PTXBENCH_TRY(buffers.fill_inputs(suite, problem, seed, stream));
  PTXBENCH_TRY(buffers.prepare_forward(suite, problem));
  for (int s = 0; s < sets; ++s)
    PTXBENCH_TRY(buffers.fill_from_forward(buffers.m_sets[static_cast<std::size_t>(s)], stream));
  PTXBENCH_TRY(buffers.compute_reference(reference, stream));
  for (int s = 0; s < sets; ++s) {
    Set& set = buffers.m_sets[static_cast<std::size_t>(s)];
    set.digest = buffers.inputs_checksum(set.reference_pointers, stream);
  }
  buffers.fill_outputs_sentinel(stream);
  PTXBENCH_CUDA_TRY(cudaStreamSynchronize(stream), util::ErrorKind::unsupported);
  return buffers;
}

util::Status EvalBuffers::allocate(const suite::Problem& problem, int sets) {
  for (const auto& t : problem.inputs)
    if (!t.scalar)
      m_slots.push_back({t.name, t.dtype, static_cast<std::size_t>(t.element_count()),
                         static_cast<std::size_t>(t.size_bytes()), false});
  for (const auto& t : problem.outputs)
    m_slots.push_back({t.name, t.dtype, static_cast<std::size_t>(t.element_count()),
                       static_cast<std::size_t>(t.size_bytes()), true});
  for (const auto& [axis, value] : problem.var_axes)
    m_var_axes.push_back(value);
  for (const auto& t : problem.inputs) {
    if (!t.scalar)
      continue;
    const trace::InputSpec* spec = workload_input(problem.workload, t.name);
    const auto* scalar = spec ? std::get_if<trace::ScalarInput>(spec) : nullptr;
    if (scalar == nullptr)
      return invalid("scalar input " + t.name + " has no workload value");
    PTXBENCH_TRY_ASSIGN(auto value, scalar_value(t, *scalar));
    m_scalars.push_back(value);
  }
  for (const TensorSlot& slot : m_slots) {
    if (!slot.output)
      continue;
    PTXBENCH_TRY_ASSIGN(auto scratch, protocol::DeviceBuffer::allocate(slot.bytes));
    m_scratch_outputs.push_back(std::move(scratch));
  }
  PTXBENCH_TRY_ASSIGN(m_sharing, protocol::preferred_sharing());
  std::size_t scratch = 0;
  for (const TensorSlot& slot : m_slots) {
    PTXBENCH_TRY_ASSIGN(auto buffer, protocol::SharedBuffer::allocate(slot.bytes, m_sharing));
    m_call_slot.pointers.push_back(buffer.data());
    m_call_slot.shared.push_back(std::move(buffer));
    if (slot.output) {
      m_reference_slot.pointers.push_back(m_scratch_outputs[scratch++].data());
      continue;
    }
    PTXBENCH_TRY_ASSIGN(auto input, protocol::DeviceBuffer::allocate(slot.bytes));
    m_reference_slot.pointers.push_back(input.data());
    m_reference_slot.owned.push_back(std::move(input));
  }
  for (int s = 0; s < sets; ++s) {
    Set& set = m_sets.emplace_back();
    for (const TensorSlot& slot : m_slots) {
      if (slot.output) {
        PTXBENCH_TRY_ASSIGN(auto expected, protocol::DeviceBuffer::allocate(slot.bytes));
        set.reference_pointers.push_back(expected.data());
        set.reference_outputs.push_back(std::move(expected));
        set.buffers.emplace_back();
        continue;
      }
      PTXBENCH_TRY_ASSIGN(auto buffer, protocol::DeviceBuffer::allocate(slot.bytes));
      set.reference_pointers.push_back(buffer.data());
      set.buffers.push_back(std::move(buffer));
    }
  }
  return util::Ok{};
}

util::Status EvalBuffers::fill_inputs(const suite::Suite& suite, const suite::Problem& problem,
                                      std::uint64_t seed, cudaStream_t stream) {
  for (std::size_t i = 0; i < m_slots.size(); ++i) {
    const TensorSlot& slot = m_slots[i];
    if (slot.output)
      continue;
    PTXBENCH_TRY_ASSIGN(auto recipe,
                        suite::recipe_for(problem.definition, problem.workload, slot.name));
    if (recipe.distribution == suite::Distribution::from_forward)
      continue;
    if (recipe.distribution == suite::Distribution::blob) {
      const auto* blob =
          std::get_if<trace::SafetensorsInput>(workload_input(problem.workload, slot.name));
      if (blob == nullptr)
        return invalid(slot.name + ": no safetensors input in the workload");
      PTXBENCH_TRY_ASSIGN(
          auto tensor, suite::read_safetensors_tensor(suite.root() / blob->path, blob->tensor_key));
      if (tensor.data.size() != slot.bytes)
        return invalid(slot.name + ": blob has " + std::to_string(tensor.data.size()) +
                       " bytes, the workload needs " + std::to_string(slot.bytes));
      for (Set& set : m_sets)
        PTXBENCH_CUDA_TRY(cudaMemcpyAsync(set.buffers[i].data(), tensor.data.data(), slot.bytes,
                                          cudaMemcpyHostToDevice, stream),
                          util::ErrorKind::unsupported);
      PTXBENCH_CUDA_TRY(cudaStreamSynchronize(stream), util::ErrorKind::unsupported);
      continue;
    }
    m_random.push_back({i, recipe.distribution, recipe.tensor_index});
  }
  for (int s = 0; s < set_count(); ++s)
    PTXBENCH_TRY(
        fill_random_inputs(m_sets[static_cast<std::size_t>(s)], set_seed(seed, s), stream));
  return util::Ok{};
}

util::Status EvalBuffers::fill_random_inputs(Set& set, std::uint64_t seed, cudaStream_t stream) {
  for (const RandomInput& input : m_random) {
    const TensorSlot& slot = m_slots[input.slot];
    const RandomFill fill{input.distribution, slot.dtype, seed, input.tensor_index, slot.elements};
    PTXBENCH_TRY(fill_random(set.buffers[input.slot].data(), fill, stream));
  }
  return util::Ok{};
}

util::Status EvalBuffers::prepare_forward(const suite::Suite& suite,
                                          const suite::Problem& problem) {
  std::map<std::string, std::size_t> from_forward; // forward output name -> slot index
  for (std::size_t i = 0; i < m_slots.size(); ++i) {
    if (m_slots[i].output)
      continue;
    auto recipe = suite::recipe_for(problem.definition, problem.workload, m_slots[i].name);
    if (recipe && recipe->distribution == suite::Distribution::from_forward)
      from_forward[recipe->forward_output] = i;
  }
  if (from_forward.empty())
    return util::Ok{};
  PTXBENCH_TRY_ASSIGN(auto forward, forward_problem(suite, problem));
  auto reference = reference::make_library_reference(forward);
  if (!reference)
    reference = reference::make_naive_reference(forward);
  PTXBENCH_TRY(reference);
  for (const auto& t : forward.outputs)
    if (!from_forward.contains(t.name))
      return invalid("forward output " + t.name + " feeds no backward input");
  m_forward = Forward{std::move(forward), std::move(*reference), std::move(from_forward)};
  return util::Ok{};
}

// Runs the forward problem on `set`'s generated inputs into its inputs that come from it.
util::Status EvalBuffers::fill_from_forward(Set& set, cudaStream_t stream) {
  if (!m_forward)
    return util::Ok{};
  std::vector<void*> pointers;
  for (const auto& t : m_forward->problem.inputs) {
    if (t.scalar)
      continue;
    std::size_t i = 0;
    while (i < m_slots.size() && m_slots[i].name != t.name)
      ++i;
    if (i == m_slots.size())
      return invalid("forward input " + t.name + " is not a backward input");
    pointers.push_back(set.buffers[i].data());
  }
  for (const auto& t : m_forward->problem.outputs)
    pointers.push_back(set.buffers[m_forward->slot_of_output.at(t.name)].data());
  std::vector<std::int64_t> axes;
  for (const auto& [axis, value] : m_forward->problem.var_axes)
    axes.push_back(value);
  PtxbenchCall call{PTXBENCH_CALL_VERSION,
                    static_cast<std::uint32_t>(pointers.size()),
                    0,
                    static_cast<std::uint32_t>(axes.size()),
                    pointers.data(),
                    nullptr,
                    axes.data(),
                    stream};
  PTXBENCH_TRY(m_forward->reference->run(call));
  PTXBENCH_CUDA_TRY(cudaStreamSynchronize(stream), util::ErrorKind::unsupported);
  return util::Ok{};
}

util::Expected<int> EvalBuffers::draw(cudaStream_t stream) {
  Set& fresh = m_sets.back();
  // Past the correctness sets' own derivation indices (set_seed(seed, 0 .. sets - 1)).
  const std::uint64_t seed = set_seed(m_draw_secret, set_count() + static_cast<int>(++m_draws));
  PTXBENCH_TRY(fill_random_inputs(fresh, seed, stream));
  PTXBENCH_TRY(fill_from_forward(fresh, stream));
  fresh.digest.reset();
  m_fresh_has_reference = false;
  return fresh_set();
}

void EvalBuffers::reseed_draws(std::uint64_t secret) {
  m_draw_secret = secret;
  m_draws = 0;
}

util::Status EvalBuffers::fresh_reference(reference::Reference& reference, cudaStream_t stream) {
  if (m_fresh_has_reference)
    return util::Ok{};
  PTXBENCH_TRY(reference.run(reference_call(fresh_set(), stream)));
  PTXBENCH_CUDA_TRY(cudaStreamSynchronize(stream), util::ErrorKind::unsupported);
  m_fresh_has_reference = true;
  return util::Ok{};
}

util::Status EvalBuffers::compute_reference(reference::Reference& reference, cudaStream_t stream) {
  for (int s = 0; s < set_count(); ++s)
    PTXBENCH_TRY(reference.run(reference_call(s, stream)));
  PTXBENCH_CUDA_TRY(cudaStreamSynchronize(stream), util::ErrorKind::unsupported);
  return util::Ok{};
}

PtxbenchCall EvalBuffers::make_call(std::vector<void*>& pointers, cudaStream_t stream) {
  return PtxbenchCall{PTXBENCH_CALL_VERSION,
                      static_cast<std::uint32_t>(pointers.size()),
                      static_cast<std::uint32_t>(m_scalars.size()),
                      static_cast<std::uint32_t>(m_var_axes.size()),
                      pointers.data(),
                      m_scalars.data(),
                      m_var_axes.data(),
                      stream};
}

util::Status EvalBuffers::copy_inputs(int set, Slot& slot, cudaStream_t stream) {
  const Set& from = m_sets[static_cast<std::size_t>(set)];
  for (std::size_t i = 0; i < m_slots.size(); ++i)
    if (!m_slots[i].output)
      PTXBENCH_CUDA_TRY(cudaMemcpyAsync(slot.pointers[i], from.buffers[i].data(), m_slots[i].bytes,
                                        cudaMemcpyDeviceToDevice, stream),
                        util::ErrorKind::unsupported);
  return util::Ok{};
}

util::Status EvalBuffers::stage(int set, cudaStream_t stream) {
  PTXBENCH_TRY(copy_inputs(set, m_call_slot, stream));
  m_staged = set;
  return util::Ok{};
}

util::Status EvalBuffers::stage_reference(int set, cudaStream_t stream) {
  return copy_inputs(set, m_reference_slot, stream);
}

PtxbenchCall EvalBuffers::slot_call(cudaStream_t stream) {
  return make_call(m_call_slot.pointers, stream);
}

PtxbenchCall EvalBuffers::reference_call(int set, cudaStream_t stream) {
  return make_call(m_sets[static_cast<std::size_t>(set)].reference_pointers, stream);
}

PtxbenchCall EvalBuffers::timing_call(cudaStream_t stream) {
  return make_call(m_reference_slot.pointers, stream);
}

std::vector<protocol::SetHandles> EvalBuffers::handles() const {
  protocol::SetHandles handles;
  for (std::size_t i = 0; i < m_slots.size(); ++i)
    handles.push_back(m_call_slot.shared[i].handle(m_slots[i].output));
  return {std::move(handles)};
}

util::Expected<std::vector<util::Fd>> EvalBuffers::export_descriptors() const {
  std::vector<util::Fd> descriptors;
  for (const protocol::SharedBuffer& buffer : m_call_slot.shared)
    if (buffer.sharing() == protocol::Sharing::file_descriptor) {
      PTXBENCH_TRY_ASSIGN(auto descriptor, buffer.export_descriptor());
      descriptors.push_back(std::move(descriptor));
    }
  return descriptors;
}

protocol::SetHandles EvalBuffers::layout() const {
  protocol::SetHandles out;
  for (const TensorSlot& slot : m_slots)
    out.push_back({"", slot.bytes, slot.output});
  return out;
}

util::Status EvalBuffers::write_inputs(int set, std::ostream& out) const {
  constexpr std::size_t kChunkBytes = std::size_t{64} << 20;
  const Set& s = m_sets[static_cast<std::size_t>(set)];
  std::vector<char> staging;
  for (std::size_t i = 0; i < m_slots.size(); ++i) {
    if (m_slots[i].output)
      continue;
    for (std::size_t done = 0; done < m_slots[i].bytes; done += staging.size()) {
      staging.resize(std::min(kChunkBytes, m_slots[i].bytes - done));
      PTXBENCH_CUDA_TRY(cudaMemcpy(staging.data(),
                                   static_cast<const char*>(s.buffers[i].data()) + done,
                                   staging.size(), cudaMemcpyDeviceToHost),
                        util::ErrorKind::unsupported);
      if (!out.write(staging.data(), static_cast<std::streamsize>(staging.size())))
        return util::make_error(util::ErrorKind::io, "cannot write the single-call inputs");
    }
  }
  return util::Ok{};
}

std::vector<std::uint64_t> EvalBuffers::scalar_bits() const {
  std::vector<std::uint64_t> out;
  for (const PtxbenchScalar& scalar : m_scalars) {
    std::uint64_t bits = 0;
    std::memcpy(&bits, &scalar, sizeof bits);
    out.push_back(bits);
  }
  return out;
}

std::size_t EvalBuffers::device_bytes() const {
  std::size_t inputs = 0, outputs = 0;
  for (const TensorSlot& slot : m_slots)
    (slot.output ? outputs : inputs) += slot.bytes;
  // Per set its inputs and reference outputs; the call slot; the reference's slot and scratch.
  return (inputs + outputs) * m_sets.size() + (inputs + outputs) + (inputs + outputs);
}

std::uint64_t EvalBuffers::inputs_checksum(const std::vector<void*>& pointers,
                                           cudaStream_t stream) const {
  std::uint64_t digest = 0;
  for (std::size_t i = 0; i < m_slots.size(); ++i)
    if (!m_slots[i].output)
      digest = digest * 0x100000001B3ull ^ checksum(pointers[i], m_slots[i].bytes, stream);
  return digest;
}

std::uint64_t EvalBuffers::input_checksum(cudaStream_t stream) const {
  std::uint64_t digest = 0;
  for (int s = 0; s < set_count(); ++s)
    digest = digest * 0x100000001B3ull ^
             inputs_checksum(m_sets[static_cast<std::size_t>(s)].reference_pointers, stream);
  return digest;
}

bool EvalBuffers::slot_inputs_intact(cudaStream_t stream) const {
  if (m_staged < 0)
    return false;
  const Set& staged = m_sets[static_cast<std::size_t>(m_staged)];
  const std::uint64_t expected =
      staged.digest ? *staged.digest : inputs_checksum(staged.reference_pointers, stream);
  return inputs_checksum(m_call_slot.pointers, stream) == expected;
}

void EvalBuffers::fill_outputs_sentinel(cudaStream_t stream) {
  for (std::size_t i = 0; i < m_slots.size(); ++i)
    if (m_slots[i].output)
      exec::fill_sentinel(m_call_slot.pointers[i], m_slots[i].bytes, stream);
}

void EvalBuffers::fill_timing_outputs_sentinel(cudaStream_t stream) {
  for (protocol::DeviceBuffer& scratch : m_scratch_outputs)
    exec::fill_sentinel(scratch.data(), scratch.bytes(), stream);
}

std::vector<CompareStats> EvalBuffers::compare_with(const std::vector<void*>& pointers, int set,
                                                    cudaStream_t stream) const {
  const Set& s = m_sets[static_cast<std::size_t>(set)];
  std::vector<CompareStats> out;
  std::size_t reference_index = 0;
  for (std::size_t i = 0; i < m_slots.size(); ++i) {
    if (!m_slots[i].output)
      continue;
    out.push_back(compare_outputs(pointers[i], s.reference_outputs[reference_index++].data(),
                                  m_slots[i].dtype, m_slots[i].elements, m_tolerance, stream));
  }
  return out;
}

std::vector<CompareStats> EvalBuffers::compare(int set, cudaStream_t stream) const {
  return compare_with(m_call_slot.pointers, set, stream);
}

std::vector<CompareStats> EvalBuffers::compare_timing(int set, cudaStream_t stream) const {
  return compare_with(m_reference_slot.pointers, set, stream);
}

} // namespace ptxbench::exec
