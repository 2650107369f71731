// What a built kernel.so asks the dynamic linker for, and the rule it must obey
// (docs/evaluation.md "What counts as the candidate's work").
//
// The source gate reads the spelling of the source; a candidate can always spell a name so the
// gate does not see it (`extern "C" void* f(void*, const char*) __asm__("dl" "sym");`). The
// binary cannot hide what it imports: every function it calls from another shared object is an
// undefined symbol of its dynamic symbol table, and every library it needs is a DT_NEEDED
// entry. This check reads both from the ELF file itself, before the library is ever loaded.
#pragma once

#include "util/error.hpp"

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ptxbench::compile {

struct BinaryImports {
  std::vector<std::string> needed;            // DT_NEEDED sonames, in file order
  std::vector<std::string> undefined_symbols; // dynamic symbols the object does not define
};

// Parses an ELF64 little-endian shared object. Errors (invalid_input) for anything else or a
// file whose tables point outside it; never reads out of bounds.
util::Expected<BinaryImports> read_imports(std::span<const std::byte> elf);
util::Expected<BinaryImports> read_imports(const std::filesystem::path& file);

// Why an import breaks the rule. Persisted in JSON: explicit values.
enum class ImportRule : std::uint8_t {
  library = 1, // a shared library other than the CUDA runtime, the driver and the C/C++ runtime
  dynamic_loading = 2, // the loader: dlopen, dlsym and their relatives
  module_loading = 3,  // CUDA calls that load or link GPU code at run time, or reach the
                       // driver's entry points by name
  process = 4,         // starting programs, tracing processes, raw system calls
  vendor_library = 5,  // a symbol of cuBLAS, cuDNN, NVRTC, nvJitLink and the other libraries
  files = 6, // opening files, writing or duplicating descriptors, remapping memory, signalling
             // processes: the ways to the harness's reply pipe, its files and its code
};

std::string_view to_string(ImportRule rule);

struct ForbiddenImport {
  ImportRule rule = ImportRule::library;
  std::string name; // the soname or symbol

  // The feedback sentence: what was imported, why that is not allowed.
  std::string message() const;
};

// The first import that breaks the rule: needed libraries first, then symbols in table order.
std::optional<ForbiddenImport> find_forbidden_import(const BinaryImports& imports);

// Whether a CUDA symbol loads or links GPU code at run time, or hands out driver functions by
// name: module and library loading, the JIT linker, cuGetProcAddress, export tables. The
// import rule applies it to kernel.so's symbols; the candidate process applies it to the
// names asked of cudaGetDriverEntryPoint*, which the knowledge packs use (legitimately) for
// cuTensorMapEncodeTiled. Header-only: the candidate process links no compile/ code.
constexpr bool loads_gpu_code(std::string_view symbol) {
  constexpr std::string_view kPrefixes[] = {"cuModuleLoad",
                                            "cuModuleGetFunction",
                                            "cuLibrary",
                                            "cuKernelGet",
                                            "cuLink",
                                            "cuGetProcAddress",
                                            "cuGetExportTable",
                                            "cudaLibrary",
                                            "cudaGetExportTable",
                                            "cuModuleUnload"};
  for (std::string_view prefix : kPrefixes)
    if (symbol.starts_with(prefix))
      return true;
  return false;
}

} // namespace ptxbench::compile
