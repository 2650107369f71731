// Report formats: one interface, one file per format (format_<name>.cpp), selected by name.
#pragma once

#include "report/report.hpp"
#include "util/error.hpp"

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace ptxbench::report {

// One file of a rendered report (written under --out, or printed).
struct OutputFile {
  std::string name; // e.g. "report.md"
  std::string text;
};

class ReportFormat {
public:
  virtual ~ReportFormat() = default;
  virtual std::string_view name() const = 0;
  virtual std::vector<OutputFile> render(const Report& report) const = 0;
};

std::unique_ptr<ReportFormat> make_markdown_format();
std::unique_ptr<ReportFormat> make_csv_format();
std::unique_ptr<ReportFormat> make_json_format();

// The format called `name` ("md", "csv", "json"); invalid_input listing the names otherwise.
util::Expected<std::unique_ptr<ReportFormat>> make_format(std::string_view name);
std::vector<std::string_view> format_names();

// Every file in order; with more than one, each is preceded by a "==> name <==" line.
std::string concatenate(const std::vector<OutputFile>& files);

} // namespace ptxbench::report
