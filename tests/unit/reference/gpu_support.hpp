// Helpers of the reference GPU tests: ABI call records over freshly allocated buffers and
// shrunken copies of suite problems (plus device_support.hpp).
#pragma once

#include "compile/ptxbench_call.h"
#include "device_support.hpp"
#include "reference/library_check.hpp"
#include "suite/problem.hpp"
#include "suite_support.hpp"
#include "util/error.hpp"

#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace ptxbench::reference::testing {

// One device buffer per tensor of the problem (inputs then outputs), sized from its dims.
struct ProblemBuffers {
  std::vector<DeviceBuffer> owned;
  std::vector<void*> pointers;
  std::vector<PtxbenchScalar> scalars;

  PtxbenchCall call(cudaStream_t stream = nullptr) const;
};
ProblemBuffers allocate(const suite::Problem& problem);

// Copies of suite problems with other dims (resolved tensors only: what the references read).
suite::Problem with_gemm_m(suite::Problem problem, std::int64_t m);
suite::Problem with_mha_dims(suite::Problem problem, std::int64_t batch, std::int64_t heads,
                             std::int64_t seq);

// The value, or the test stops with the error's message.
template <typename T> T must(util::Expected<T> made) {
  if (!made)
    throw std::runtime_error(made.error().message);
  return std::move(*made);
}

// The attention workloads' sm_scale, 1/sqrt(128).
constexpr float kScale = 0.08838834764831843f;

} // namespace ptxbench::reference::testing
