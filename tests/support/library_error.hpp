// What a GPU-library check threw (cuda::LibraryError), for tests of the check macros.
#pragma once

#include "cuda/check.hpp"

#include <string>

namespace ptxbench::test_support {

template <typename Call> std::string library_error_message(Call&& call) {
  try {
    call();
  } catch (const cuda::LibraryError& error) {
    return error.what();
  }
  return "(nothing thrown)";
}

} // namespace ptxbench::test_support
