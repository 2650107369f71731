// `ptxbench version`: the version, and what this machine offers the evaluator — the nvcc and
// cuobjdump it would use and the CUDA device it would evaluate on — so that a result or a bug
// report says where it came from. Anything missing is named with the reason; it is not an
// error (a machine without a GPU still compiles and checks statically).
#include "cli/commands.hpp"
#include "compile/nvcc.hpp"
#include "measure/live_device.hpp"
#include "sass/disassemble.hpp"
#include "util/strings.hpp"
#include "util/subprocess.hpp"

#include <filesystem>
#include <fmt/core.h>

namespace ptxbench::cli {
namespace {

// "Cuda compilation tools, release 13.0, V13.0.88" out of `nvcc --version`.
std::string release_line(const std::string& version_text) {
  for (const std::string& line : util::split_lines(version_text))
    if (line.find("release") != std::string::npos)
      return std::string(util::trim(line));
  return std::string(util::trim(version_text));
}

} // namespace

Action setup_version(CLI::App& /*sub*/) {
  return [] {
    fmt::print("ptxbench  {}\n", PTXBENCH_VERSION);
    util::PosixProcessRunner runner;
    const std::filesystem::path nvcc_path = compile::default_nvcc();
    compile::NvccCompiler nvcc(runner, {.nvcc = nvcc_path, .cache_dir = {}});
    if (auto version = nvcc.version())
      fmt::print("nvcc      {} ({})\n", release_line(*version), nvcc_path.string());
    else
      fmt::print("nvcc      not found: {}\n", version.error().message);
    if (auto cuobjdump = sass::locate_cuobjdump(sass::ToolSearch::from_environment()))
      fmt::print("cuobjdump {}\n", cuobjdump->string());
    else
      fmt::print("cuobjdump not found: {}\n", cuobjdump.error().message);
    if (auto device = measure::read_live_device(0))
      fmt::print("GPU       {} ({})\n", device->name, device->arch());
    else
      fmt::print("GPU       none: {}\n", device.error().message);
    return ExitCode::ok;
  };
}

} // namespace ptxbench::cli
