// The setup function of each subcommand; one file per subcommand (cmd_<name>.cpp).
#pragma once

#include "cli/command.hpp"

namespace ptxbench::cli {

Action setup_version(CLI::App& sub);

} // namespace ptxbench::cli
