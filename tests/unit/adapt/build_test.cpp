#include "adapt/sft_build.hpp"
#include "adapt/stats.hpp"
#include "adapt/stats_figure.hpp"
#include "adapt_test_support.hpp"
#include "support/golden.hpp"
#include "unit/report/figure_test_support.hpp"
#include "util/hash.hpp"

#include <algorithm>
#include <functional>
#include <gtest/gtest.h>
#include <set>

namespace ptxbench::adapt {
namespace {

namespace fs = std::filesystem;

PairRecord pair(const std::string& name, const std::string& problem, const std::string& category,
                std::int64_t turn) {
  PairRecord p;
  p.failure.kernel_source = "wrong " + name;
  p.failure.id = util::sha256_hex(p.failure.kernel_source);
  p.failure.trajectory_key = {"student", problem, "hopper-07", 0};
  p.failure.category = category;
  p.failure.turn = turn;
  p.failure.arch = "sm_90a";
  p.failure.feedback = "error: " + name;
  p.failure.system_prompt = "SYSTEM";
  p.failure.task_prompt = "TASK " + problem;
  p.repaired_kernel = "fixed " + name + "\n";
  p.id = util::sha256_hex(p.failure.id + util::sha256_hex(p.repaired_kernel));
  p.repair_trajectory_key = {"teacher", problem, "hopper-07", 0};
  p.speedup = 0.25;
  p.teacher_model = "teacher";
  return p;
}

RationaleRecord rationale(const std::string& id, const std::string& text,
                          const std::string& status = "done", const std::string& kind = "fixit") {
  return RationaleRecord{id, kind, status, text, "", "glm", "v3", 1.0, 1, 100, 200, 0.0, ""};
}

// Four pairs: p0 and p1 with done rationales, p2 only a failed one, p3 a long rationale.
std::vector<PairRecord> write_fixit_inputs(const fs::path& dir) {
  std::vector<PairRecord> pairs{pair("a", "gemm", "compile", 0), pair("b", "gemm", "runtime", 1),
                                pair("c", "mha", "compile", 0), pair("d", "mha", "timeout", 2)};
  EXPECT_TRUE(write_if_changed(dir / "fixit/pairs/pairs.jsonl", to_jsonl(pairs)));
  std::vector<RationaleRecord> rationales{
      rationale(pairs[0].id, "first attempt", "failed"), rationale(pairs[0].id, "I think A"),
      rationale(pairs[1].id, "I think B"), rationale(pairs[2].id, "", "failed"),
      rationale(pairs[3].id, std::string(4000, 'x'))};
  EXPECT_TRUE(write_if_changed(dir / "fixit/synthesize/rationales.jsonl", to_jsonl(rationales)));
  return pairs;
}

std::vector<Json> rows_of(const fs::path& path) {
  auto lines = read_jsonl_lines(path);
  EXPECT_TRUE(lines) << path;
  std::vector<Json> rows;
  if (lines)
    for (auto& line : *lines)
      rows.push_back(line.json);
  return rows;
}

TEST(SftBuild, FixitRowsHaveFiveMessagesWithLossOnlyOnTheRepair) {
  const PairRecord p = pair("a", "gemm", "compile", 0);
  const auto messages = fixit_messages(p, "reasoning");
  ASSERT_EQ(messages.size(), 5u);
  EXPECT_EQ(messages[0].role, "system");
  EXPECT_EQ(messages[0].content, "SYSTEM");
  EXPECT_EQ(messages[1].content, "TASK gemm");
  EXPECT_EQ(messages[2].role, "assistant");
  EXPECT_EQ(messages[2].content, "```cuda\nwrong a\n```");
  EXPECT_EQ(messages[3].role, "user");
  EXPECT_EQ(messages[3].content, "error: a");
  EXPECT_EQ(messages[4].content, "<think>\nreasoning\n</think>\n\n```cuda\nfixed a\n```");
  for (std::size_t i = 0; i < 5; ++i)
    EXPECT_EQ(messages[i].step_loss_mask, i == 4 ? 1 : 0);
}

TEST(SftBuild, KernelGenRowsHaveThreeMessages) {
  CorrectRecord c;
  c.system_prompt = "S";
  c.task_prompt = "T";
  c.reply = "Here:\n```cuda\nk\n```";
  const auto messages = kernelgen_messages(c, "why");
  ASSERT_EQ(messages.size(), 3u);
  EXPECT_EQ(messages[2].content, "<think>\nwhy\n</think>\n\nHere:\n```cuda\nk\n```");
  EXPECT_EQ(messages[2].step_loss_mask, 1);
  EXPECT_EQ(messages[1].step_loss_mask, 0);
}

TEST(SftBuild, FixitBuildDropsRowsWithoutRationaleOrOverTheLimit) {
  test_support::ScratchDir dir;
  const auto pairs = write_fixit_inputs(dir.path());
  ApproxTokenizer tokenizer;
  auto result = build_fixit(dir.path(), BuildOptions{500, 42}, tokenizer);
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ(result->rows, 2);
  EXPECT_EQ(result->dropped, 2);
  EXPECT_TRUE(result->approximate_tokens);
  const auto rows = rows_of(dir.path() / "fixit/build/sft.jsonl");
  ASSERT_EQ(rows.size(), 2u);
  std::set<std::string> ids{rows[0]["id"].get<std::string>(), rows[1]["id"].get<std::string>()};
  EXPECT_EQ(ids, (std::set<std::string>{pairs[0].id, pairs[1].id}));
  for (const Json& row : rows) {
    ASSERT_EQ(row["messages"].size(), 5u);
    EXPECT_EQ(row["messages"][4]["step_loss_mask"], 1);
    EXPECT_EQ(row["metadata"]["rationale"]["reasoning_model"], "glm");
  }
  const auto messages = rows_of(dir.path() / "fixit/build/messages.jsonl");
  ASSERT_EQ(messages.size(), 2u);
  EXPECT_FALSE(messages[0]["messages"][4].contains("step_loss_mask"));
  EXPECT_EQ(messages[0]["messages"][4]["content"], rows[0]["messages"][4]["content"]);
  const Json manifest = Json::parse(test::read(dir.path() / "fixit/build/manifest.json"));
  EXPECT_TRUE(manifest["tokenizer"]["approximate"].get<bool>());
  ASSERT_EQ(manifest["dropped"].size(), 2u);
  EXPECT_EQ(manifest["dropped"][0]["reason"], "no rationale with status done");
  EXPECT_NE(manifest["dropped"][1]["reason"].get<std::string>().find("> --max-tokens 500"),
            std::string::npos);
  EXPECT_EQ(manifest["files"]["sft.jsonl"],
            util::sha256_hex(test::read(dir.path() / "fixit/build/sft.jsonl")));
}

TEST(SftBuild, LastDoneRationaleWinsAndUsesTheSeedForOrder) {
  test_support::ScratchDir dir;
  write_fixit_inputs(dir.path());
  ApproxTokenizer tokenizer;
  ASSERT_TRUE(build_fixit(dir.path(), BuildOptions{std::nullopt, 42}, tokenizer));
  const auto rows = rows_of(dir.path() / "fixit/build/sft.jsonl");
  ASSERT_EQ(rows.size(), 3u);
  std::vector<std::string> order;
  for (const Json& row : rows)
    order.push_back(row["id"]);
  std::vector<std::string> expected = order;
  std::sort(expected.begin(), expected.end(), [](const std::string& a, const std::string& b) {
    return util::sha256_hex("42:" + a) < util::sha256_hex("42:" + b);
  });
  EXPECT_EQ(order, expected);
}

TEST(SftBuild, SecondBuildWritesTheSameBytesAndMatchesTheGolden) {
  test_support::ScratchDir dir;
  write_fixit_inputs(dir.path());
  ApproxTokenizer tokenizer;
  ASSERT_TRUE(build_fixit(dir.path(), BuildOptions{500, 42}, tokenizer));
  const std::string manifest = test::read(dir.path() / "fixit/build/manifest.json");
  const std::string sft = test::read(dir.path() / "fixit/build/sft.jsonl");
  ASSERT_TRUE(build_fixit(dir.path(), BuildOptions{500, 42}, tokenizer));
  EXPECT_EQ(test::read(dir.path() / "fixit/build/manifest.json"), manifest);
  EXPECT_EQ(test::read(dir.path() / "fixit/build/sft.jsonl"), sft);
  test_support::expect_golden("adapt/build_manifest.json", manifest);
  test_support::expect_golden("adapt/build_sft.jsonl", sft);
}

// The approximate count, remembering how often it was asked.
class CountingTokenizer final : public Tokenizer {
public:
  util::Expected<std::int64_t> count(std::string_view text) override {
    ++calls;
    return m_approx.count(text);
  }
  bool approximate() const override { return true; }
  Json describe() const override { return m_approx.describe(); }
  int calls = 0;

private:
  ApproxTokenizer m_approx;
};

TEST(SftBuild, UpToDateBuildCountsNoTokensAgainButAChangedInputRebuilds) {
  test_support::ScratchDir dir;
  auto pairs = write_fixit_inputs(dir.path());
  CountingTokenizer tokenizer;
  ASSERT_TRUE(build_fixit(dir.path(), BuildOptions{500, 42}, tokenizer));
  EXPECT_EQ(tokenizer.calls, 3);
  auto again = build_fixit(dir.path(), BuildOptions{500, 42}, tokenizer);
  ASSERT_TRUE(again);
  EXPECT_EQ(tokenizer.calls, 3);
  EXPECT_EQ(again->rows, 2);
  EXPECT_EQ(again->dropped, 2);
  ASSERT_TRUE(build_fixit(dir.path(), BuildOptions{5000, 42}, tokenizer));
  EXPECT_EQ(tokenizer.calls, 6);
  pairs.pop_back();
  ASSERT_TRUE(write_if_changed(dir.path() / "fixit/pairs/pairs.jsonl", to_jsonl(pairs)));
  ASSERT_TRUE(build_fixit(dir.path(), BuildOptions{5000, 42}, tokenizer));
  EXPECT_EQ(tokenizer.calls, 8);
}

TEST(SftBuild, MissingRationalesFileIsAnError) {
  test_support::ScratchDir dir;
  write_fixit_inputs(dir.path());
  fs::remove(dir.path() / "fixit/synthesize/rationales.jsonl");
  ApproxTokenizer tokenizer;
  auto result = build_fixit(dir.path(), BuildOptions{}, tokenizer);
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().kind, util::ErrorKind::not_found);
}

TEST(SftBuild, KernelGenBuildWritesThreeMessageRows) {
  test_support::ScratchDir dir;
  CorrectRecord c;
  c.kernel_source = "k";
  c.id = util::sha256_hex("k");
  c.trajectory_key = {"gemini", "mha", "hopper-07", 0};
  c.turn = 3;
  c.system_prompt = "S";
  c.task_prompt = "T";
  c.reply = "```cuda\nk\n```";
  ASSERT_TRUE(write_if_changed(dir.path() / "kernelgen/collect/correct.jsonl",
                               to_jsonl(std::vector<CorrectRecord>{c})));
  ASSERT_TRUE(write_if_changed(
      dir.path() / "kernelgen/synthesize/rationales.jsonl",
      to_jsonl(std::vector<RationaleRecord>{rationale(c.id, "plan", "done", "kernelgen")})));
  ApproxTokenizer tokenizer;
  auto result = build_kernelgen(dir.path(), BuildOptions{}, tokenizer);
  ASSERT_TRUE(result) << result.error().message;
  const auto rows = rows_of(dir.path() / "kernelgen/build/sft.jsonl");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0]["messages"].size(), 3u);
  auto stats = render_stats(dir.path(), DatasetKind::kernelgen);
  ASSERT_TRUE(stats) << stats.error().message;
  EXPECT_NE(stats->find("| mha | 1 | 100.0% |"), std::string::npos) << *stats;
  EXPECT_NE(stats->find("| 3 | 1 | 100.0% |"), std::string::npos) << *stats;
}

