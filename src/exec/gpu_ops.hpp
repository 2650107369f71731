// The supervisor's GPU work on evaluation buffers: seeded input generation (suite/philox), the
// NaN sentinel, input checksums and the output comparison (compare_rule.hpp), each enqueued on
// a stream the caller owns. Everything here runs in the supervisor, never in the child.
#pragma once

#include "exec/compare_rule.hpp"
#include "suite/recipes.hpp"
#include "trace/schema.hpp"
#include "util/error.hpp"

#include <cstddef>
#include <cstdint>
#include <cuda_runtime.h>

namespace ptxbench::exec {

// The sentinel byte outputs are filled with: 0xFFFF is a NaN in bf16 and f16, 0xFFFFFFFF in f32.
inline constexpr int kSentinelByte = 0xFF;

struct RandomFill {
  suite::Distribution distribution = suite::Distribution::normal; // normal or spiky
  trace::DType dtype = trace::DType::bfloat16;                    // bfloat16, float16, float32
  std::uint64_t seed = 0;
  std::uint32_t tensor_index = 0;
  std::size_t element_count = 0;
};

// Enqueues the generation of `fill` into `out`; unsupported combinations are invalid_input.
util::Status fill_random(void* out, const RandomFill& fill, cudaStream_t stream);

void fill_sentinel(void* out, std::size_t bytes, cudaStream_t stream);

// An order-independent 64-bit digest of `bytes` bytes (synchronises `stream`).
std::uint64_t checksum(const void* data, std::size_t bytes, cudaStream_t stream);

struct CompareStats {
  std::uint64_t elements = 0;
  std::uint64_t failed = 0;
  std::uint64_t candidate_nan = 0;
  std::uint64_t candidate_inf = 0;
  std::uint64_t reference_nonfinite = 0;
  double max_abs_error = 0.0; // over finite comparisons
  double max_rel_error = 0.0;

  // Folds another output or set into this one.
  void merge(const CompareStats& other);
  // FlashInfer-Trace reporting: +inf when a candidate inf failed, NaN when a NaN did.
  double reported_abs_error() const;
  double reported_rel_error() const;
};

// Compares `count` elements of `dtype` (float32, float16, bfloat16) on the GPU and reduces the
// statistics (synchronises `stream`). Other dtypes are compared bit for bit.
CompareStats compare_outputs(const void* candidate, const void* reference, trace::DType dtype,
                             std::size_t count, Tolerance tolerance, cudaStream_t stream);

} // namespace ptxbench::exec
