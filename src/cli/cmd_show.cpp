#include "cli/commands.hpp"
#include "cli/tools.hpp"
#include "compile/abi.hpp"
#include "compile/language.hpp"
#include "compile/triton_abi.hpp"
#include "trace/json_io.hpp"

#include <fmt/core.h>
#include <memory>

namespace ptxbench::cli {
namespace {

struct ShowOptions {
  std::string problem;
  std::string language = "cuda";
  bool json = false;
};

ExitCode show_triton(const suite::Problem& p, bool json) {
  auto signature = compile::make_triton_signature(p.definition);
  if (!signature)
    return report_error("show", signature.error());
  if (json) {
    nlohmann::ordered_json out{{"definition", trace::to_json(p.definition)},
                               {"workload", trace::to_json(p.workload)},
                               {"language", "triton"},
                               {"entry_point", compile::entry_point(compile::Language::triton)},
                               {"signature", signature->one_line()},
                               {"baseline", p.baseline}};
    fmt::print("{}\n", out.dump(2));
    return ExitCode::ok;
  }
  fmt::print("# {}\n\nbaseline library: {}\n\n## Triton signature ({}, destination-passing)\n\n"
             "{}\n\n## Definition\n\n{}\n\n## Default workload\n\n{}\n",
             p.name(), p.baseline, compile::entry_point(compile::Language::triton),
             signature->pretty(), trace::to_json(p.definition).dump(2),
             trace::to_json(p.workload).dump(2));
  return ExitCode::ok;
}

ExitCode run_show(const ShowOptions& options) {
  Toolchain tools;
  auto problem = tools.problem(options.problem);
  if (!problem)
    return report_error("show", problem.error());
  const suite::Problem& p = **problem;
  auto language = compile::parse_language(options.language);
  if (!language)
    return report_error("show",
                        {util::ErrorKind::invalid_input,
                         "--language must be cuda or triton, not '" + options.language + "'"});
  if (*language == compile::Language::triton)
    return show_triton(p, options.json);
  auto signature = compile::make_signature(p.definition);
  if (!signature)
    return report_error("show", signature.error());
  if (options.json) {
    nlohmann::ordered_json out{{"definition", trace::to_json(p.definition)},
                               {"workload", trace::to_json(p.workload)},
                               {"signature", signature->one_line()},
                               {"headers", signature->headers()},
                               {"baseline", p.baseline}};
    fmt::print("{}\n", out.dump(2));
    return ExitCode::ok;
  }
  fmt::print("# {}\n\nbaseline library: {}\n\n## C ABI signature (docs/abi.md)\n\n", p.name(),
             p.baseline);
  for (const auto& header : signature->headers())
    fmt::print("#include <{}>\n", header);
  fmt::print("\n{}\n\n## Definition\n\n{}\n\n## Default workload\n\n{}\n", signature->pretty(),
             trace::to_json(p.definition).dump(2), trace::to_json(p.workload).dump(2));
  return ExitCode::ok;
}

} // namespace

Action setup_show(CLI::App& sub) {
  auto options = std::make_shared<ShowOptions>();
  sub.add_option("problem", options->problem, "problem name (see `ptxbench problems`)")->required();
  sub.add_option("--language", options->language,
                 "candidate language whose signature is shown: cuda or triton (default cuda)");
  sub.add_flag("--json", options->json, "print JSON instead of text");
  return [options] { return run_show(*options); };
}

} // namespace ptxbench::cli
