// What the status a candidate's call returned means, in words: ptxbench_invoke returns a
// cudaError_t of the candidate's own work, or a negative value of the shim (compile/abi.hpp).
#pragma once

#include <string>

namespace ptxbench::protocol {

// "cudaErrorIllegalAddress: an illegal memory access was encountered", or
// "ptxbench_invoke returned -2".
std::string call_status_text(int status);

} // namespace ptxbench::protocol
