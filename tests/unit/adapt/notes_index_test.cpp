// Retrieval of repair notes: the tokenizer over comment-stripped source, BM25 scores worked by
// hand, the grouping and filtering of the corpus, and the rendered block (golden files).
#include "adapt/notes_index.hpp"
#include "support/golden.hpp"
#include "support/scratch_dir.hpp"

#include <gtest/gtest.h>

using namespace ptxbench;
using namespace ptxbench::adapt;

namespace {

InstructionNote note(const std::string& instruction) {
  InstructionNote n;
  n.instruction = instruction;
  n.shape_context = "64x128 bf16 tile, one warpgroup";
  n.correct_example = "wgmma.fence.sync.aligned;";
  n.wrong_example = "wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 d, a, b;";
  n.operand_contract = {"descriptor base 16-byte aligned", "leading offset in 16-byte units"};
  n.required_sequence = {"wgmma.fence", "mma_async", "commit_group", "wait_group 0"};
  n.diagnostics = {"numerical mismatch in every tile"};
  n.do_not_do = {"read accumulators before wait_group"};
  n.example_completeness = "complete";
  return n;
}

NotesRecord record(std::string problem, std::string wrong, std::string fixed,
                   std::optional<double> speedup, int notes) {
  NotesRecord r;
  r.id = problem + ":" + fixed;
  r.status = "done";
  r.problem = std::move(problem);
  r.wrong_kernel = std::move(wrong);
  r.fixed_kernel = std::move(fixed);
  r.speedup = speedup;
  r.notes.summary = "Summary of " + r.fixed_kernel;
  for (int i = 0; i < notes; ++i)
    r.notes.instruction_notes.push_back(note(r.fixed_kernel + " note " + std::to_string(i + 1)));
  return r;
}

const std::string kWgmmaWrong = "// wrong: no fence\n__global__ void k(float* d) {\n"
                                "  asm volatile(\"wgmma.mma_async.sync.aligned.m64n128k16\");\n"
                                "  d[threadIdx.x] = 0;\n}\n";
const std::string kTmaWrong = "__global__ void t(const CUtensorMap* map) {\n"
                              "  cp_async_bulk_tensor_2d(map, 0, 0); mbarrier_wait(0);\n}\n";

// The corpus of the rendering tests: one wrong kernel fixed twice, another fixed once, and one
// record of another problem.
NotesIndex corpus() {
  return NotesIndex({record("gemm_n7168_k5120", kWgmmaWrong, "fixed A", 0.9, 2),
                     record("gemm_n7168_k5120", kTmaWrong, "fixed C", 1.4, 3),
                     record("gemm_n7168_k5120", kWgmmaWrong, "fixed B", 1.3, 2),
                     record("mha_with_lse_d128", kWgmmaWrong, "fixed D", 2.0, 1)});
}

const std::string kQuery = "/* the current kernel */ __global__ void k(float* d) {\n"
                           "  asm volatile(\"wgmma.mma_async.sync.aligned.m64n128k16\");\n}\n";

} // namespace

TEST(NotesTokens, CommentsGoLiteralsStayNumbersAndIdentifiersSplitAsTheRegexDoes) {
  const std::string source = "int a1 = 42; // x_comment\n/* y_block\n */ const char* s = "
                             "\"// kept\"; char c = '/'; float f=3.5e2;/* open";
  EXPECT_EQ(strip_comments(source), "int a1 = 42;  \n  const char* s = \"// kept\"; char c = "
                                    "'/'; float f=3.5e2; ");
  const std::vector<std::string> expected{"int",  "a1", "42",    "const", "char", "s", "kept",
                                          "char", "c",  "float", "f",     "3",    "5", "e2"};
  EXPECT_EQ(code_tokens(source), expected);
}

