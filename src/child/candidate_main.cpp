// ptxbench-candidate: the child process that runs one candidate kernel.so for the evaluator
// (protocol/protocol.hpp), a `main` over libptxbench_child.so (child/ptxbench_child.h). Started
// by the supervisor only, with the command line of protocol/child_arguments.hpp:
//   ptxbench-candidate --device D --request-fd N --reply-fd M [--buffer-fd B]
// or, under compute-sanitizer or ncu, for one call on its own (candidate_single_call.cpp):
//   ptxbench-candidate --device D --single-call SPEC --inputs FILE [--nvtx-range NAME] [--warmup N]
#include "child/ptxbench_child.h"

int main(int argc, char** argv) {
  return ptxbench_child_main(argc, argv);
}
