// ptxbench-candidate: the child process that runs one candidate for the evaluator
// (protocol/protocol.hpp). Started by the supervisor only, with the command line of
// protocol/child_arguments.hpp:
//   ptxbench-candidate --device D --request-fd N --reply-fd M
// or, under compute-sanitizer or ncu, for one call on its own (candidate_single_call.cpp):
//   ptxbench-candidate --device D --single-call SPEC --inputs FILE [--nvtx-range NAME] [--warmup N]
#include "child/candidate.hpp"
#include "protocol/child_arguments.hpp"
#include "util/fs.hpp"

#include <cstdio>
#include <exception>
#include <string>
#include <vector>

namespace {

using ptxbench::protocol::ChildArguments;

int run_single_call(const ChildArguments& args) {
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
  ptxbench::child::CandidateServer server(args.device);
  return server.single_call(*spec, args.inputs, args.options);
}

} // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> words(argv + 1, argv + argc);
  auto args = ptxbench::protocol::parse_child_arguments(words);
  if (!args) {
    std::fprintf(stderr, "%s\n", args.error().message.c_str());
    return 2;
  }
  try {
    if (args->mode == ptxbench::protocol::ChildMode::single_call)
      return run_single_call(*args);
    ptxbench::child::CandidateServer server(args->device);
    return server.serve(args->request_fd, args->reply_fd);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ptxbench-candidate: %s\n", e.what());
    return 70;
  }
}
