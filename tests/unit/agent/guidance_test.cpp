// Expert guidance (agent/guidance.hpp): where the prompt builder puts it, and the checks a
// guidance file passes before a run starts.
#include "agent/guidance.hpp"
#include "agent/prompt.hpp"
#include "loop_test_support.hpp"
#include "support/real_data.hpp"
#include "support/scratch_dir.hpp"
#include "util/paths.hpp"

#include <gtest/gtest.h>

using namespace ptxbench;
using namespace ptxbench::agent;
using namespace ptxbench::agent::testing;

TEST(Guidance, ClosesTheKnowledgeSectionBeforeTheSignatureAsTheOriginalsPatchDoes) {
  const std::string rules = "1. Write a kernel contract.\n2. Check every host call.";
  auto prompts =
      build_prompts(gemm_problem(), compile::Arch::sm_90a, test_support::real_manifest(), "gemm-0",
                    "# Live device\n", frontend::of(compile::Language::cuda), rules);
  ASSERT_TRUE(prompts) << prompts.error().message;
  const std::string& s = prompts->system;
  const auto pack = s.find("# Architecture knowledge");
  const auto live = s.find("# Live device");
  const auto guidance = s.find("## Expert guidance\n\n" + rules + "\n");
  const auto signature = s.find("# Required signature");
  ASSERT_NE(guidance, std::string::npos) << s;
  EXPECT_LT(pack, live);
  EXPECT_LT(live, guidance);
  EXPECT_LT(guidance, signature);
  EXPECT_EQ(s.find("## Expert guidance", guidance + 1), std::string::npos);
}

TEST(Guidance, WithoutAPackItIsTheWholeKnowledgeSectionAndWithoutGuidanceNothingChanges) {
  auto guided = build_prompts(gemm_problem(), compile::Arch::sm_90a, test_support::real_manifest(),
                              "none", {}, frontend::of(compile::Language::cuda), "RULE");
  auto plain =
      build_prompts(gemm_problem(), compile::Arch::sm_90a, test_support::real_manifest(), "none");
  ASSERT_TRUE(guided && plain);
  EXPECT_NE(guided->system.find("# Architecture knowledge\n\n## Expert guidance\n\nRULE\n"),
            std::string::npos)
      << guided->system;
  EXPECT_EQ(plain->system.find("Expert guidance"), std::string::npos);
  EXPECT_EQ(guided->task, plain->task);
}

TEST(Guidance, TheShippedMhaGuidanceIsThePapersSevenRules) {
  auto loaded = load_guidance(util::data_root() / "knowledge/guidance/mha_expert_guidance.md");
  ASSERT_TRUE(loaded) << loaded.error().message;
  for (const char* rule : {"1. In your thinking", "2. For TMA BF16", "3. Every host-side",
                           "4. If dynamic shared memory", "5. The online softmax",
                           "6. Prohibit unsynchronized", "7. Require a self-audit"})
    EXPECT_NE(loaded->text.find(rule), std::string::npos) << rule;
  EXPECT_EQ(loaded->sha256.size(), 64u);
}

TEST(Guidance, AFileMustExistBeUtf8NonEmptyAndWithinTheBound) {
  test_support::ScratchDir dir;
  auto missing = load_guidance(dir.path() / "absent.md");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().kind, util::ErrorKind::not_found);
  auto latin1 = load_guidance(dir.write("latin1.md", "caf\xe9 rules\n"));
  ASSERT_FALSE(latin1);
  EXPECT_NE(latin1.error().message.find("not UTF-8 (byte 3"), std::string::npos)
      << latin1.error().message;
  auto blank = load_guidance(dir.write("blank.md", " \n\n"));
  ASSERT_FALSE(blank);
  EXPECT_NE(blank.error().message.find("empty"), std::string::npos);
  EXPECT_TRUE(load_guidance(dir.write("max.md", std::string(kMaxGuidanceBytes, 'x'))));
  auto huge = load_guidance(dir.write("huge.md", std::string(kMaxGuidanceBytes + 1, 'x')));
  ASSERT_FALSE(huge);
  EXPECT_EQ(huge.error().kind, util::ErrorKind::invalid_input);
  EXPECT_TRUE(load_guidance(dir.write("utf8.md", "règle ≤ 8 — ✓ 𝛼\n")));
}

TEST(Guidance, Utf8CheckRejectsOverlongsSurrogatesAndTruncatedSequences) {
  EXPECT_EQ(first_invalid_utf8("plain ascii"), std::string_view::npos);
  EXPECT_EQ(first_invalid_utf8("\xc3\xa9\xe2\x89\xa4\xf0\x9d\x9b\xbc"), std::string_view::npos);
  EXPECT_EQ(first_invalid_utf8("ab\xc0\xaf"), 2u);       // overlong '/'
  EXPECT_EQ(first_invalid_utf8("a\xed\xa0\x80"), 1u);    // surrogate U+D800
  EXPECT_EQ(first_invalid_utf8("ab\xe2\x89"), 2u);       // truncated
  EXPECT_EQ(first_invalid_utf8("\xf4\x90\x80\x80"), 0u); // above U+10FFFF
  EXPECT_EQ(first_invalid_utf8("x\x80"), 1u);            // lone continuation byte
}
