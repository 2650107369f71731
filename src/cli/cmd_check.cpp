#include "cli/commands.hpp"
#include "cli/tools.hpp"
#include "compile/language.hpp"
#include "exec/check.hpp"
#include "frontend/frontend.hpp"
#include "util/fs.hpp"
#include "util/terminal.hpp"

#include <fmt/core.h>
#include <memory>

namespace ptxbench::cli {
namespace {

struct CheckOptions {
  std::string kernel;
  std::string problem;
  std::vector<std::string> arches{"sm_90a"};
  std::string language; // empty: from the file name (.py is Triton)
  bool json = false;
};

// An error of `check --json`: the usual line on stderr and `{"error": …}` on stdout, so that a
// script reading stdout as JSON gets JSON either way.
ExitCode report_check_error(const CheckOptions& options, const util::Error& error) {
  const ExitCode code = report_error("check", error);
  if (options.json) {
    const nlohmann::ordered_json body{
        {"error", {{"kind", util::to_string(error.kind)}, {"message", error.message}}}};
    fmt::print("{}\n", body.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace));
  }
  return code;
}

ExitCode exit_code(frontend::CommandVerdict verdict) {
  switch (verdict) {
  case frontend::CommandVerdict::pass:
    return ExitCode::ok;
  case frontend::CommandVerdict::needs_gpu:
    return ExitCode::needs_gpu;
  case frontend::CommandVerdict::fail:
    break;
  }
  return ExitCode::failure;
}

ExitCode run_check(const CheckOptions& options) {
  auto source = read_candidate(options.kernel);
  if (!source)
    return report_check_error(options, source.error());
  auto language = frontend::language_for(options.language, options.kernel);
  if (!language)
    return report_check_error(options, language.error());
  Toolchain tools;
  auto checker = tools.checker();
  if (!checker)
    return report_check_error(options, checker.error());
  auto problem = tools.problem(options.problem);
  if (!problem)
    return report_check_error(options, problem.error());
  std::vector<compile::Arch> arches;
  for (const std::string& arch_name : options.arches) {
    auto arch = compile::parse_arch(arch_name);
    if (!arch)
      return report_check_error(options, {util::ErrorKind::invalid_input,
                                          "unknown arch '" + arch_name + "' (sm_90a, sm_100a)"});
    arches.push_back(*arch);
  }
  auto checked = frontend::of(*language).command_check((*checker)->tools(tools.runner()), *source,
                                                       **problem, arches, options.kernel);
  if (!checked)
    return report_check_error(options, checked.error());
  // nvcc echoes source lines, which may hold any bytes: invalid UTF-8 is printed as U+FFFD in
  // JSON, and control characters (terminal escapes) as visible escapes in text.
  if (options.json)
    fmt::print("{}\n",
               checked->json.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace));
  else
    fmt::print("{}", util::printable(checked->text));
  return exit_code(checked->verdict);
}

} // namespace

Action setup_check(CLI::App& sub) {
  auto options = std::make_shared<CheckOptions>();
  sub.add_option("kernel", options->kernel, "the candidate: kernel.cu, or kernel.py (Triton)")
      ->required();
  sub.add_option("--problem", options->problem, "problem name (see `ptxbench problems`)")
      ->required();
  sub.add_option("--arch", options->arches, "sm_90a and/or sm_100a (repeatable)")
      ->capture_default_str();
  sub.add_option("--language", options->language,
                 "cuda or triton (default: triton for a .py file, else cuda)");
  sub.add_flag("--json", options->json, "print JSON instead of text");
  return [options] { return run_check(*options); };
}

} // namespace ptxbench::cli
