#include "cli/commands.hpp"

#include <fmt/core.h>

namespace ptxbench::cli {

Action setup_version(CLI::App& /*sub*/) {
  return [] {
    fmt::print("ptxbench {}\n", PTXBENCH_VERSION);
    return ExitCode::ok;
  };
}

} // namespace ptxbench::cli
