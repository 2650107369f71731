// The HTML report: its text against a golden file (with stand-in figures, so the golden does
// not depend on cairo's glyph outlines), the real page's structure and self-containment, and
// the page rendered by headless Chromium into a screenshot that must show tables and curves.
#include "figure_test_support.hpp"
#include "report/format.hpp"
#include "report/plot_figures.hpp"
#include "report_test_support.hpp"

#include <fstream>
#include <gtest/gtest.h>
#include <regex>
#include <set>
#include <sstream>

namespace ptxbench::report {
namespace {

using testing::ScratchDir;

// What cairo writes, in miniature: an XML declaration, namespace declarations, a glyph
// symbol and a reference to it.
Figure stand_in(const std::string& name, const std::string& title) {
  return Figure{
      name, title, "",
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/"
      "svg\" xmlns:xlink=\"http://www.w3.org/1999/xlink\" width=\"40px\" height=\"20px\" "
      "viewBox=\"0 0 40 20\" version=\"1.1\">\n<title>" +
          title +
          "</title>\n<defs><symbol "
          "overflow=\"visible\" id=\"glyph0-1\"><path d=\"M 0 0 L 1 1\"/></symbol></defs>\n"
          "<use xlink:href=\"#glyph0-1\" x=\"2\" y=\"10\"/>\n</svg>\n"};
}

TEST(HtmlReport, MatchesGoldenWithStandInFigures) {
  ScratchDir dir;
  const std::vector<Figure> figures{stand_in("fast_p_inst", "Fast_p^Inst. stand-in"),
                                    stand_in("fast_p", "Fast_p stand-in"),
                                    stand_in("transitions", "Transitions stand-in")};
  testing::expect_golden("synthetic.html",
                         render_html(testing::synthetic_report(dir.path()), figures));
}

class RealHtml : public ::testing::Test {
protected:
  void SetUp() override {
    m_report = testing::synthetic_report(m_dir.path() / "run");
    auto figures = draw_figures(m_report);
    ASSERT_TRUE(figures) << figures.error().message;
    m_figures = std::move(*figures);
    m_html = render_html(m_report, m_figures);
  }
  std::size_t count(const std::string& needle) const {
    std::size_t n = 0;
    for (std::size_t at = m_html.find(needle); at != std::string::npos;
         at = m_html.find(needle, at + 1))
      ++n;
    return n;
  }
  ScratchDir m_dir;
  Report m_report;
  std::vector<Figure> m_figures;
  std::string m_html;
};

TEST_F(RealHtml, HoldsTablesFiguresAndTitlesAndNothingExternal) {
  EXPECT_TRUE(m_html.starts_with("<!DOCTYPE html>"));
  EXPECT_EQ(count("<title>ptxbench report</title>"), 1u);
  // paper tables × 2, Fast_p, evidence, ends, usage, alpha × 3 (reasoning, categories, transitions)
  EXPECT_EQ(count("<table>"), 15u);
  EXPECT_EQ(count("<svg"), 4u);
  for (const Figure& figure : m_figures) {
    EXPECT_EQ(count("<figure id=\"figure-" + figure.name + "\">"), 1u) << figure.name;
    EXPECT_EQ(count("<title>" + xml_escape(figure.title) + "</title>"), 1u) << figure.name;
    EXPECT_EQ(count("<figcaption>" + xml_escape(figure.title) + "</figcaption>"), 1u);
  }
  EXPECT_EQ(count("<h2>Reasoning tokens and cost per model</h2>"), 1u);
  EXPECT_EQ(count("<td>5416.7</td><td>4250.0</td><td>14400</td>"), 1u);
  EXPECT_EQ(count("http://"), 0u);
  EXPECT_EQ(count("https://"), 0u);
  EXPECT_EQ(count("<script"), 0u);
  EXPECT_EQ(count(" src="), 0u);
}

// Inlined figures share cairo's id names; every id must be unique in the page and every
// reference must point at one of them.
TEST_F(RealHtml, FigureIdsAreUniqueAndEveryReferenceResolves) {
  const std::regex id_pattern(" id=\"([^\"]+)\"");
  std::set<std::string> ids;
  for (auto it = std::sregex_iterator(m_html.begin(), m_html.end(), id_pattern);
       it != std::sregex_iterator(); ++it)
    EXPECT_TRUE(ids.insert((*it)[1]).second) << "duplicate id " << (*it)[1];
  EXPECT_GT(ids.size(), 30u);
  const std::regex reference("(?:href=\"#|url\\(#)([^\")]+)");
  std::size_t references = 0;
  for (auto it = std::sregex_iterator(m_html.begin(), m_html.end(), reference);
       it != std::sregex_iterator(); ++it, ++references)
    EXPECT_EQ(ids.count((*it)[1]), 1u) << "dangling reference #" << (*it)[1];
  EXPECT_GT(references, 30u);
}

std::filesystem::path browser() {
  for (const char* name : {"chromium", "chromium-browser"})
    if (auto path = util::find_on_path(name); !path.empty())
      return path;
  return {};
}

TEST_F(RealHtml, ChromiumRendersTablesAndCurvesOffline) {
  const std::filesystem::path chromium = browser();
  if (chromium.empty())
    GTEST_SKIP() << "chromium is not installed (scripts/setup.sh installs it): the HTML report "
                    "was not rendered in a browser";
  const auto page = m_dir.write("report.html", m_html);
  const auto shot = m_dir.path() / "shot.png";
  util::ProcessOptions options;
  options.timeout = std::chrono::seconds(120);
  util::PosixProcessRunner runner;
  auto result = runner.run({chromium.string(), "--headless", "--no-sandbox", "--disable-gpu",
                            "--disable-dev-shm-usage", "--hide-scrollbars", "--no-first-run",
                            "--user-data-dir=" + (m_dir.path() / "profile").string(),
                            "--screenshot=" + shot.string(), "--window-size=1200,2000",
                            "file://" + page.string()},
                           options);
  ASSERT_TRUE(result) << result.error().message;
  ASSERT_TRUE(result->succeeded()) << "exit " << result->exit_code << "\n" << result->err;
  std::ifstream in(shot, std::ios::binary);
  ASSERT_TRUE(in) << "no screenshot at " << shot;
  std::stringstream png;
  png << in.rdbuf();
  const testing::Image image = testing::decode_png(png.str());
  ASSERT_EQ(image.width, 1200);
  ASSERT_EQ(image.height, 2000);
  const std::int64_t pixels = static_cast<std::int64_t>(image.width) * image.height;
  EXPECT_GT(image.count_not_white(), pixels / 50); // text, table rules, figures: not blank
  // Only the figures use model 0's colour (#1f77b4): the Fast_p^Inst curve is on screen.
  EXPECT_GT(image.count_near(0x1f77b4, 10), 150);
}

} // namespace
} // namespace ptxbench::report
