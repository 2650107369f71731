#include "gpu_support.hpp"

namespace ptxbench::reference::testing {

PtxbenchCall ProblemBuffers::call(cudaStream_t stream) const {
  PtxbenchCall record{};
  record.version = PTXBENCH_CALL_VERSION;
  record.num_buffers = static_cast<std::uint32_t>(pointers.size());
  record.num_scalars = static_cast<std::uint32_t>(scalars.size());
  record.buffers = pointers.data();
  record.scalars = scalars.data();
  record.stream = stream;
  return record;
}

ProblemBuffers allocate(const suite::Problem& problem) {
  ProblemBuffers buffers;
  for (const auto* list : {&problem.inputs, &problem.outputs})
    for (const auto& tensor : *list) {
      if (tensor.scalar) {
        PtxbenchScalar scalar{};
        scalar.f32 = 1.0f / 11.313708498984761f; // 1/sqrt(128); GQA tests set their own
        buffers.scalars.push_back(scalar);
        continue;
      }
      buffers.owned.emplace_back(static_cast<std::size_t>(tensor.size_bytes()));
      buffers.pointers.push_back(buffers.owned.back().get());
    }
  return buffers;
}

suite::Problem with_gemm_m(suite::Problem problem, std::int64_t m) {
  problem.inputs[0].dims[0] = m;
  problem.outputs[0].dims[0] = m;
  return problem;
}

suite::Problem with_mha_dims(suite::Problem problem, std::int64_t batch, std::int64_t heads,
                             std::int64_t seq) {
  for (auto* list : {&problem.inputs, &problem.outputs})
    for (auto& tensor : *list) {
      tensor.dims[0] = batch;
      tensor.dims[1] = heads;
      tensor.dims[2] = seq;
    }
  return problem;
}

} // namespace ptxbench::reference::testing
