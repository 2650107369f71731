// One row per subcommand: a name, a one-line purpose, and a function that adds the
// subcommand's options to the parser and returns the action to run. main() walks the table.
#pragma once

#include <CLI/CLI.hpp>
#include <cstdlib>
#include <functional>
#include <span>
#include <string>
#include <string_view>

namespace ptxbench::cli {

// Exit codes shared by all subcommands.
enum class ExitCode : int {
  ok = 0,
  failure = 1,       // the job ran and its verdict is negative (compile error, wrong result…)
  usage = 2,         // bad command line or bad input file
  needs_gpu = 3,     // did everything possible here; the rest needs a GPU
  interrupted = 130, // stopped by Ctrl-C (128 + SIGINT; SIGTERM gives 143), resumable
  internal = 70,     // a bug or broken set-up
};

using Action = std::function<ExitCode()>;

struct Command {
  std::string_view name;
  std::string_view summary;
  Action (*setup)(CLI::App& sub);
};

std::span<const Command> commands();

// An option check whose message a person can read ("--turns: must be a number >= 1, got 0");
// CLI11's own range validators print the limits of a double.
inline CLI::Validator at_least(int minimum) {
  return CLI::Validator(
      [minimum](std::string& text) -> std::string {
        char* end = nullptr;
        const double value = std::strtod(text.c_str(), &end);
        if (end == text.c_str() || *end != '\0' || !(value >= minimum))
          return "must be a number >= " + std::to_string(minimum) + ", got " + text;
        return {};
      },
      ">= " + std::to_string(minimum));
}

} // namespace ptxbench::cli
