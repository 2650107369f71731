#include "cli/commands.hpp"
#include "cli/tools.hpp"
#include "compile/language.hpp"
#include "frontend/frontend.hpp"
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

ExitCode run_show(const ShowOptions& options) {
  Toolchain tools;
  auto problem = tools.problem(options.problem);
  if (!problem)
    return report_error("show", problem.error());
  const suite::Problem& p = **problem;
  auto language = frontend::language_for(options.language);
  if (!language)
    return report_error("show", language.error());
  auto shown = frontend::of(*language).shown_signature(p);
  if (!shown)
    return report_error("show", shown.error());
  if (options.json) {
    nlohmann::ordered_json out{{"definition", trace::to_json(p.definition)},
                               {"workload", trace::to_json(p.workload)}};
    for (const auto& [key, value] : shown->fields.items())
      out[key] = value;
    out["baseline"] = p.baseline;
    fmt::print("{}\n", out.dump(2));
    return ExitCode::ok;
  }
  fmt::print("# {}\n\nbaseline library: {}\n\n## {}\n\n{}\n\n## Definition\n\n{}\n\n"
             "## Default workload\n\n{}\n",
             p.name(), p.baseline, shown->title, shown->text, trace::to_json(p.definition).dump(2),
             trace::to_json(p.workload).dump(2));
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
