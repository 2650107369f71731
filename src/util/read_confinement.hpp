// Which files a process may read: Linux Landlock rulesets for the candidate child and nvcc.
//
// Problem. A candidate that can read the vendor libraries' files can carry their kernels in:
// `.incbin` in an `asm` statement copies any file's bytes into kernel.so at build time, and
// native code in the child can read a library's cubins at run time, load them with CUPTI's
// callbacks turned off and name them like its own (docs/evaluation.md, catalogue rows 1 and
// 25). Nothing inside the child can prove that a module it loaded is its own, and the seccomp
// filter cannot look at the path an `openat` names. Another candidate's kernel.so in the
// compile cache is the same kind of file.
//
// Approach. Landlock (unprivileged, since Linux 5.13): a ruleset that handles reading files and
// listing folders allows them only beneath the folders and on the files it names. The parent
// makes the ruleset before it forks; the child restricts itself between fork and exec
// (util/process.hpp, SpawnOptions::read_ruleset), so every thread of the program it becomes,
// the CUDA driver's included, and every process that one starts, is confined from its first
// instruction. An allowance is built from folders: a folder that holds no vendor kernel library
// is allowed whole, one that holds some is allowed entry by entry, leaving those libraries out.
//
// Invariants. Writing is not handled here (the child's seccomp filter and nvcc's staging folder
// decide it). A path that does not exist is left out of a ruleset, never an error. Without
// Landlock (not in the kernel, off, or refused by a container's seccomp profile),
// make_read_ruleset says so (ErrorKind::unsupported) and the caller runs the process
// unconfined and records that it did (the evaluation's child_reads_confined, the compile
// cache key).
#pragma once

#include "util/error.hpp"
#include "util/process.hpp"

#include <filesystem>
#include <string_view>
#include <vector>

namespace ptxbench::util {

struct ReadAllowance {
  std::vector<std::filesystem::path> trees; // everything beneath, the folder itself included
  std::vector<std::filesystem::path> files; // that file alone
  // Folders that allow_all_but_kernel_libraries never allows, whole or inside a folder it
  // allows (the compile cache, the temporary folder that holds other children's folders); only
  // trees named explicitly reach into them.
  std::vector<std::filesystem::path> kept_out;
};

// Whether `name` is a vendor library of GPU kernels (cuBLAS, cuDNN, cuFFT, ..., torch's CUDA
// libraries, FlashInfer, CUTLASS builds), by the prefixes of their shared objects and archives.
bool is_kernel_library(std::string_view name);

// `folder` whole when nothing beneath it is a kernel library or kept out; otherwise each entry
// on its own, recursing into the sub-folders that hold one, never a kernel library or a folder
// kept out (`allowance.kept_out`).
void allow_all_but_kernel_libraries(const std::filesystem::path& folder, ReadAllowance& allowance);

// The files mapped into this process: its executable and shared libraries, by real path.
std::vector<std::filesystem::path> mapped_files();

// The folders of the files mapped into this process (its executable and shared libraries),
// each by allow_all_but_kernel_libraries: what a child built from the same libraries loads.
void allow_mapped_library_folders(ReadAllowance& allowance);

// Whether this kernel has Landlock (asked once).
bool read_confinement_available();

// A Landlock ruleset allowing exactly `allowance`'s reads, for SpawnOptions::read_ruleset.
// ErrorKind::unsupported when the kernel has no Landlock.
Expected<Fd> make_read_ruleset(const ReadAllowance& allowance);

} // namespace ptxbench::util
