#include "compile/nvcc.hpp"

#include "compile/cache.hpp"
#include "util/enum_table.hpp"
#include "util/fs.hpp"
#include "util/hash.hpp"
#include "util/paths.hpp"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <fmt/format.h>

namespace ptxbench::compile {
namespace fs = std::filesystem;

namespace {

struct ArchInfo {
  Arch arch;
  std::string_view name;
  std::string_view gencode;
};

constexpr std::array kArchs{
    ArchInfo{Arch::sm_90a, "sm_90a", "arch=compute_90a,code=sm_90a"},
    ArchInfo{Arch::sm_100a, "sm_100a", "arch=compute_100a,code=sm_100a"},
};

consteval bool arch_table_complete() {
  for (std::size_t i = 0; i < kArchs.size(); ++i)
    if (static_cast<std::size_t>(kArchs[i].arch) != i + 1)
      return false;
  return true;
}
static_assert(arch_table_complete(), "kArchs must list every Arch in value order");
static_assert(util::no_enumerator_after<Arch, kArchs.size()>(),
              "kArchs lacks a row for an enumerator after its last");

const ArchInfo& info(Arch arch) {
  return kArchs.at(static_cast<std::size_t>(arch) - 1);
}

constexpr std::chrono::seconds kVersionTimeout{60};

constexpr std::string_view kFailedHeader = "Compilation failed:\n";

std::string failure_diagnostic(const CompileResult& result, int exit_code,
                               std::string_view expected_signature) {
  if (auto link = run_link_diagnostic(result.log, expected_signature))
    return *link;
  if (!result.first_errors.empty())
    return std::string(kFailedHeader) + result.first_errors.front();
  return fmt::format("nvcc failed with exit status {} and printed no error line.", exit_code);
}

CompileResult make_result(const util::ProcessResult& process, std::string_view expected_signature) {
  CompileResult result;
  result.ok = process.exit_code == 0;
  result.log = process.out + process.err;
  result.kernels = parse_ptxas_info(result.log);
  result.compile_time = process.elapsed;
  if (!result.ok) {
    result.first_errors = first_errors(result.log);
    result.diagnostic = failure_diagnostic(result, process.exit_code, expected_signature);
  }
  return result;
}

util::Status write_sources(const CompileRequest& request, const fs::path& dir) {
  PTXBENCH_TRY(util::write_file_atomic(dir / "kernel.cu", request.source));
  return util::write_file_atomic(dir / "ptxbench_shim.cu", request.shim);
}

// sha256 over the paths and contents of every header under <data root>/knowledge: candidates may
// #include the pack headers, so an edited header must not hit a build cached before the edit.
std::string knowledge_digest() {
  const fs::path root = util::data_root() / "knowledge";
  std::error_code ec;
  std::vector<fs::path> files;
  for (fs::recursive_directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec))
    if (it->is_regular_file(ec) && it->path().extension() == ".cuh")
      files.push_back(it->path());
  std::sort(files.begin(), files.end());
  std::string text;
  for (const auto& file : files) {
    auto content = util::read_file(file);
    text += fmt::format("{}\n{}\n", file.lexically_relative(root).string(),
                        content ? util::sha256_hex(*content) : std::string("unreadable"));
  }
  return util::sha256_hex(text);
}

} // namespace

std::string_view to_string(Arch arch) {
  return info(arch).name;
}

std::optional<Arch> parse_arch(std::string_view text) {
  for (const auto& a : kArchs)
    if (a.name == text)
      return a.arch;
  return std::nullopt;
}

std::vector<std::string> gencode_flags(Arch arch) {
  return {"-gencode", std::string(info(arch).gencode)};
}

std::vector<std::string> nvcc_flags(Arch arch) {
  std::vector<std::string> flags{"-shared", "-Xcompiler", "-fPIC",     "-O3",     "-std=c++20",
                                 "-cudart", "shared",     "-lineinfo", "-Xptxas", "-v"};
  for (auto& flag : gencode_flags(arch))
    flags.push_back(std::move(flag));
  // Knowledge-pack headers resolve as #include "knowledge/<arch>/....cuh" (knowledge/README.md).
  flags.push_back("-I" + util::data_root().string());
  flags.insert(flags.end(), {"-Xlinker", "--no-undefined"});
  return flags;
}

CompileRequest CompileRequest::for_candidate(std::string source, const Signature& signature,
                                             Arch arch) {
  CompileRequest request;
  request.source = std::move(source);
  request.shim = shim_source(signature);
  request.expected_signature = signature.one_line();
  request.arch = arch;
  return request;
}

bool CompileResult::diagnostic_restates_first_error() const {
  return !first_errors.empty() && diagnostic == std::string(kFailedHeader) + first_errors.front();
}

fs::path default_nvcc() {
  if (fs::path on_path = util::find_on_path("nvcc"); !on_path.empty())
    return on_path;
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"})
    if (const char* home = std::getenv(var); home != nullptr && *home != '\0')
      if (fs::exists(fs::path(home) / "bin" / "nvcc"))
        return fs::path(home) / "bin" / "nvcc";
  fs::path fallback = "/usr/local/cuda/bin/nvcc";
  return fs::exists(fallback) ? fallback : fs::path();
}

