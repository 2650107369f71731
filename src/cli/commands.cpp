#include "cli/command.hpp"
#include "cli/commands.hpp"

#include <array>

namespace ptxbench::cli {

std::span<const Command> commands() {
  static constexpr std::array kCommands{
      Command{"version", "print the ptxbench version and toolchain", setup_version},
  };
  return kCommands;
}

} // namespace ptxbench::cli
