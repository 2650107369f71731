// The supervisor the evaluation benchmarks share: nvcc, cuobjdump, the checker, the built-in
// suite and one exec::Evaluator (one process evaluating many candidates, as `ptxbench run`
// and the service do).
#pragma once

#include "exec/evaluator.hpp"
#include "sass/disassemble.hpp"
#include "util/paths.hpp"
#include "util/subprocess.hpp"

#include <chrono>
#include <filesystem>
#include <memory>

namespace ptxbench::bench {

struct BenchEvaluator {
  util::PosixProcessRunner runner;
  compile::NvccCompiler compiler{runner};
  std::unique_ptr<sass::Disassembler> disassembler;
  std::unique_ptr<exec::Checker> checker;
  std::unique_ptr<suite::Suite> suite;
  std::unique_ptr<exec::Evaluator> evaluator;

  // `candidate`: the child binary (empty: the one `ptxbench eval` uses). The reference latency
  // cache is off: every evaluation that times the reference times it.
  explicit BenchEvaluator(const std::filesystem::path& candidate = {},
                          const exec::EvaluatorOptions& options = {}) {
    auto cuobjdump = sass::locate_cuobjdump(sass::ToolSearch::from_environment());
    if (!cuobjdump)
      throw util::Fatal(cuobjdump.error().message);
    // The SASS cache as `ptxbench eval` and the service use it (util::cache_root()/sass).
    disassembler = std::make_unique<sass::Disassembler>(
        runner, *cuobjdump, std::chrono::seconds(120), util::cache_root() / "sass");
    checker = std::make_unique<exec::Checker>(compiler, *disassembler);
    auto loaded = suite::Suite::load_default();
    if (!loaded)
      throw util::Fatal(loaded.error().message);
    suite = std::make_unique<suite::Suite>(std::move(*loaded));
    evaluator = std::make_unique<exec::Evaluator>(*checker, *suite, candidate,
                                                  std::filesystem::path{}, options);
  }
};

} // namespace ptxbench::bench
