// The report as a document — headings, paragraphs, lists, tables and figure slots — built once
// from a Report and written out by the Markdown and HTML formats, so that both show the same
// numbers in the same order.
#pragma once

#include "report/report.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace ptxbench::report {

struct Table {
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
};

enum class BlockKind : std::uint8_t { heading = 1, paragraph = 2, list = 3, table = 4, figure = 5 };

// Paragraph and list text may hold `code` spans (Markdown backticks); a figure block names the
// figure (Figure::name) that belongs at that place.
struct Block {
  BlockKind kind = BlockKind::paragraph;
  int level = 0; // headings: 1–3
  std::string text;
  std::vector<std::string> items; // lists
  Table table;
};

std::vector<Block> report_document(const Report& report);

} // namespace ptxbench::report
