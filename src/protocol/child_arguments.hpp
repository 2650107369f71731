// The command line of `ptxbench-candidate`, written by the supervisor (exec/child_process.cpp,
// exec/tool_passes.cpp) and read by the child (child/candidate_main.cpp) with one definition:
//   ptxbench-candidate --device D --request-fd N --reply-fd M [--buffer-fd B]
//   ptxbench-candidate --device D --single-call SPEC --inputs FILE [--nvtx-range NAME] [--warmup N]
// The device is the supervisor's CUDA device ordinal: the child creates its context there, so
// a supervisor on any GPU runs its candidates on that GPU. It is never implied: a command line
// without it, with an unknown flag, a flag without its value or a number that is not one is
// refused with a message that says which.
#pragma once

#include "protocol/single_call.hpp"
#include "util/error.hpp"

#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ptxbench::protocol {

// Which of the two modes a command line asks for. Explicit values.
enum class ChildMode : std::uint8_t { serve = 1, single_call = 2 };

struct ChildArguments {
  ChildMode mode = ChildMode::serve;
  int device = -1;
  // serve
  int request_fd = -1;
  int reply_fd = -1;
  int buffer_fd = -1; // the Unix socket the call slot's descriptors arrive on; -1: none
  // single_call
  std::filesystem::path spec;
  std::filesystem::path inputs;
  SingleCallOptions options;
};

// argv[0] is `binary`.
// `buffer_fd` < 0: no buffer socket (the slot must then be shared by CUDA IPC).
std::vector<std::string> serve_argv(const std::filesystem::path& binary, int device, int request_fd,
                                    int reply_fd, int buffer_fd = -1);
std::vector<std::string> single_call_argv(const std::filesystem::path& binary, int device,
                                          const std::filesystem::path& spec,
                                          const std::filesystem::path& inputs,
                                          const SingleCallOptions& options);

// `args` without argv[0]. ErrorKind::invalid_input for a bad command line.
util::Expected<ChildArguments> parse_child_arguments(std::span<const std::string> args);

// The usage text the child prints for a bad command line.
std::string_view child_usage();

} // namespace ptxbench::protocol
