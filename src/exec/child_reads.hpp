// What a `ptxbench-candidate` child may read: its own program and libraries, the CUDA driver's
// and the profiler's files, the system's, and the one folder its kernel.so is copied into — no
// vendor kernel library, no compile cache, no other evaluation's files
// (util/read_confinement.hpp; docs/evaluation.md, "What the child may read").
#pragma once

#include "util/read_confinement.hpp"

#include <filesystem>

namespace ptxbench::exec {

// `binary`'s allowance with `folder` (the child's own, where its kernel.so goes): the folders of
// this process's libraries (the CUDA driver's among them, which the child loads at run time),
// of `binary`, of libptxbench_child.so and of the libraries `binary` loads at start, all but
// their kernel libraries; /proc, /sys, /dev, /etc, /usr/share, /usr/bin (programs hold no
// kernels), the problems' definitions; and the whole folder of a kernel library that `binary`
// itself loads (the A/A's ptxbench-candidate-aa links cuBLASLt and cuDNN, which load their parts
// from there).
util::ReadAllowance child_reads(const std::filesystem::path& binary,
                                const std::filesystem::path& folder);

} // namespace ptxbench::exec
