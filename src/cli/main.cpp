#include "cli/command.hpp"
#include "util/error.hpp"

#include <algorithm>
#include <cstdio>
#include <exception>
#include <fmt/core.h>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

namespace {

// Whether the command line asks for JSON: `--json` anywhere before a `--` that ends the options.
// A line CLI11 could not parse has no parsed flags to ask, so the words are read as they are.
bool wants_json(int argc, char** argv) {
  const auto end = std::find(argv + 1, argv + argc, std::string_view("--"));
  return std::find(argv + 1, end, std::string_view("--json")) != end;
}

// A command-line error under `--json`: `{"error": {"kind", "message"}}` on stdout, the shape
// every command's own errors take there, beside CLI11's text on stderr.
void print_json_usage_error(const CLI::ParseError& error) {
  const nlohmann::ordered_json body{
      {"error", {{"kind", "invalid_input"}, {"message", std::string(error.what())}}}};
  fmt::print("{}\n", body.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace));
}

} // namespace

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
    if (app.exit(e) == 0)
      return static_cast<int>(ExitCode::ok);
    if (wants_json(argc, argv))
      print_json_usage_error(e);
    return static_cast<int>(ExitCode::usage);
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