NvccCompiler::NvccCompiler(util::ProcessRunner& runner, NvccOptions options)
    : m_runner(runner), m_nvcc(options.nvcc.empty() ? default_nvcc() : std::move(options.nvcc)),
      m_cache_dir(options.cache_dir.empty() ? util::cache_root() / "compile"
                                            : std::move(options.cache_dir)) {}

util::Expected<std::string> NvccCompiler::version() {
  std::lock_guard lock(m_version_mutex);
  if (m_version)
    return *m_version;
  if (m_nvcc.empty())
    return util::make_error(util::ErrorKind::unsupported,
                            "nvcc not found: put the CUDA toolkit's bin folder on PATH or set "
                            "CUDA_HOME");
  util::ProcessOptions options;
  options.timeout = kVersionTimeout;
  PTXBENCH_TRY_ASSIGN(auto process, m_runner.run({m_nvcc.string(), "--version"}, options));
  if (!process.succeeded())
    return util::make_error(util::ErrorKind::subprocess,
                            fmt::format("'{} --version' failed: {}", m_nvcc.string(), process.err));
  m_version = process.out;
  return *m_version;
}

util::Expected<CompileResult> NvccCompiler::compile(const CompileRequest& request) {
  PTXBENCH_TRY_ASSIGN(auto toolchain, version());
  std::vector<std::string> flags = nvcc_flags(request.arch);
  // A build made where nvcc's reads were not confined (before confinement, or on a kernel
  // without Landlock) may hold any file's bytes (`.incbin`): never reused for a confined one.
  const std::string toolchain_and_packs =
      toolchain + "\nknowledge " + knowledge_digest() +
      (util::read_confinement_available() ? "\nreads confined" : "");
  std::string key =
      compile_cache_key({request.source, request.shim, flags, request.arch, toolchain_and_packs});
  if (auto hit = CompileCache(m_cache_dir).lookup(key))
    return *hit;
  return build(request, key);
}

util::Expected<CompileResult> NvccCompiler::build(const CompileRequest& request,
                                                  const std::string& key) {
  CompileCache cache(m_cache_dir);
  PTXBENCH_TRY_ASSIGN(auto staging, cache.make_staging_dir());
  auto result = run_nvcc(request, staging);
  if (!result) {
    cache.discard(staging);
    return result.take_error();
  }
  return cache.publish(key, staging, std::move(*result));
}

util::ReadAllowance NvccCompiler::reads(const fs::path& dir) {
  std::lock_guard lock(m_reads_mutex);
  if (!m_reads) {
    util::ReadAllowance reads;
    reads.trees = {"/usr/include",
                   "/usr/local/include",
                   "/usr/lib/gcc",
                   "/usr/libexec",
                   "/usr/bin",
                   "/bin",
                   "/lib64",
                   "/usr/lib64",
                   "/etc",
                   "/usr/share",
                   "/usr/lib/locale",
                   "/proc",
                   "/dev",
                   util::data_root() / "knowledge"};
    util::allow_all_but_kernel_libraries("/usr/lib/x86_64-linux-gnu", reads);
    std::error_code ec;
    const fs::path nvcc =
        fs::canonical(m_nvcc.has_parent_path() ? m_nvcc : util::find_on_path(m_nvcc), ec);
    if (!ec) // <toolkit>/bin/nvcc
      util::allow_all_but_kernel_libraries(nvcc.parent_path().parent_path(), reads);
    m_reads = std::move(reads);
  }
  util::ReadAllowance reads = *m_reads;
  reads.trees.push_back(dir);
  return reads;
}

util::Expected<CompileResult> NvccCompiler::run_nvcc(const CompileRequest& request,
                                                     const fs::path& dir) {
  PTXBENCH_TRY(write_sources(request, dir));
  std::vector<std::string> argv{m_nvcc.string()};
  for (auto& flag : nvcc_flags(request.arch))
    argv.push_back(std::move(flag));
  argv.insert(argv.end(), {"kernel.cu", "ptxbench_shim.cu", "-lcuda", "-o", "kernel.so"});
  util::ProcessOptions options;
  options.timeout = request.timeout;
  options.working_dir = dir;
  options.extra_env = {"TMPDIR=" + dir.string()};
  // Confined to its reads, so that no file a candidate names (`.incbin` in an asm statement, an
  // #include) brings a vendor library's kernels or another candidate's build into kernel.so.
  util::Fd ruleset;
  if (auto made = util::make_read_ruleset(reads(dir)))
    ruleset = std::move(*made);
  else if (made.error().kind != util::ErrorKind::unsupported)
    return made.take_error();
  options.read_ruleset = ruleset.get();
  PTXBENCH_TRY_ASSIGN(auto process, m_runner.run(argv, options));
  if (process.timed_out)
    return util::make_error(util::ErrorKind::timeout,
                            fmt::format("nvcc did not finish within the compile timeout ({:.1f} s)",
                                        static_cast<double>(request.timeout.count()) / 1000.0));
  if (process.signaled)
    return util::make_error(util::ErrorKind::subprocess,
                            fmt::format("nvcc was killed by signal {}", process.term_signal));
  return make_result(process, request.expected_signature);
}

} // namespace ptxbench::compile
