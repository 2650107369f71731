#include "cli/commands.hpp"
#include "cli/tools.hpp"
#include "exec/check.hpp"
#include "util/fs.hpp"

#include <fmt/core.h>

#include <memory>

namespace ptxbench::cli {
namespace {

struct CheckOptions {
  std::string kernel;
  std::string problem;
  std::vector<std::string> arches{"sm_90a"};
  bool json = false;
};

ExitCode run_check(const CheckOptions& options) {
  auto source = read_candidate(options.kernel);
  if (!source) return report_error("check", source.error());
  Toolchain tools;
  auto checker = tools.checker();
  if (!checker) return report_error("check", checker.error());
  auto problem = tools.problem(options.problem);
  if (!problem) return report_error("check", problem.error());
  nlohmann::ordered_json all = nlohmann::ordered_json::array();
  ExitCode code = ExitCode::ok;
  for (const std::string& arch_name : options.arches) {
    auto arch = compile::parse_arch(arch_name);
    if (!arch) return report_error("check", {util::ErrorKind::invalid_input,
                                             "unknown arch '" + arch_name + "' (sm_90a, sm_100a)"});
    auto report = (*checker)->check(*source, **problem, *arch);
    if (!report) return report_error("check", report.error());
    if (report->outcome != exec::CheckOutcome::ok) code = ExitCode::failure;
    if (options.json) all.push_back(exec::to_json(*report));
    else fmt::print("{}{}", all.empty() && &arch_name == &options.arches.front() ? "" : "\n",
                    exec::render_text(*report));
  }
  // nvcc echoes source lines, which may hold any bytes: invalid UTF-8 is printed as U+FFFD.
  if (options.json)
    fmt::print("{}\n", all.dump(2, ' ', false, decltype(all)::error_handler_t::replace));
  return code;
}

} // namespace

Action setup_check(CLI::App& sub) {
  auto options = std::make_shared<CheckOptions>();
  sub.add_option("kernel", options->kernel, "the candidate .cu file")->required();
  sub.add_option("--problem", options->problem, "problem name (see `ptxbench problems`)")
      ->required();
  sub.add_option("--arch", options->arches, "sm_90a and/or sm_100a (repeatable)")
      ->capture_default_str();
  sub.add_flag("--json", options->json, "print JSON instead of text");
  return [options] { return run_check(*options); };
}

} // namespace ptxbench::cli
