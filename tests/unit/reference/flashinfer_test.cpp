// The FlashInfer GQA reference without a GPU: which shapes its compiled kernels serve, what it
// records as the library, and the indptr arrays its plan is made from. Linking this binary also
// proves that FlashInfer's kernels compiled for sm_90a with nvcc alone (the reference library
// holds them).
#include "cuda/device.hpp"
#include "reference/library_factories.hpp"
#include "reference/shapes.hpp"
#include "suite/suite.hpp"
#include "suite_support.hpp"

#include <gtest/gtest.h>
#include <stdexcept>
#include <string>

namespace ptxbench::reference {
namespace {

using testing::shipped_problem;

constexpr const char* kGqaProblems[] = {"gqa_ragged_prefill_causal_h32_kv4_d128",
                                        "gqa_paged_prefill_causal_h24_kv8_d128_ps1",
                                        "gqa_paged_decode_h24_kv8_d128_ps1"};

TEST(FlashInferGqa, TheSuiteGqaProblemsAreServedByTheCompiledKernels) {
  for (const char* name : kGqaProblems) {
    const auto shape = gqa_shape(shipped_problem(name));
    ASSERT_TRUE(shape.has_value()) << name;
    EXPECT_EQ(flashinfer_gqa_unsupported(*shape), "") << name;
  }
}

TEST(FlashInferGqa, ShapesNotCompiledInAreRefusedWithTheReason) {
  const GqaShape base = *gqa_shape(shipped_problem(kGqaProblems[0]));
  GqaShape head_dim = base;
  head_dim.head_dim = 64;
  EXPECT_EQ(flashinfer_gqa_unsupported(head_dim),
            "FlashInfer GQA: head_dim 64 is not compiled in (128 is)");
  GqaShape pages = base;
  pages.page_size = 16;
  EXPECT_EQ(flashinfer_gqa_unsupported(pages),
            "FlashInfer GQA: page size 16 is not compiled in (1 is)");
  GqaShape full = base;
  full.causal = false;
  EXPECT_EQ(flashinfer_gqa_unsupported(full),
            "FlashInfer GQA: non-causal prefill is not compiled in");
  GqaShape decode = *gqa_shape(shipped_problem(kGqaProblems[2]));
  decode.qo_heads = 48; // group 6
  EXPECT_EQ(flashinfer_gqa_unsupported(decode),
            "FlashInfer GQA: decode serves group sizes 1, 2, 3, 4 and 8, not 6");
}

TEST(FlashInferGqa, LibraryNamesVersionKernelAndBackend) {
  EXPECT_EQ(kFlashInferVersion, "0.6.14"); // the paper's GQA baseline
  EXPECT_EQ(flashinfer_library(GqaLayout::ragged_prefill),
            "FlashInfer 0.6.14 BatchPrefillWithRaggedKVCache (fa3)");
  EXPECT_EQ(flashinfer_library(GqaLayout::paged_prefill),
            "FlashInfer 0.6.14 BatchPrefillWithPagedKVCache (fa3)");
  EXPECT_EQ(flashinfer_library(GqaLayout::paged_decode),
            "FlashInfer 0.6.14 BatchDecodeWithPagedKVCache (fa2, CUDA cores)");
}

TEST(FlashInferGqa, ThePlanIsMadeFromTheWorkloadIndptrs) {
  const auto ragged = gqa_indptrs(shipped_problem(kGqaProblems[0]));
  ASSERT_TRUE(ragged.has_value()) << ragged.error().message;
  const GqaShape ragged_shape = *gqa_shape(shipped_problem(kGqaProblems[0]));
  EXPECT_EQ(static_cast<std::int64_t>(ragged->qo_indptr.size()), ragged_shape.sequences + 1);
  EXPECT_EQ(ragged->qo_indptr.back(), ragged_shape.q_tokens);
  EXPECT_EQ(ragged->kv_indptr.back(), ragged_shape.kv_rows);
  const auto decode = gqa_indptrs(shipped_problem(kGqaProblems[2]));
  ASSERT_TRUE(decode.has_value()) << decode.error().message;
  EXPECT_TRUE(decode->qo_indptr.empty());
  EXPECT_EQ(decode->kv_indptr.back(), 9625); // page indices
}

TEST(FlashInferGqa, WithoutACudaDeviceTheFactoryIsUnsupportedNotAThrow) {
  if (cuda::require_device().has_value())
    GTEST_SKIP() << "a CUDA device is present";
  const GqaShape shape = *gqa_shape(shipped_problem(kGqaProblems[1]));
  const auto indptrs = *gqa_indptrs(shipped_problem(kGqaProblems[1]));
  const auto made = make_flashinfer_gqa(shape, indptrs);
  ASSERT_FALSE(made.has_value());
  EXPECT_EQ(made.error().kind, util::ErrorKind::unsupported);
}

} // namespace
} // namespace ptxbench::reference
