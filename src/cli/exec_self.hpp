// A fresh run of this very command: `serve --broker` after a GPU's CUDA context broke, since
// only a new process gets a new context (docs/service.md "Health").
#pragma once

#include "util/error.hpp"

namespace ptxbench::cli {

// Replaces this process with /proc/self/exe and the arguments of /proc/self/cmdline; returns
// only when that fails, with why. Flushes stdio first; descriptors without FD_CLOEXEC pass on.
util::Error exec_self();

} // namespace ptxbench::cli
