// The single-call mode of `ptxbench-candidate` (child/candidate_single_call.cpp) as both sides
// see it: what the run does around its one call, how its reply is found on stdout, and what
// its exit status means. The supervisor's tool passes (exec/tool_passes.hpp) start it under
// compute-sanitizer and ncu.
#pragma once

#include <string>
#include <string_view>

namespace ptxbench::protocol {

// What a single-call run does around its one call (candidate_single_call.cpp).
struct SingleCallOptions {
  std::string nvtx_range; // push/pop range around the call; empty: none
  int warmup = 0;         // calls before the ranged one, outside the range
};

// The line prefix of a single-call run's reply on stdout (the reply itself is protocol JSON).
inline constexpr std::string_view kSingleCallReplyPrefix = "ptxbench-candidate single-call reply: ";

// Exit statuses of a single-call run.
inline constexpr int kSingleCallOk = 0;
inline constexpr int kSingleCallSetupFailed = 3; // spec, library, signature or inputs
inline constexpr int kSingleCallFailed = 4;      // the call (or a warm-up call) failed

} // namespace ptxbench::protocol
