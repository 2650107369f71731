// What the supervisor and the candidate child share about the child's system-call filter
// (child/system_call_filter.hpp): how a refused call ends the child and how its log names it.
#pragma once

#include <string_view>

namespace ptxbench::protocol {

// The exit status of a child whose filter refused a system call (128 + SIGSYS, as a shell
// would show a death by SIGSYS).
inline constexpr int kSystemCallRefusedExit = 159;

// The line the child writes to its log (stderr) before it exits with that status; the rest of
// the line names the call ("openat for writing (257)").
inline constexpr std::string_view kSystemCallRefusedPrefix =
    "ptxbench-candidate: the system-call filter refused ";

} // namespace ptxbench::protocol
