// Compiling a candidate with its shim into kernel.so (docs/abi.md "Build"), behind an interface.
//
// Outcome convention: a candidate that does not compile or link is an expected result, not an
// error — compile() returns a CompileResult with ok == false, the full log, the first errors
// and a diagnostic for the model, and the result is cached like a success (same inputs, same
// result). compile() returns an Error only when no verdict about the candidate exists: the
// compile ran past its deadline (ErrorKind::timeout, never cached), nvcc is missing or died
// abnormally (unsupported / subprocess), or the cache folder cannot be written (io).
#pragma once

#include "compile/abi.hpp"
#include "compile/nvcc_log.hpp"
#include "util/error.hpp"
#include "util/read_confinement.hpp"
#include "util/subprocess.hpp"

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ptxbench::compile {

enum class Arch : std::uint8_t { sm_90a = 1, sm_100a = 2 };

std::string_view to_string(Arch arch);
std::optional<Arch> parse_arch(std::string_view text);
// {"-gencode", "arch=compute_90a,code=sm_90a"}; never plain -arch (nvcc 13 would add a
// compute_90 pass that rejects wgmma).
std::vector<std::string> gencode_flags(Arch arch);
// Every nvcc flag of the ABI build for `arch`, without input files and -o.
std::vector<std::string> nvcc_flags(Arch arch);

inline constexpr std::chrono::seconds kDefaultCompileTimeout{180};

struct CompileRequest {
  std::string source;             // kernel.cu
  std::string shim;               // ptxbench_shim.cu
  std::string expected_signature; // quoted when `run` fails to link
  Arch arch = Arch::sm_90a;
  std::chrono::milliseconds timeout = kDefaultCompileTimeout;

  // The ABI build of `source` against the shim generated from `signature`.
  static CompileRequest for_candidate(std::string source, const Signature& signature, Arch arch);
};

struct CompileResult {
  bool ok = false;
  std::filesystem::path library;         // kernel.so; empty unless ok
  std::string log;                       // everything nvcc printed
  std::vector<std::string> first_errors; // see first_errors() in nvcc_log.hpp
  std::string diagnostic;                // one message for the model; empty when ok
  std::vector<KernelResources> kernels;  // from -Xptxas -v, also for failed links
  std::string cache_key;
  bool cache_hit = false;
  std::chrono::milliseconds compile_time{0}; // of the nvcc run that produced the result

  // True when `diagnostic` only repeats the first error line ("Compilation failed:\n" + it);
  // false when it says something the error lines do not (the expected `run` signature, or
  // that nvcc printed no error line), so a reader should see it beside them.
  bool diagnostic_restates_first_error() const;
};

class Compiler {
public:
  virtual ~Compiler() = default;
  virtual util::Expected<CompileResult> compile(const CompileRequest& request) = 0;
};

struct NvccOptions {
  std::filesystem::path nvcc;      // empty: nvcc on PATH, $CUDA_HOME/bin, /usr/local/cuda/bin
  std::filesystem::path cache_dir; // empty: util::cache_root() / "compile"
};

// Safe to share between threads when the ProcessRunner is.
class NvccCompiler final : public Compiler {
public:
  explicit NvccCompiler(util::ProcessRunner& runner, NvccOptions options = {});

  util::Expected<CompileResult> compile(const CompileRequest& request) override;
  // `nvcc --version`, asked once per compiler; part of every cache key.
  util::Expected<std::string> version();

private:
  util::Expected<CompileResult> build(const CompileRequest& request, const std::string& key);
  util::Expected<CompileResult> run_nvcc(const CompileRequest& request,
                                         const std::filesystem::path& dir);

  // What nvcc may read while it builds in `dir` (util/read_confinement.hpp): the toolkit and the
  // system's headers and libraries but the vendor kernel libraries, the knowledge packs, `dir`.
  util::ReadAllowance reads(const std::filesystem::path& dir);

  util::ProcessRunner& m_runner;
  std::filesystem::path m_nvcc;
  std::filesystem::path m_cache_dir;
  std::mutex m_version_mutex;
  std::optional<std::string> m_version;
  std::mutex m_reads_mutex;
  std::optional<util::ReadAllowance> m_reads; // without a build's folder; made on first use
};

// The nvcc the compiler would use when NvccOptions::nvcc is empty; empty when none is found.
std::filesystem::path default_nvcc();

} // namespace ptxbench::compile