TEST(Stats, NearestRankLengths) {
  const LengthStats s = length_stats({5, 1, 4, 2, 3, 10, 9, 8, 7, 6});
  EXPECT_EQ(s.count, 10);
  EXPECT_EQ(s.min, 1);
  EXPECT_EQ(s.median, 5);
  EXPECT_EQ(s.p90, 9);
  EXPECT_EQ(s.max, 10);
  EXPECT_EQ(length_stats({}).count, 0);
  EXPECT_EQ(length_stats({7}).p90, 7);
}

TEST(Stats, FixitTablesMatchTheGolden) {
  test_support::ScratchDir dir;
  write_fixit_inputs(dir.path());
  ApproxTokenizer tokenizer;
  ASSERT_TRUE(build_fixit(dir.path(), BuildOptions{std::nullopt, 42}, tokenizer));
  auto stats = render_stats(dir.path(), DatasetKind::fixit);
  ASSERT_TRUE(stats) << stats.error().message;
  test_support::expect_golden("adapt/stats_fixit.md", *stats);
}

TEST(Stats, CompositionFigureIsAPngAndAnSvgNamingTheManifestCounts) {
  test_support::ScratchDir dir;
  write_fixit_inputs(dir.path());
  ApproxTokenizer tokenizer;
  ASSERT_TRUE(build_fixit(dir.path(), BuildOptions{std::nullopt, 42}, tokenizer));
  auto paths = write_composition_figure(dir.path(), DatasetKind::fixit);
  ASSERT_TRUE(paths) << paths.error().message;
  ASSERT_EQ(paths->size(), 2u);
  EXPECT_EQ((*paths)[0], dir.path() / "fixit/stats/composition.png");
  const auto png = util::read_file((*paths)[0]);
  ASSERT_TRUE(png);
  ASSERT_TRUE(png->starts_with(report::testing::kPngSignature));
  const report::testing::Image image = report::testing::decode_png(*png);
  EXPECT_GT(image.width, 1000);                  // drawn at twice the pixel size
  EXPECT_GT(image.count_near(0x1f77b4, 6), 100); // the first category's bars
  const auto svg = report::testing::parse_svg((*paths)[1]);
  ASSERT_FALSE(svg.contains("error")) << svg["error"];
  EXPECT_EQ(svg["root"], "{http://www.w3.org/2000/svg}svg");
  EXPECT_EQ(svg["title"], "fixit data set composition: 3 rows");
  EXPECT_GT(svg["uses"].get<int>(), 20); // the drawn characters
  // Every problem, category and turn of the manifest, with its count.
  auto counts = build_composition(dir.path(), DatasetKind::fixit);
  ASSERT_TRUE(counts);
  std::map<std::string, std::int64_t> expected;
  for (const auto& [key, count] : *counts) {
    expected[std::get<0>(key)] += count;
    expected[std::get<1>(key)] += count;
    expected["turn " + std::to_string(std::get<2>(key))] += count;
  }
  const std::string desc = svg["desc"].get<std::string>();
  for (const auto& [label, count] : expected)
    EXPECT_NE(desc.find("\n" + label + ": " + std::to_string(count) + "\n"), std::string::npos)
        << label << " in " << desc;
  EXPECT_NE(desc.find("\ngemm: 2\n"), std::string::npos) << desc;
  EXPECT_NE(desc.find("\nmha: 1\n"), std::string::npos) << desc;
}

