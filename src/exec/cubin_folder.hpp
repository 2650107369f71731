// The cubins of a candidate compiled in its warm-up call (a Triton evaluation): what its
// compiler built into the folder Candidate::warm_up_cubins names (frontend/candidate.hpp; for
// Triton its TRITON_CACHE_DIR) is the candidate's binary. After the warm-up they
// give the static SASS report (sass::analyze_binaries) and the candidate's own kernel names for
// the foreign_kernel rule (their symbol tables, measure/cubin_symbols.hpp); a cubin that appears
// after the warm-up was compiled inside a traced or timed call (inconsistent_work).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace ptxbench::exec {

// Every `*.cubin` under `cache` (recursively), sorted; empty when the folder does not exist.
std::vector<std::filesystem::path> list_cubins(const std::filesystem::path& cache);

// The function names the cubins define, each once, in file then symbol order. A file that is
// not a readable ELF64 image contributes none.
std::vector<std::string> cubin_kernel_names(const std::vector<std::filesystem::path>& cubins);
// The SHA-256 of each cubin's image, sorted: the identities the driver reports when it loads
// them (launch_rules.hpp, own_cubins). A cubin that cannot be read has none.
std::vector<std::string> cubin_hashes(const std::vector<std::filesystem::path>& cubins);

// The cubins of `after` that `before` lacks, in `after`'s order.
std::vector<std::filesystem::path> new_cubins(const std::vector<std::filesystem::path>& before,
                                              const std::vector<std::filesystem::path>& after);

} // namespace ptxbench::exec
