// Host generation of seeded input tensors into a caller's buffer. Element i of a tensor is a
// pure function of (seed, tensor index, i) (philox.hpp), so the result does not depend on the
// number of threads, and a GPU kernel using the same functions produces the same values.
#pragma once

#include "suite/recipes.hpp"
#include "trace/schema.hpp"
#include "util/error.hpp"

#include <cstddef>
#include <cstdint>
#include <span>

namespace ptxbench::suite {

struct TensorRequest {
  Distribution distribution = Distribution::normal; // normal or spiky
  trace::DType dtype = trace::DType::bfloat16;      // bfloat16 or float32
  std::uint64_t seed = 0;
  std::uint32_t tensor_index = 0;
  std::size_t element_count = 0;
};

// How many host threads to use; 0 means std::thread::hardware_concurrency().
struct ThreadCount {
  unsigned value = 0;
};

// Fills `out` (element_count elements of dtype, little-endian) with the requested values.
// Unsupported distributions or dtypes and a buffer of the wrong size are invalid_input.
util::Status generate_tensor(const TensorRequest& request, std::span<std::byte> out,
                             ThreadCount threads = {});

} // namespace ptxbench::suite