// Rewrites the build manifest of DIR with `edit` applied.
void edit_build_manifest(const fs::path& dir, const std::function<void(Json&)>& edit) {
  const fs::path path = dir / "fixit/build/manifest.json";
  Json manifest = Json::parse(test::read(path));
  edit(manifest);
  ASSERT_TRUE(util::write_file_atomic(path, manifest.dump(2) + "\n"));
}

TEST(SftBuild, MistypedFieldOfAnUpToDateManifestIsAnErrorNamingItsPath) {
  test_support::ScratchDir dir;
  write_fixit_inputs(dir.path());
  ApproxTokenizer tokenizer;
  ASSERT_TRUE(build_fixit(dir.path(), BuildOptions{500, 42}, tokenizer));
  edit_build_manifest(dir.path(), [](Json& manifest) { manifest["rows"] = "2"; });
  auto again = build_fixit(dir.path(), BuildOptions{500, 42}, tokenizer);
  ASSERT_FALSE(again);
  EXPECT_EQ(again.error().kind, util::ErrorKind::invalid_input);
  EXPECT_EQ(again.error().message, (dir.path() / "fixit/build/manifest.json").string() +
                                       ": $.rows: expected an integer >= 0, got string");
  // Other settings are another build: the manifest is rewritten, not read.
  auto other = build_fixit(dir.path(), BuildOptions{5000, 42}, tokenizer);
  ASSERT_TRUE(other) << other.error().message;
}

