#include "cli/command.hpp"
#include "util/error.hpp"

#include <cstdio>
#include <exception>
#include <fmt/core.h>
#include <string>
#include <vector>

int main(int argc, char** argv) {
  using namespace ptxbench::cli;
  CLI::App app{"ptxbench: can language models write architecture-specific PTX kernels?"};
  app.require_subcommand(1);
  // `ptxbench --version` as every tool answers it; `ptxbench version` says more.
  app.set_version_flag(
      "--version", std::string("ptxbench ") + PTXBENCH_VERSION,
      "print the version and exit (`ptxbench version` adds the toolchain and GPU)");
  std::vector<std::pair<CLI::App*, Action>> actions;
  for (const Command& command : commands()) {
    CLI::App* sub = app.add_subcommand(std::string(command.name), std::string(command.summary));
    actions.emplace_back(sub, command.setup(*sub));
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // CLI11 prints the message (or the help, which is not an error); every command-line
    // error exits with our usage code, as the README promises, not CLI11's own numbers.
    return app.exit(e) == 0 ? static_cast<int>(ExitCode::ok) : static_cast<int>(ExitCode::usage);
  }
  try {
    for (auto& [sub, action] : actions)
      if (sub->parsed())
        return static_cast<int>(action());
  } catch (const std::exception& e) {
    fmt::print(stderr, "ptxbench: internal error: {}\n", e.what());
    return static_cast<int>(ExitCode::internal);
  }
  return static_cast<int>(ExitCode::usage);
}
