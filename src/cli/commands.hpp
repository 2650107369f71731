// The setup function of each subcommand; one file per subcommand (cmd_<name>.cpp).
#pragma once

#include "cli/command.hpp"

namespace ptxbench::cli {

Action setup_version(CLI::App& sub);
Action setup_show(CLI::App& sub);
Action setup_show_turn(CLI::App& sub);
Action setup_check(CLI::App& sub);
Action setup_eval(CLI::App& sub);
Action setup_demo(CLI::App& sub);
Action setup_problems(CLI::App& sub);
Action setup_pack(CLI::App& sub);
Action setup_report(CLI::App& sub);
Action setup_run(CLI::App& sub);
Action setup_export(CLI::App& sub);
Action setup_serve(CLI::App& sub);
Action setup_fleet(CLI::App& sub);
Action setup_fixit(CLI::App& sub);
Action setup_kernelgen(CLI::App& sub);
Action setup_fixit_repair(CLI::App& sub);
Action setup_fixit_synthesize(CLI::App& sub);
Action setup_fixit_notes(CLI::App& sub);
Action setup_kernelgen_synthesize(CLI::App& sub);

} // namespace ptxbench::cli