TEST(Stats, MistypedCompositionRowOfTheManifestIsAnErrorNamingItsPath) {
  test_support::ScratchDir dir;
  write_fixit_inputs(dir.path());
  ApproxTokenizer tokenizer;
  ASSERT_TRUE(build_fixit(dir.path(), BuildOptions{std::nullopt, 42}, tokenizer));
  edit_build_manifest(dir.path(), [](Json& manifest) { manifest["counts"][1]["turn"] = "1"; });
  const std::string expected = (dir.path() / "fixit/build/manifest.json").string() +
                               ": $.counts[1].turn: expected an integer, got string";
  auto stats = render_stats(dir.path(), DatasetKind::fixit);
  ASSERT_FALSE(stats);
  EXPECT_EQ(stats.error().kind, util::ErrorKind::invalid_input);
  EXPECT_EQ(stats.error().message, expected);
  auto counts = build_composition(dir.path(), DatasetKind::fixit);
  ASSERT_FALSE(counts);
  EXPECT_EQ(counts.error().message, expected);
}

TEST(Stats, MistypedTokenStatsOfTheManifestAreAnErrorNamingTheirPath) {
  test_support::ScratchDir dir;
  write_fixit_inputs(dir.path());
  ApproxTokenizer tokenizer;
  ASSERT_TRUE(build_fixit(dir.path(), BuildOptions{std::nullopt, 42}, tokenizer));
  edit_build_manifest(dir.path(), [](Json& manifest) { manifest["tokens"]["max"] = 1.5; });
  auto stats = render_stats(dir.path(), DatasetKind::fixit);
  ASSERT_FALSE(stats);
  EXPECT_EQ(stats.error().message, (dir.path() / "fixit/build/manifest.json").string() +
                                       ": $.tokens.max: expected an integer >= 0, got 1.5");
}

