// The two functions of child/ptxbench_child.h: the command line of
// protocol/child_arguments.hpp parsed once, then the CandidateServer over a kernel.so (or one
// call on its own, for compute-sanitizer and ncu) or over a host's load and invoke.
#include "child/candidate.hpp"
#include "child/ptxbench_child.h"
#include "protocol/child_arguments.hpp"
#include "util/fs.hpp"

#include <cstdio>
#include <exception>
#include <string>
#include <vector>

namespace {

using ptxbench::protocol::ChildArguments;

int run_single_call(const ChildArguments& args, const PtxbenchChildHost* host) {
  auto text = ptxbench::util::read_file(args.spec);
  if (!text) {
    std::fprintf(stderr, "ptxbench-candidate: %s\n", text.error().message.c_str());
    return ptxbench::protocol::kSingleCallSetupFailed;
  }
  auto spec = ptxbench::protocol::decode_request(*text);
  if (!spec) {
    std::fprintf(stderr, "ptxbench-candidate: %s\n", spec.error().message.c_str());
    return ptxbench::protocol::kSingleCallSetupFailed;
  }
  ptxbench::child::CandidateServer server(args.device, host);
  return server.single_call(*spec, args.inputs, args.options);
}

int run_child(int argc, const char* const* argv, const PtxbenchChildHost* host) {
  const std::vector<std::string> words(argv + (argc > 0 ? 1 : 0), argv + argc);
  auto args = ptxbench::protocol::parse_child_arguments(words);
  if (!args) {
    std::fprintf(stderr, "%s\n", args.error().message.c_str());
    return 2;
  }
  try {
    if (args->mode == ptxbench::protocol::ChildMode::single_call)
      return run_single_call(*args, host);
    ptxbench::child::CandidateServer server(args->device, host);
    return server.serve(args->request_fd, args->reply_fd, args->buffer_fd);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ptxbench-candidate: %s\n", e.what());
    return 70;
  }
}

} // namespace

extern "C" __attribute__((visibility("default"))) int ptxbench_child_main(int argc,
                                                                          const char* const* argv) {
  return run_child(argc, argv, nullptr);
}

extern "C" __attribute__((visibility("default"))) int
ptxbench_child_host_main(int argc, const char* const* argv, const PtxbenchChildHost* host) {
  if (host == nullptr) {
    std::fprintf(stderr, "ptxbench-candidate: no host given\n");
    return 2;
  }
  return run_child(argc, argv, host);
}
