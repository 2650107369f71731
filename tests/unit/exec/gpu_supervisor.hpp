// Shared pieces of the exec GPU tests: one Evaluator per test process (the supervisor), test
// kernels by name, quick evaluation options, and a count of this process's children.
#pragma once

#include "exec/evaluator.hpp"
#include "sass/disassemble.hpp"
#include "util/fs.hpp"
#include "util/subprocess.hpp"

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <stdexcept>
#include <string>
#include <unistd.h>

namespace ptxbench::exec::testing {

struct Supervisor {
  util::PosixProcessRunner runner;
  compile::NvccCompiler compiler{runner};
  std::unique_ptr<sass::Disassembler> disassembler;
  std::unique_ptr<Checker> checker;
  std::unique_ptr<suite::Suite> suite;
  std::unique_ptr<Evaluator> evaluator;

  Supervisor() {
    auto cuobjdump = sass::locate_cuobjdump(sass::ToolSearch::from_environment());
    if (!cuobjdump)
      throw std::runtime_error(cuobjdump.error().message);
    disassembler = std::make_unique<sass::Disassembler>(runner, *cuobjdump);
    checker = std::make_unique<Checker>(compiler, *disassembler);
    auto loaded = suite::Suite::load_default();
    if (!loaded)
      throw std::runtime_error(loaded.error().message);
    suite = std::make_unique<suite::Suite>(std::move(*loaded));
    evaluator = std::make_unique<Evaluator>(*checker, *suite, std::filesystem::path{},
                                            std::filesystem::path{});
  }
};

inline Supervisor& supervisor() {
  static Supervisor instance;
  return instance;
}

inline std::string read_kernel(const std::string& name, int variant = 0) {
  auto text = util::read_file(std::string(PTXBENCH_TEST_KERNELS) + "/" + name);
  if (!text)
    throw std::runtime_error(text.error().message);
  return variant == 0 ? *text
                      : "#define PTXBENCH_VARIANT " + std::to_string(variant) + "\n" + *text;
}

inline EvalOptions quick() {
  EvalOptions options;
  options.trials = 1;
  options.warmup = 1;
  options.iterations = 3;
  options.timeout = std::chrono::seconds(20);
  options.reference_timing = ReferenceTiming::cached;
  return options;
}

inline Evaluation evaluate(const std::string& source, const EvalOptions& options = quick(),
                           const std::string& problem_name = "gemm_n7168_k5120") {
  auto problem = supervisor().suite->find(problem_name);
  if (!problem)
    throw std::runtime_error(problem.error().message);
  auto ev = supervisor().evaluator->evaluate(source, **problem, options);
  if (!ev)
    throw std::runtime_error(ev.error().message);
  std::printf("%s", render_text(*ev).c_str());
  return std::move(*ev);
}

// Live children of this process (ptxbench-candidate, compute-sanitizer, ncu, nvcc).
int child_processes();

// Children left over once finished evaluations' children have ended, beyond the spare.
inline int stray_children() {
  supervisor().evaluator->settle();
  return child_processes() - supervisor().evaluator->spare_processes();
}

inline int child_processes() {
  int count = 0;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    std::ifstream stat(entry.path() / "stat");
    std::string pid, comm, state;
    long ppid = 0;
    if (stat >> pid >> comm >> state >> ppid && ppid == ::getpid())
      ++count;
  }
  return count;
}

} // namespace ptxbench::exec::testing
