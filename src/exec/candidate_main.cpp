// ptxbench-candidate: the child process that runs one candidate for the evaluator
// (exec/protocol.hpp). Started by the supervisor only:
//   ptxbench-candidate --request-fd N --reply-fd M
#include "exec/candidate.hpp"

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>

int main(int argc, char** argv) {
  int request_fd = -1, reply_fd = -1;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--request-fd") == 0) request_fd = std::atoi(argv[i + 1]);
    else if (std::strcmp(argv[i], "--reply-fd") == 0) reply_fd = std::atoi(argv[i + 1]);
  }
  if (request_fd < 0 || reply_fd < 0) {
    std::fprintf(stderr, "usage: ptxbench-candidate --request-fd N --reply-fd M\n");
    return 2;
  }
  try {
    ptxbench::exec::CandidateServer server;
    return server.serve(request_fd, reply_fd);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "ptxbench-candidate: %s\n", e.what());
    return 70;
  }
}
