// The banned-library gate: a candidate must be a hand-written kernel, so sources that reach
// for cuBLAS, cuDNN, CUTLASS/CuTe or load libraries at run time are rejected before nvcc runs.
#pragma once

#include "util/error.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ptxbench::compile {

enum class BannedLibrary : std::uint8_t {
  cublas = 1,
  cudnn = 2,
  cutlass = 3,
  dynamic_loading = 4, // dlopen / dlsym and friends
};

std::string_view display_name(BannedLibrary library);

struct BannedUse {
  BannedLibrary library = BannedLibrary::cublas;
  std::size_t line = 0; // 1-based line of the first use
  std::string excerpt;  // that line of the original source, trimmed

  // The feedback sentence, e.g. "ERROR: Your kernel uses cuBLAS library calls instead of ..."
  std::string message() const;
};

// The first banned use in source order, ignoring comments and string literals.
std::optional<BannedUse> find_banned_library(std::string_view source);

// Error{banned_library}: message() followed by the line of the first use.
util::Status check_banned_libraries(std::string_view source);

} // namespace ptxbench::compile
