// The Markdown report: the document of document.cpp as GitHub-flavoured Markdown. A figure is
// linked as name.svg when it was drawn (the SVG files sit next to report.md under --out).
#include "report/document.hpp"
#include "report/format.hpp"

#include <fmt/core.h>

namespace ptxbench::report {
namespace {

std::string table_text(const Table& table) {
  std::string head = "|";
  std::string rule = "|";
  for (const std::string& column : table.header) {
    head += " " + column + " |";
    rule += "---|";
  }
  std::string out = head + "\n" + rule + "\n";
  for (const auto& row : table.rows) {
    out += "|";
    for (const std::string& cell : row)
      out += " " + cell + " |";
    out += "\n";
  }
  return out;
}

std::string block_text(const Block& block, std::span<const Figure> figures) {
  switch (block.kind) {
  case BlockKind::heading:
    return std::string(static_cast<std::size_t>(block.level), '#') + " " + block.text + "\n\n";
  case BlockKind::paragraph:
    return block.text + "\n\n";
  case BlockKind::list: {
    std::string out;
    for (const std::string& item : block.items)
      out += "- " + item + "\n";
    return out + "\n";
  }
  case BlockKind::table:
    return table_text(block.table) + "\n";
  case BlockKind::figure:
    for (const Figure& figure : figures)
      if (figure.name == block.text)
        return fmt::format("![{}]({}.svg)\n\n", figure.title, figure.name);
    return "";
  }
  return "";
}

class MarkdownFormat final : public ReportFormat {
public:
  std::string_view name() const override { return "md"; }
  std::vector<OutputFile> render(const Report& report,
                                 std::span<const Figure> figures) const override {
    std::string out;
    for (const Block& block : report_document(report))
      out += block_text(block, figures);
    return {OutputFile{"report.md", out}};
  }
};

} // namespace

std::unique_ptr<ReportFormat> make_markdown_format() {
  return std::make_unique<MarkdownFormat>();
}

} // namespace ptxbench::report
