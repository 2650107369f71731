// Static disassembly of a built CUDA binary (.so, .o, .cubin, fatbin) with cuobjdump, parsed
// into per-function instruction lists.
//
// `cuobjdump --dump-sass` prints, for every embedded ELF, a `code for sm_XX` line, then per
// kernel a `Function : <mangled>` line, metadata (`.headerflags`, `.target`) and instruction
// lines of the form `/*0110*/   @!P0 UTMALDG.2D [UR8], [UR12] ;   /* 0x...encoding */`, each
// followed by a second line holding the upper encoding word. Only lines that start with a
// `/*<hex>*/` address count as instructions, so a name in metadata or a symbol (say a kernel
// called `HGMMA_probe`) can never be counted as an opcode. A fatbin with several arches, or
// several ELF sections of one arch (a .so built from two translation units), gives one
// function record per (arch, section, function), in output order.
#pragma once

#include "util/error.hpp"
#include "util/subprocess.hpp"

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace ptxbench::sass {

struct Instruction {
  std::uint32_t address = 0; // byte offset inside the function
  std::string predicate;     // "@!P0", "@UP1"; empty when unpredicated
  std::string opcode;        // with modifiers: "HGMMA.64x128x16.F32.BF16"
  std::string root;          // before the first '.': "HGMMA"
};

struct Function {
  std::string mangled_name;
  std::string demangled_name; // the mangled name when it does not demangle
  std::string arch;           // "sm_90a"
  std::vector<Instruction> instructions;
};

struct Disassembly {
  std::vector<std::string> arches; // every `code for` arch, first-seen order, no repeats
  std::vector<Function> functions;
};

// Pure parser of `cuobjdump --dump-sass` text.
Disassembly parse_cuobjdump_sass(std::string_view text);

// Itanium demangling; returns the input unchanged when it is not a mangled name.
std::string demangle(std::string_view mangled);

// Where to look for cuobjdump, in order. from_environment() fills it from the process.
struct ToolSearch {
  std::filesystem::path env_override;           // $PTXBENCH_CUOBJDUMP; authoritative when set
  std::filesystem::path nvcc_dir;               // folder of the nvcc found on PATH
  std::vector<std::filesystem::path> path_dirs; // $PATH entries
  std::filesystem::path deps_bin;               // data_root()/.deps/nvidia/cu13/bin

  static ToolSearch from_environment();
};

// The cuobjdump to use, or a not_found Error naming every place that was searched.
util::Expected<std::filesystem::path> locate_cuobjdump(const ToolSearch& search);

class Disassembler {
public:
  // `cache_dir` (may be empty: no cache) keeps cuobjdump's output per binary content and
  // cuobjdump build, so a binary seen before — a compile-cache hit, the evaluator checking what
  // the agent already checked — is not disassembled again.
  Disassembler(util::ProcessRunner& runner, std::filesystem::path cuobjdump,
               std::chrono::milliseconds timeout = std::chrono::seconds(120),
               std::filesystem::path cache_dir = {});

  // A binary without device code gives an empty Disassembly; a missing file is not_found; a
  // cuobjdump that fails or overruns the timeout is subprocess / timeout.
  util::Expected<Disassembly> disassemble(const std::filesystem::path& binary) const;

  // The SHA-256 of every cubin image inside `binary` (cuobjdump -xelf all, in a folder of its
  // own): the identities the driver reports for the modules it loads from it.
  util::Expected<std::vector<std::string>> cubin_hashes(const std::filesystem::path& binary) const;

  const std::filesystem::path& cuobjdump() const { return m_cuobjdump; }

private:
  // cuobjdump's stdout for `binary` ("" for a binary without device code).
  util::Expected<std::string> dump(const std::filesystem::path& binary) const;

  util::ProcessRunner& m_runner;
  std::filesystem::path m_cuobjdump;
  std::chrono::milliseconds m_timeout;
  std::filesystem::path m_cache_dir;
};

} // namespace ptxbench::sass
