// Report formats: one interface, one file per format (format_<name>.cpp), selected by name.
#pragma once

#include "report/plot_figures.hpp"
#include "report/report.hpp"
#include "util/error.hpp"

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ptxbench::report {

// One file of a rendered report (written under --out, or printed); binary for PNG figures.
struct OutputFile {
  std::string name; // e.g. "report.md"
  std::string text;
};

class ReportFormat {
public:
  virtual ~ReportFormat() = default;
  virtual std::string_view name() const = 0;
  // Whether the format shows figures itself (HTML inlines them), so they must be drawn first.
  virtual bool needs_figures() const { return false; }
  // `figures` are those drawn for this report (draw_figures), or none: a format places each
  // one it shows where the document names it, and leaves the place empty when it is absent.
  virtual std::vector<OutputFile> render(const Report& report,
                                         std::span<const Figure> figures) const = 0;
};

std::unique_ptr<ReportFormat> make_markdown_format();
std::unique_ptr<ReportFormat> make_csv_format();
std::unique_ptr<ReportFormat> make_json_format();
std::unique_ptr<ReportFormat> make_html_format();

// The format called `name` ("md", "csv", "json", "html"); invalid_input listing the names
// otherwise.
util::Expected<std::unique_ptr<ReportFormat>> make_format(std::string_view name);
std::vector<std::string_view> format_names();

// Every file in order; with more than one, each is preceded by a "==> name <==" line.
std::string concatenate(const std::vector<OutputFile>& files);

// name.png and name.svg for every figure.
std::vector<OutputFile> figure_files(std::span<const Figure> figures);

// The HTML report with these figures inlined (make_html_format draws nothing itself).
std::string render_html(const Report& report, std::span<const Figure> figures);

} // namespace ptxbench::report
