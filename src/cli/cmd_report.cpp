#include "cli/commands.hpp"
#include "cli/tools.hpp"
#include "report/format.hpp"
#include "util/fs.hpp"

#include <filesystem>
#include <fmt/core.h>
#include <memory>
#include <string>
#include <vector>

namespace ptxbench::cli {
namespace {

struct ReportOptions {
  std::vector<std::filesystem::path> run_dirs;
  std::string format = "md";
  std::filesystem::path out_dir;
  bool figures = false; // also write every figure as PNG and SVG under out_dir
  std::vector<double> fast_p{0.0, 0.5, 0.8, 1.0};
};

util::Status write_files(const std::filesystem::path& dir,
                         const std::vector<report::OutputFile>& files) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec)
    return util::make_error(util::ErrorKind::io,
                            fmt::format("cannot create {}: {}", dir.string(), ec.message()));
  for (const report::OutputFile& file : files) {
    PTXBENCH_TRY(util::write_file_atomic(dir / file.name, file.text));
    fmt::print("wrote {}\n", (dir / file.name).string());
  }
  return util::Ok{};
}

// Figures are drawn when the format shows them or their files are wanted; --format html with
// --out writes the files too, beside report.html.
bool wants_figure_files(const ReportOptions& options) {
  return !options.out_dir.empty() && (options.figures || options.format == "html");
}

ExitCode run_report(const ReportOptions& options) {
  auto format = report::make_format(options.format);
  if (!format)
    return report_error("report", format.error());
  auto run = report::load_runs(options.run_dirs);
  if (!run)
    return report_error("report", run.error());
  for (const std::string& dir : run->repeated)
    fmt::print(stderr, "ptxbench report: {} is given more than once; it is counted once\n", dir);
  if (auto nonempty = report::require_turns(*run); !nonempty)
    return report_error("report", nonempty.error());
  report::MetricOptions metric_options;
  metric_options.fast_p_thresholds = options.fast_p;
  const report::Report built = report::build_report(*run, metric_options);
  std::vector<report::Figure> figures;
  if ((*format)->needs_figures() || wants_figure_files(options)) {
    auto drawn = report::draw_figures(built);
    if (!drawn)
      return report_error("report", drawn.error());
    figures = std::move(*drawn);
  }
  auto files = (*format)->render(built, figures);
  if (options.out_dir.empty()) {
    fmt::print("{}", report::concatenate(files));
    return ExitCode::ok;
  }
  if (wants_figure_files(options))
    for (report::OutputFile& file : report::figure_files(figures))
      files.push_back(std::move(file));
  if (auto written = write_files(options.out_dir, files); !written)
    return report_error("report", written.error());
  return ExitCode::ok;
}

} // namespace

Action setup_report(CLI::App& sub) {
  auto options = std::make_shared<ReportOptions>();
  sub.add_option("run_dirs", options->run_dirs, "run directories (each holds run.sqlite)")
      ->required();
  std::vector<std::string> formats;
  for (const std::string_view name : report::format_names())
    formats.emplace_back(name);
  sub.add_option("--format", options->format, "md, csv, json or html (self-contained page)")
      ->check(CLI::IsMember(formats))
      ->capture_default_str();
  auto* out = sub.add_option("--out", options->out_dir,
                             "write the report's files into this folder instead of printing "
                             "them; with --format html also every figure as PNG and SVG");
  sub.add_flag("--figures", options->figures,
               "also write every figure (fast_p_inst, fast_p, fast_p_languages when the runs hold "
               "both languages, per_turn, transitions) as PNG and SVG into "
               "--out; report.md then links the SVGs")
      ->needs(out);
  sub.add_option("--fast-p", options->fast_p, "speedup thresholds p for Fast_p")
      ->check(at_least(0))
      ->capture_default_str();
  return [options] { return run_report(*options); };
}

} // namespace ptxbench::cli
