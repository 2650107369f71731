#include "cli/commands.hpp"
#include "cli/tools.hpp"
#include "report/format.hpp"
#include "util/fs.hpp"

#include <fmt/core.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

namespace ptxbench::cli {
namespace {

struct ReportOptions {
  std::vector<std::filesystem::path> run_dirs;
  std::string format = "md";
  std::filesystem::path out_dir;
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
    if (auto written = util::write_file_atomic(dir / file.name, file.text); !written)
      return written;
    fmt::print("wrote {}\n", (dir / file.name).string());
  }
  return util::Ok{};
}

ExitCode run_report(const ReportOptions& options) {
  auto format = report::make_format(options.format);
  if (!format) return report_error("report", format.error());
  auto run = report::load_runs(options.run_dirs);
  if (!run) return report_error("report", run.error());
  if (auto nonempty = report::require_turns(*run); !nonempty)
    return report_error("report", nonempty.error());
  report::MetricOptions metric_options;
  metric_options.fast_p_thresholds = options.fast_p;
  const auto files = (*format)->render(report::build_report(*run, metric_options));
  if (options.out_dir.empty()) {
    fmt::print("{}", report::concatenate(files));
    return ExitCode::ok;
  }
  if (auto written = write_files(options.out_dir, files); !written)
    return report_error("report", written.error());
  return ExitCode::ok;
}

} // namespace

Action setup_report(CLI::App& sub) {
  auto options = std::make_shared<ReportOptions>();
  sub.add_option("run_dirs", options->run_dirs, "run directories (each holds run.sqlite)")
      ->required();
  sub.add_option("--format", options->format, "md, csv or json")
      ->check(CLI::IsMember({"md", "csv", "json"}))
      ->capture_default_str();
  sub.add_option("--out", options->out_dir,
                 "write the report's files into this folder instead of printing them");
  sub.add_option("--fast-p", options->fast_p, "speedup thresholds p for Fast_p")
      ->capture_default_str();
  return [options] { return run_report(*options); };
}

} // namespace ptxbench::cli
