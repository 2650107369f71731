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
// A Triton candidate's warm-up call (candidate.hpp) compiles and loads its kernels: code
// loading is allowed while it runs (CodeLoading::warm_up) and refused again after. (Triton's
// own driver module calls libcuda directly, not through this lookup, so the window matters
// only to what the runtime is asked for; a kernel compiled after the warm-up is caught by the
// supervisor's listing of the evaluation's Triton cache, exec/cubin_folder.hpp.)
//
// Invariants. The record only grows; the server sends it with every reply (Reply::refused),
// and the supervisor fails the evaluation on any entry (RUNTIME_ERROR, rule runtime_loading).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ptxbench::child {

// Whether driver functions that load GPU code are handed out now. Explicit values.
enum class CodeLoading : std::uint8_t { refused = 1, warm_up = 2 };

// Sets the process's state (refused from the start).
void set_code_loading(CodeLoading state);
// Whether the guard refuses a lookup of `symbol` in `state`: code-loading names, outside the
// warm-up.
bool refuses(std::string_view symbol, CodeLoading state);

// The driver symbols refused so far in this process, in the order they were asked for.
std::vector<std::string> refused_entry_points();

} // namespace ptxbench::child
