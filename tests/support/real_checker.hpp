// The real static check for the tests that run it on this machine: nvcc with a compile cache,
// cuobjdump found as `ptxbench` finds it, and the exec::Checker over both.
#pragma once

#include "compile/nvcc.hpp"
#include "exec/check.hpp"
#include "sass/disassemble.hpp"
#include "util/error.hpp"
#include "util/subprocess.hpp"

#include <chrono>
#include <filesystem>
#include <memory>

namespace ptxbench::test_support {

// Whether disassemblies are cached too (under the compile cache, in "sass"), as `ptxbench serve`
// caches them.
enum class SassCache { off, on };

// The caller owns `cache_dir` and removes it. Throws util::Fatal when cuobjdump is missing.
struct RealChecker {
  util::PosixProcessRunner runner;
  compile::NvccCompiler compiler;
  std::unique_ptr<sass::Disassembler> disassembler;
  std::unique_ptr<exec::Checker> checker;

  RealChecker(const std::filesystem::path& cache_dir, SassCache sass)
      : compiler(runner, [&] {
          compile::NvccOptions options;
          options.cache_dir = cache_dir;
          return options;
        }()) {
    auto cuobjdump = sass::locate_cuobjdump(sass::ToolSearch::from_environment());
    if (!cuobjdump)
      throw util::Fatal(cuobjdump.error().message);
    disassembler = std::make_unique<sass::Disassembler>(
        runner, *cuobjdump, std::chrono::seconds(120),
        sass == SassCache::on ? cache_dir / "sass" : std::filesystem::path());
    checker = std::make_unique<exec::Checker>(compiler, *disassembler);
  }
  RealChecker(const RealChecker&) = delete;
  RealChecker& operator=(const RealChecker&) = delete;
};

} // namespace ptxbench::test_support
