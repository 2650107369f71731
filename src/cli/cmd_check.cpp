#include "cli/commands.hpp"
#include "cli/tools.hpp"
#include "cli/triton_sass.hpp"
#include "compile/language.hpp"
#include "compile/triton_aot.hpp"
#include "compile/triton_gate.hpp"
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
  std::string language; // empty: from the file name (.py is Triton)
  bool json = false;
};

util::Expected<compile::Language> candidate_language(const CheckOptions& options) {
  if (options.language.empty())
    return options.kernel.ends_with(".py") ? compile::Language::triton : compile::Language::cuda;
  if (auto language = compile::parse_language(options.language))
    return *language;
  return util::make_error(util::ErrorKind::invalid_input,
                          "--language must be cuda or triton, not '" + options.language + "'");
}

nlohmann::ordered_json to_json(const compile::TritonGateReport& report) {
  nlohmann::ordered_json findings = nlohmann::ordered_json::array();
  for (const auto& f : report.findings)
    findings.push_back({{"rule", f.rule},
                        {"line", f.line},
                        {"col", f.col},
                        {"message", f.message},
                        {"quote", f.quote}});
  return {{"language", "triton"},
          {"outcome", report.ok() ? "ok" : "rejected"},
          {"findings", std::move(findings)}};
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

// The exit code of one arch's AOT report: 3 when `run` could not be specialised without a GPU
// (the gate passed; the SASS report needs the GPU evaluator), 1 for a kernel that does not
// compile or a module that raises, and for an `absent` verdict, as for a .cu candidate.
ExitCode aot_code(const TritonSassReport& report) {
  switch (report.aot.outcome) {
  case compile::TritonAotOutcome::ok:
    return report.verdict() == sass::Verdict::absent ? ExitCode::failure : ExitCode::ok;
  case compile::TritonAotOutcome::cannot_specialise:
    return ExitCode::needs_gpu;
  default:
    return ExitCode::failure;
  }
}

// The Triton candidate's static check: the gate of compile/triton_gate.hpp, then per arch the
// static SASS report of its ahead-of-time specialisation (cli/triton_sass.hpp).
ExitCode check_triton(const CheckOptions& options, const std::string& source,
                      const suite::Problem& problem, Toolchain& tools) {
  auto signature = compile::make_triton_signature(problem.definition);
  if (!signature)
    return report_check_error(options, signature.error());
  compile::TritonGate gate(tools.runner());
  auto gate_report = gate.check(source, *signature);
  if (!gate_report)
    return report_check_error(options, gate_report.error());
  nlohmann::ordered_json out = to_json(*gate_report);
  out["aot"] = nlohmann::ordered_json::array();
  std::string text = gate_report->ok() ? fmt::format("{}: Triton gate passed ({})\n",
                                                     options.kernel, signature->one_line())
                                       : fmt::format("{}: rejected by the Triton gate\n{}",
                                                     options.kernel, render_text(*gate_report));
  ExitCode code = gate_report->ok() ? ExitCode::ok : ExitCode::failure;
  if (gate_report->ok()) {
    auto disassembler = tools.disassembler();
    if (!disassembler)
      return report_check_error(options, disassembler.error());
    const compile::TritonAotCompiler compiler(tools.runner());
    for (const std::string& arch_name : options.arches) {
      auto arch = compile::parse_arch(arch_name);
      if (!arch)
        return report_check_error(options, {util::ErrorKind::invalid_input,
                                            "unknown arch '" + arch_name + "' (sm_90a, sm_100a)"});
      auto report = triton_sass_report(source, problem, *arch, compiler, **disassembler);
      if (!report)
        return report_check_error(options, report.error());
      if (const ExitCode arch_code = aot_code(*report); arch_code != ExitCode::ok)
        code = code == ExitCode::failure ? code : arch_code;
      out["aot"].push_back(to_json(*report));
      text += "\n" + render_text(*report);
    }
  }
  if (options.json)
    fmt::print("{}\n", out.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace));
  else
    fmt::print("{}", util::printable(text));
  return code;
}

// The exit code of one report: 1 when the candidate was rejected, did not build, or holds none
// of the target instructions (`absent`), as the README's scheme says for a negative verdict.
ExitCode verdict_code(const exec::CheckReport& report) {
  if (report.outcome != exec::CheckOutcome::ok)
    return ExitCode::failure;
  return report.verdict() == sass::Verdict::absent ? ExitCode::failure : ExitCode::ok;
}

ExitCode run_check(const CheckOptions& options) {
  auto source = read_candidate(options.kernel);
  if (!source)
    return report_check_error(options, source.error());
  auto language = candidate_language(options);
  if (!language)
    return report_check_error(options, language.error());
  Toolchain tools;
  if (*language == compile::Language::triton) {
    auto problem = tools.problem(options.problem);
    if (!problem)
      return report_check_error(options, problem.error());
    return check_triton(options, *source, **problem, tools);
  }
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
