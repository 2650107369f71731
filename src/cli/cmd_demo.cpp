#include "cli/commands.hpp"
#include "cli/tools.hpp"
#include "util/fs.hpp"
#include "util/paths.hpp"

#include <fmt/core.h>

#include <array>
#include <memory>

namespace ptxbench::cli {
namespace {

// The built-in default: the primary GEMM problem and one of our own target-instruction kernels
// per architecture.
constexpr std::string_view kDemoProblem = "gemm_n7168_k5120";

struct DemoKernel {
  std::string_view path; // relative to the data root
  compile::Arch arch;
};

constexpr std::array kDemoKernels{
    DemoKernel{"tests/kernels/sm90_wgmma_tma_gemm.cu", compile::Arch::sm_90a},
    DemoKernel{"tests/kernels/sm100_tcgen05_gemm.cu", compile::Arch::sm_100a},
};

ExitCode run_demo() {
  Toolchain tools;
  auto problem = tools.problem(kDemoProblem);
  if (!problem) return report_error("demo", problem.error());
  auto checker = tools.checker();
  if (!checker) return report_error("demo", checker.error());
  ExitCode code = ExitCode::ok;
  for (const DemoKernel& kernel : kDemoKernels) {
    auto path = util::data_root() / kernel.path;
    auto source = util::read_file(path);
    if (!source) return report_error("demo", source.error());
    fmt::print("== ptxbench check {} --problem {} --arch {}\n", kernel.path, kDemoProblem,
               compile::to_string(kernel.arch));
    auto report = (*checker)->check(*source, **problem, kernel.arch);
    if (!report) return report_error("demo", report.error());
    fmt::print("{}\n", exec::render_text(*report));
    if (report->outcome != exec::CheckOutcome::ok) code = ExitCode::failure;
  }
  fmt::print("This demo stops at the static check. On a GPU machine, `ptxbench eval KERNEL "
             "--problem {}` adds correctness, timing against the baseline and executed-"
             "instruction counts.\n",
             kDemoProblem);
  return code;
}

} // namespace

Action setup_demo(CLI::App& /*sub*/) { return run_demo; }

} // namespace ptxbench::cli
