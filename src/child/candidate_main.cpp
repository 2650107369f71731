// ptxbench-candidate: the child process that runs one candidate for the evaluator
// (protocol/protocol.hpp). Started by the supervisor only:
//   ptxbench-candidate --request-fd N --reply-fd M
// or, under compute-sanitizer or ncu, for one call on its own (candidate_single_call.cpp):
//   ptxbench-candidate --single-call SPEC --inputs FILE [--nvtx-range NAME] [--warmup N]
#include "child/candidate.hpp"
#include "util/fs.hpp"

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <string_view>

namespace {

struct Arguments {
  int request_fd = -1;
  int reply_fd = -1;
  std::string single_call;
  std::string inputs;
  ptxbench::protocol::SingleCallOptions options;
};

Arguments parse(int argc, char** argv) {
  Arguments args;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string_view flag = argv[i];
    const char* value = argv[i + 1];
    if (flag == "--request-fd")
      args.request_fd = std::atoi(value);
    else if (flag == "--reply-fd")
      args.reply_fd = std::atoi(value);
    else if (flag == "--single-call")
      args.single_call = value;
    else if (flag == "--inputs")
      args.inputs = value;
    else if (flag == "--nvtx-range")
      args.options.nvtx_range = value;
    else if (flag == "--warmup")
      args.options.warmup = std::atoi(value);
  }
  return args;
}

int run_single_call(const Arguments& args) {
  auto text = ptxbench::util::read_file(args.single_call);
  if (!text) {
    std::fprintf(stderr, "ptxbench-candidate: %s\n", text.error().message.c_str());
    return ptxbench::protocol::kSingleCallSetupFailed;
  }
  auto spec = ptxbench::protocol::decode_request(*text);
  if (!spec) {
    std::fprintf(stderr, "ptxbench-candidate: %s\n", spec.error().message.c_str());
    return ptxbench::protocol::kSingleCallSetupFailed;
  }
  ptxbench::child::CandidateServer server;
  return server.single_call(*spec, args.inputs, args.options);
}

} // namespace

int main(int argc, char** argv) {
  const Arguments args = parse(argc, argv);
  const bool single = !args.single_call.empty() && !args.inputs.empty();
  if (!single && (args.request_fd < 0 || args.reply_fd < 0)) {
    std::fprintf(stderr, "usage: ptxbench-candidate --request-fd N --reply-fd M\n"
                         "       ptxbench-candidate --single-call SPEC --inputs FILE "
                         "[--nvtx-range NAME] [--warmup N]\n");
    return 2;
  }
  try {
    if (single)
      return run_single_call(args);
    ptxbench::child::CandidateServer server;
    return server.serve(args.request_fd, args.reply_fd);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ptxbench-candidate: %s\n", e.what());
    return 70;
  }
}