TEST(Stats, BuiltRowWithAMistypedIdIsAnErrorNamingTheLineAndPath) {
  test_support::ScratchDir dir;
  write_fixit_inputs(dir.path());
  ApproxTokenizer tokenizer;
  ASSERT_TRUE(build_fixit(dir.path(), BuildOptions{std::nullopt, 42}, tokenizer));
  const fs::path sft = dir.path() / "fixit/build/sft.jsonl";
  ASSERT_TRUE(util::write_file_atomic(sft, "{\"id\": 7, \"messages\": []}\n"));
  auto stats = render_stats(dir.path(), DatasetKind::fixit);
  ASSERT_FALSE(stats);
  EXPECT_EQ(stats.error().message, sft.string() + ":1: $.id: expected a string, got integer");
}

TEST(Composition, MistypedCountIsAnErrorNamingItsPath) {
  const Json rows = Json::parse(
      R"([{"problem": "gemm", "category": "compile", "turn": 0, "count": 2},
          {"problem": "mha", "category": "compile", "turn": 0, "count": "1"}])");
  auto counts = composition_from_json(rows);
  ASSERT_FALSE(counts);
  EXPECT_EQ(counts.error().kind, util::ErrorKind::invalid_input);
  EXPECT_EQ(counts.error().message, "$[1].count: expected an integer >= 0, got string");
  auto valid = composition_from_json(Json::parse(
      R"([{"problem": "gemm", "category": "compile", "turn": 0, "count": 2},
          {"problem": "gemm", "category": "compile", "turn": 0, "count": 1}])"));
  ASSERT_TRUE(valid) << valid.error().message;
  EXPECT_EQ((valid->at({"gemm", "compile", 0})), 3);
}

} // namespace
} // namespace ptxbench::adapt
