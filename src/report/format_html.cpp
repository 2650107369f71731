// The HTML report: one self-contained page — the document of document.cpp with inline CSS and
// every figure inlined as SVG — that opens in a browser without network access or JavaScript.
//
// Several cairo SVGs in one page share id names (glyph0-1, clip1…), and an id reference
// resolves to the first element in the whole page with that id, so each figure's ids and
// references are prefixed with the figure's name. The SVG and XLink namespace declarations
// are dropped: the HTML parser puts inline <svg> into the SVG namespace and maps xlink:href by
// itself, and the page then holds no http(s) address at all.
#include "report/document.hpp"
#include "report/format.hpp"

#include <fmt/core.h>

namespace ptxbench::report {
namespace {

constexpr std::string_view kStyle =
    R"(body { font-family: "DejaVu Sans", Helvetica, Arial, sans-serif; color: #222;
  line-height: 1.4; max-width: 1500px; margin: 24px auto; padding: 0 16px; }
h1 { font-size: 26px; border-bottom: 3px solid #444; padding-bottom: 6px; }
h2 { font-size: 20px; margin-top: 36px; border-bottom: 1px solid #ddd; padding-bottom: 4px; }
h3 { font-size: 16px; margin-top: 24px; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; margin: 8px 0 16px; font-size: 13px; }
th, td { border: 1px solid #d0d7de; padding: 4px 8px; text-align: right; white-space: nowrap; }
th { background: #eef3f8; }
th:first-child, td:first-child { text-align: left; }
tbody tr:nth-child(even) { background: #f8fafc; }
code { font-family: "DejaVu Sans Mono", monospace; background: #f1f1f1; padding: 0 3px; }
figure { margin: 16px 0 28px; }
figure svg { display: block; max-width: 100%; height: auto; border: 1px solid #e3e3e3; }
figcaption { font-size: 13px; color: #555; margin-top: 6px; }
)";

void replace_all(std::string& text, std::string_view from, std::string_view to) {
  for (std::size_t at = text.find(from); at != std::string::npos;
       at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
}

// Removes every xmlns attribute of the root element.
void drop_namespace_declarations(std::string& svg) {
  for (std::size_t at = svg.find(" xmlns"); at != std::string::npos && at < svg.find('>');
       at = svg.find(" xmlns")) {
    const std::size_t open = svg.find('"', at);
    const std::size_t close = svg.find('"', open + 1);
    svg.erase(at, close + 1 - at);
  }
}

// The figure's <svg> element, ready to sit inside the page (see the file comment).
std::string inline_svg(std::string_view svg, std::string_view prefix) {
  const std::size_t root = svg.find("<svg");
  std::string out(root == std::string_view::npos ? svg : svg.substr(root));
  drop_namespace_declarations(out);
  replace_all(out, " id=\"", fmt::format(" id=\"{}-", prefix));
  replace_all(out, "href=\"#", fmt::format("href=\"#{}-", prefix));
  replace_all(out, "url(#", fmt::format("url(#{}-", prefix));
  while (!out.empty() && (out.back() == '\n' || out.back() == ' '))
    out.pop_back();
  return out;
}

// Escaped text with `code` spans as <code>.
std::string inline_text(std::string_view text) {
  std::string out;
  bool code = false;
  std::size_t start = 0;
  for (std::size_t tick = text.find('`'); tick != std::string_view::npos;
       tick = text.find('`', start)) {
    out += xml_escape(text.substr(start, tick - start)) + (code ? "</code>" : "<code>");
    code = !code;
    start = tick + 1;
  }
  out += xml_escape(text.substr(start));
  return code ? out + "</code>" : out;
}

std::string table_html(const Table& table) {
  std::string out = "<div class=\"scroll\"><table>\n<thead><tr>";
  for (const std::string& column : table.header)
    out += "<th>" + xml_escape(column) + "</th>";
  out += "</tr></thead>\n<tbody>\n";
  for (const auto& row : table.rows) {
    out += "<tr>";
    for (const std::string& cell : row)
      out += "<td>" + xml_escape(cell) + "</td>";
    out += "</tr>\n";
  }
  return out + "</tbody>\n</table></div>\n";
}

std::string figure_html(const std::string& name, std::span<const Figure> figures) {
  for (const Figure& figure : figures) {
    if (figure.name != name)
      continue;
    const std::string id = "figure-" + figure.name;
    return fmt::format("<figure id=\"{}\">\n{}\n<figcaption>{}</figcaption>\n</figure>\n", id,
                       inline_svg(figure.svg, id), xml_escape(figure.title));
  }
  return "";
}

std::string block_html(const Block& block, std::span<const Figure> figures) {
  switch (block.kind) {
  case BlockKind::heading:
    return fmt::format("<h{0}>{1}</h{0}>\n", block.level, inline_text(block.text));
  case BlockKind::paragraph:
    return "<p>" + inline_text(block.text) + "</p>\n";
  case BlockKind::list: {
    std::string out = "<ul>\n";
    for (const std::string& item : block.items)
      out += "<li>" + inline_text(item) + "</li>\n";
    return out + "</ul>\n";
  }
  case BlockKind::table:
    return table_html(block.table);
  case BlockKind::figure:
    return figure_html(block.text, figures);
  }
  return "";
}

class HtmlFormat final : public ReportFormat {
public:
  std::string_view name() const override { return "html"; }
  bool needs_figures() const override { return true; }
  std::vector<OutputFile> render(const Report& report,
                                 std::span<const Figure> figures) const override {
    return {OutputFile{"report.html", render_html(report, figures)}};
  }
};

} // namespace

std::string render_html(const Report& report, std::span<const Figure> figures) {
  std::string out =
      fmt::format("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                  "<meta name=\"viewport\" content=\"width=device-width, "
                  "initial-scale=1\">\n<title>ptxbench report</title>\n<style>\n{}"
                  "</style>\n</head>\n<body>\n",
                  kStyle);
  for (const Block& block : report_document(report))
    out += block_html(block, figures);
  return out + "</body>\n</html>\n";
}

std::unique_ptr<ReportFormat> make_html_format() {
  return std::make_unique<HtmlFormat>();
}

} // namespace ptxbench::report
