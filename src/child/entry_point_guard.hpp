// The candidate process's guard on cudaGetDriverEntryPoint* (docs/evaluation.md "What counts
// as the candidate's work").
//
// Problem. The import rule (compile/imports.hpp) keeps a kernel.so from importing the calls
// that load GPU code at run time, but the CUDA runtime hands out any driver function by name:
// cudaGetDriverEntryPointByVersion("cuModule" "LoadData", …) needs no such import, and the
// knowledge packs use this very call, legitimately, for cuTensorMapEncodeTiled.
//
// Approach. ptxbench-candidate defines the four runtime entry-point functions itself and
// exports them from the executable (CMake: --export-dynamic-symbol). The dynamic linker binds a
// kernel.so's references to the executable's definitions before libcudart's, so every lookup
// the candidate makes comes here. A name that loads or links GPU code (compile::loads_gpu_code)
// is refused — cudaErrorSymbolNotFound, a null pointer, cudaDriverEntryPointSymbolNotFound —
// and recorded; every other name is passed to libcudart's own function (dlsym RTLD_NEXT).
//
// Invariants. The record only grows; the server sends it with every reply (Reply::refused),
// and the supervisor fails the evaluation on any entry (RUNTIME_ERROR, rule runtime_loading).
#pragma once

#include <string>
#include <vector>

namespace ptxbench::child {

// The driver symbols refused so far in this process, in the order they were asked for.
std::vector<std::string> refused_entry_points();

} // namespace ptxbench::child