TEST(NotesTokens, EscapedQuoteDoesNotEndALiteral) {
  EXPECT_EQ(code_tokens(R"(s = "a\" // b"; t)"), (std::vector<std::string>{"s", "a", "b", "t"}));
}

// Worked by hand. Documents D1 = [x y], D2 = [x z z], D3 = [w]; N = 3, avgdl = 6/3 = 2.
// Query [x z x]: distinct terms x, z. n(x) = 2, n(z) = 1.
//   idf(x) = ln(1 + (3 - 2 + 0.5)/(2 + 0.5)) = ln(1.6)  = 0.470003629
//   idf(z) = ln(1 + (3 - 1 + 0.5)/(1 + 0.5)) = ln(8/3)  = 0.980829253
// D1: |D| = 2, K = 1.5·(0.25 + 0.75·2/2) = 1.5; x: f = 1 → idf(x)·1·2.5/(1 + 1.5) = 0.470003629
// D2: |D| = 3, K = 1.5·(0.25 + 0.75·3/2) = 2.0625;
//     x: f = 1 → idf(x)·2.5/3.0625 = 0.383676432; z: f = 2 → idf(z)·5/4.0625 = 1.207174465
//     total 1.590850897
// D3: no query term → 0.
TEST(NotesBm25, ScoresMatchTheHandWorkedCorpus) {
  const std::vector<std::vector<std::string>> docs{{"x", "y"}, {"x", "z", "z"}, {"w"}};
  const auto scores = bm25_scores(docs, {"x", "z", "x"});
  ASSERT_EQ(scores.size(), 3u);
  EXPECT_NEAR(scores[0], 0.470003629, 1e-9);
  EXPECT_NEAR(scores[1], 1.590850897, 1e-9);
  EXPECT_EQ(scores[2], 0.0);
}

TEST(NotesBm25, EmptyCorpusScoresNothing) {
  EXPECT_TRUE(bm25_scores({}, {"x"}).empty());
}

TEST(NotesIndex, GroupsByWrongKernelFiltersToTheProblemAndOrdersFixesBySpeedup) {
  const NotesIndex index = corpus();
  const auto groups = index.retrieve("gemm_n7168_k5120", kQuery, RetrievalOptions{});
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0].records.size(), 2u); // fixed A and fixed B, not the mha record
  EXPECT_EQ(groups[0].records[0]->fixed_kernel, "fixed B");
  EXPECT_EQ(groups[0].records[1]->fixed_kernel, "fixed A");
  EXPECT_GT(groups[0].score, groups[1].score);
  EXPECT_EQ(groups[1].records[0]->fixed_kernel, "fixed C");
}

TEST(NotesIndex, DefinitionPrefixesWidenTheCandidates) {
  RetrievalOptions options;
  options.definition_prefixes = {"mha_"};
  const auto groups = corpus().retrieve("gemm_n7168_k5120", kQuery, options);
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups[0].problem, "mha_with_lse_d128");
}

TEST(NotesIndex, TopKAndMinSimilarityCut) {
  RetrievalOptions options;
  options.top_k = 1;
  EXPECT_EQ(corpus().retrieve("gemm_n7168_k5120", kQuery, options).size(), 1u);
  options.top_k = 3;
  options.min_similarity = 1e6;
  EXPECT_TRUE(corpus().retrieve("gemm_n7168_k5120", kQuery, options).empty());
  EXPECT_EQ(corpus().render("gemm_n7168_k5120", kQuery, options), "");
  EXPECT_EQ(corpus().render("no_such_problem", kQuery, RetrievalOptions{}), "");
}

TEST(NotesRender, NotesModeMatchesGolden) {
  RetrievalOptions options;
  options.max_notes = 6;
  const std::string block = corpus().render("gemm_n7168_k5120", kQuery, options);
  EXPECT_TRUE(block.starts_with(
      "## Retrieved repair notes from fixing similar historical wrong kernels\n"));
  test_support::expect_golden("adapt/notes_block_mode1.md", block);
}

TEST(NotesRender, KernelModeShowsTheBestFixedKernelFirst) {
  RetrievalOptions options;
  options.mode = NotesMode::notes_and_kernel;
  options.top_k = 1;
  const std::string block = corpus().render("gemm_n7168_k5120", kQuery, options);
  EXPECT_TRUE(block.starts_with("## Retrieved best fixed kernels and notes from fixing similar "
                                "historical wrong kernels\n"));
  EXPECT_NE(block.find("Best fixed kernel (speedup 1.300x):\n```cuda\nfixed B\n```"),
            std::string::npos)
      << block;
  test_support::expect_golden("adapt/notes_block_mode2.md", block);
}

TEST(NotesRender, MaxNotesCapsTheWholeBlock) {
  RetrievalOptions options;
  options.max_notes = 3;
  const std::string block = corpus().render("gemm_n7168_k5120", kQuery, options);
  EXPECT_NE(block.find("fixed A note 1"), std::string::npos); // B's 2 notes, then A's first
  EXPECT_EQ(block.find("fixed A note 2"), std::string::npos);
  EXPECT_EQ(block.find("fixed C note 1"), std::string::npos);
}

TEST(NotesIndex, LoadSkipsFailedRecordsAndNamesABadLine) {
  test_support::ScratchDir dir;
  NotesRecord failed = record("gemm_n7168_k5120", kTmaWrong, "fixed F", 1.0, 0);
  failed.status = "failed";
  const auto path = dir.write(
      "notes.jsonl", to_json(record("gemm_n7168_k5120", kWgmmaWrong, "fixed A", 1.0, 3)).dump() +
                         "\n" + to_json(failed).dump() + "\n");
  auto index = NotesIndex::load(path);
  ASSERT_TRUE(index) << index.error().message;
  EXPECT_EQ(index->size(), 1u);
  const auto bad = dir.write("bad.jsonl", "{\"id\": 3}\n");
  auto refused = NotesIndex::load(bad);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find(bad.string() + ":1:"), std::string::npos)
      << refused.error().message;
}
