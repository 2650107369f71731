// How the GEMM baseline's autotuned algorithm reaches the A/A hook in the child.
//
// The supervisor times cuBLASLt's heuristic candidates once and keeps its choice in a file
// under the cache (reference/gemm_autotune.hpp). The child may neither read that folder (its
// read ruleset keeps the cache out, util/read_confinement.hpp) nor write any file (its
// system-call filter), so a hook that looked the choice up would time the candidates again,
// try to write the file and be ended by the filter; and a choice made again in the child could
// differ from the supervisor's under noise, which is no A/A. So aa_speedup builds each GEMM
// baseline before it starts a child, and hands the cache's records to every child in this
// environment variable; the hook runs the algorithm they name and writes nothing.
#pragma once

namespace ptxbench::bench {

// The records of the supervisor's autotune cache, as its file holds them (JSON).
inline constexpr const char* kAaAutotuneRecordsVariable = "PTXBENCH_AA_AUTOTUNE_RECORDS";

} // namespace ptxbench::bench
