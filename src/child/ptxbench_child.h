/* The C ABI of libptxbench_child.so: the candidate child (candidate.hpp) as a library, so that
 * the executable `ptxbench-candidate` (CUDA candidates) and `python3 -m ptxbench_triton.child`
 * (Triton candidates, through ctypes) run one child (docs/evaluation.md, "Triton candidates").
 * Plain C: Python's ctypes mirrors these declarations in python/ptxbench_triton/child.py. */
#ifndef PTXBENCH_CHILD_H
#define PTXBENCH_CHILD_H

#include "compile/ptxbench_call.h"

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PTXBENCH_CHILD_HOST_VERSION 1u

/* Loads the candidate of a `load` request: `module` is its file (the request's `library`),
 * `signature` the signature it must have, `binding` a JSON text saying how a PtxbenchCall maps
 * to its parameters (frontend/triton/binding.hpp). Returns 0, or nonzero with a sentence in
 * `message` (at most `message_bytes` bytes, NUL included). */
typedef int (*PtxbenchChildLoadFn)(void* user, const char* module, const char* signature,
                                   const char* binding, char* message, size_t message_bytes);

/* A host that is not a kernel.so: the child calls `load` for the `load` request and `invoke`
 * wherever it would call a kernel.so's ptxbench_invoke, and runs one warm-up call on input set
 * 0 inside `load` (JIT compilation, autotuning) before any call it traces or times. */
typedef struct PtxbenchChildHost {
  unsigned int version; /* PTXBENCH_CHILD_HOST_VERSION */
  void* user;
  PtxbenchChildLoadFn load;
  PtxbenchInvokeFn invoke;
} PtxbenchChildHost;

/* The child with the command line of protocol/child_arguments.hpp (argv[0] included), loading
 * kernel.so files: what `ptxbench-candidate` runs. Returns the process exit status. */
int ptxbench_child_main(int argc, const char* const* argv);

/* The same child for `host`: serving requests, or one call on its own (the single-call mode,
 * which compute-sanitizer runs), after the host's load and warm-up. Returns the process exit
 * status. */
int ptxbench_child_host_main(int argc, const char* const* argv, const PtxbenchChildHost* host);

#ifdef __cplusplus
}
#endif

#endif /* PTXBENCH_CHILD_H */
