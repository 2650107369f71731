#include "cli/commands.hpp"
#include "cli/tools.hpp"
#include "exec/check.hpp"
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
  bool json = false;
};

// The exit code of one report: 1 when the candidate was rejected, did not build, or holds none
// of the target instructions (`absent`), as the README's scheme says for a negative verdict.
ExitCode verdict_code(const exec::CheckReport& report) {
  if (report.outcome != exec::CheckOutcome::ok)
    return ExitCode::failure;
  return report.verdict() == sass::Verdict::absent ? ExitCode::failure : ExitCode::ok;
}

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

ExitCode run_check(const CheckOptions& options) {
  auto source = read_candidate(options.kernel);
  if (!source)
    return report_check_error(options, source.error());
  Toolchain tools;
  auto checker = tools.checker();
  if (!checker)
    return report_check_error(options, checker.error());
  auto problem = tools.problem(options.problem);
  if (!problem)
    return report_check_error(options, problem.error());
  nlohmann::ordered_json all = nlohmann::ordered_json::array();
  ExitCode code = ExitCode::ok;
  std::string text;
  for (const std::string& arch_name : options.arches) {
    auto arch = compile::parse_arch(arch_name);
    if (!arch)
      return report_check_error(options, {util::ErrorKind::invalid_input,
                                          "unknown arch '" + arch_name + "' (sm_90a, sm_100a)"});
    auto report = (*checker)->check(*source, **problem, *arch);
    if (!report)
      return report_check_error(options, report.error());
    if (verdict_code(*report) != ExitCode::ok)
      code = ExitCode::failure;
    if (options.json)
      all.push_back(exec::to_json(*report));
    else
      text += (text.empty() ? "" : "\n") + exec::render_text(*report);
  }
  // nvcc echoes source lines, which may hold any bytes: invalid UTF-8 is
  // printed as U+FFFD in JSON, and control characters (terminal escapes)
  // as visible escapes in text.
  if (options.json)
    fmt::print("{}\n", all.dump(2, ' ', false, decltype(all)::error_handler_t::replace));
  else
    fmt::print("{}", util::printable(text));
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
