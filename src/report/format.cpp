#include "report/format.hpp"

#include <array>
#include <fmt/core.h>

namespace ptxbench::report {
namespace {

struct FormatRow {
  std::string_view name;
  std::unique_ptr<ReportFormat> (*make)();
};

constexpr std::array kFormats{
    FormatRow{"md", make_markdown_format},
    FormatRow{"csv", make_csv_format},
    FormatRow{"json", make_json_format},
    FormatRow{"html", make_html_format},
};

} // namespace

util::Expected<std::unique_ptr<ReportFormat>> make_format(std::string_view name) {
  std::string known;
  for (const FormatRow& row : kFormats) {
    if (row.name == name)
      return row.make();
    known += fmt::format("{}{}", known.empty() ? "" : ", ", row.name);
  }
  return util::make_error(util::ErrorKind::invalid_input,
                          fmt::format("unknown report format '{}' (known: {})", name, known));
}

std::vector<std::string_view> format_names() {
  std::vector<std::string_view> names;
  for (const FormatRow& row : kFormats)
    names.push_back(row.name);
  return names;
}

std::string concatenate(const std::vector<OutputFile>& files) {
  if (files.size() == 1)
    return files.front().text;
  std::string out;
  for (const OutputFile& file : files) {
    if (!out.empty())
      out += '\n';
    out += fmt::format("==> {} <==\n{}", file.name, file.text);
  }
  return out;
}

std::vector<OutputFile> figure_files(std::span<const Figure> figures) {
  std::vector<OutputFile> files;
  for (const Figure& figure : figures) {
    files.push_back(OutputFile{figure.name + ".png", figure.png});
    files.push_back(OutputFile{figure.name + ".svg", figure.svg});
  }
  return files;
}

} // namespace ptxbench::report
