#include "reference/library_check.hpp"
#include "reference/reference.hpp"
#include "reference/shapes.hpp"
#include "suite/suite.hpp"
#include "suite_support.hpp"
#include "support/library_error.hpp"

#include <gtest/gtest.h>
#include <stdexcept>
#include <string>

namespace ptxbench::reference {
namespace {

using testing::shipped_problem;

using test_support::library_error_message;

TEST(CheckMacros, CublasCudnnAndFrontendFailuresUseTheirOwnErrorNames) {
  EXPECT_EQ(library_error_message([] {
              PTXBENCH_CUBLAS_CHECK(CUBLAS_STATUS_NOT_SUPPORTED);
            }).rfind("cuBLASLt error CUBLAS_STATUS_NOT_SUPPORTED at ", 0),
            0u);
  EXPECT_EQ(library_error_message([] {
              PTXBENCH_CUDNN_CHECK(CUDNN_STATUS_BAD_PARAM);
            }).rfind("cuDNN error CUDNN_STATUS_BAD_PARAM at ", 0),
            0u);
  struct FakeFrontendError {
    enum class Code { ok, attribute_not_set, shape, name, pack, graph_not_supported } code;
    std::string err_msg;
  };
  const std::string fe = library_error_message([] {
    PTXBENCH_CUDNN_FE_CHECK(
        (FakeFrontendError{FakeFrontendError::Code::graph_not_supported, "no engine"}));
  });
  EXPECT_EQ(fe.rfind("cuDNN frontend error GRAPH_NOT_SUPPORTED: no engine at ", 0), 0u) << fe;
}

TEST(CheckMacros, SuccessDoesNotThrowAndErrorCarriesLibraryAndName) {
  EXPECT_NO_THROW(PTXBENCH_CUDA_CHECK(cudaSuccess));
  EXPECT_NO_THROW(PTXBENCH_CUBLAS_CHECK(CUBLAS_STATUS_SUCCESS));
  EXPECT_NO_THROW(PTXBENCH_CUDNN_CHECK(CUDNN_STATUS_SUCCESS));
  try {
    PTXBENCH_CUDNN_CHECK(CUDNN_STATUS_NOT_SUPPORTED);
    FAIL() << "no throw";
  } catch (const util::Fatal& fatal) { // LibraryError is a Fatal
    const auto& error = dynamic_cast<const LibraryError&>(fatal);
    EXPECT_EQ(error.library(), "cuDNN");
    EXPECT_EQ(error.error_name(), "CUDNN_STATUS_NOT_SUPPORTED");
  }
}

TEST(CheckMacros, FrontendCodeNamesAreStable) {
  EXPECT_EQ(detail::cudnn_frontend_code_name(15), "NVRTC_COMPILATION_FAILED");
  EXPECT_EQ(detail::cudnn_frontend_code_name(99), "UNKNOWN_CODE");
}

TEST(Owners, LibraryHandlesAreMoveOnly) {
  static_assert(!std::is_copy_constructible_v<DeviceBuffer>);
  static_assert(std::is_nothrow_move_constructible_v<CudnnHandle>);
  EXPECT_EQ(DeviceBuffer(0).get(), nullptr); // a zero-size buffer never touches the GPU
}

TEST(Shapes, ReadEverySuiteProblem) {
  const auto gemm = gemm_shape(shipped_problem("gemm_n7168_k5120"));
  ASSERT_TRUE(gemm.has_value());
  EXPECT_EQ(gemm->m, 8192);
  EXPECT_EQ(gemm->n, 7168);
  EXPECT_EQ(gemm->k, 5120);
  const auto mha = mha_shape(shipped_problem("mha_bwd_d96_causal"));
  ASSERT_TRUE(mha.has_value());
  EXPECT_EQ(mha->rows(), 4 * 48 * 4096);
  EXPECT_EQ(mha->head_dim, 96);
  EXPECT_EQ(mha->mask, MaskKind::causal);
  const auto ragged = gqa_shape(shipped_problem("gqa_ragged_prefill_causal_h32_kv4_d128"));
  ASSERT_TRUE(ragged.has_value());
  EXPECT_EQ(ragged->layout, GqaLayout::ragged_prefill);
  EXPECT_EQ(ragged->qo_heads, 32);
  EXPECT_EQ(ragged->kv_heads, 4);
  EXPECT_EQ(ragged->sequences, 33);
  EXPECT_TRUE(ragged->causal);
  const auto decode = gqa_shape(shipped_problem("gqa_paged_decode_h24_kv8_d128_ps1"));
  ASSERT_TRUE(decode.has_value());
  EXPECT_EQ(decode->sequences, 15);
  EXPECT_EQ(decode->kv_rows, 42784);
  EXPECT_FALSE(decode->causal);
}

TEST(Shapes, GqaShapesCountPageIndicesAndSequences) {
  const auto paged = gqa_shape(shipped_problem("gqa_paged_prefill_causal_h24_kv8_d128_ps1"));
  ASSERT_TRUE(paged.has_value());
  EXPECT_EQ(paged->sequences, 1);
  EXPECT_EQ(paged->page_indices, 892);
  EXPECT_EQ(paged->kv_rows, 43676);
  const auto decode = gqa_shape(shipped_problem("gqa_paged_decode_h24_kv8_d128_ps1"));
  ASSERT_TRUE(decode.has_value());
  EXPECT_EQ(decode->page_indices, 9625);
  EXPECT_EQ(gqa_shape(shipped_problem("gqa_ragged_prefill_causal_h32_kv4_d128"))->page_indices, 0);
}

TEST(GqaPlan, SuiteWorkloadsArePlannedForTheirLongestSequences) {
  // The layouts of the suite's index blobs (suite::build_index_layout): longest ragged sequence
  // 776 tokens of 16,294; the paged prefill is one 892-token sequence; decode's longest KV
  // list is 969 of 9,625 pages.
  const std::pair<const char*, GqaPlan> expected[] = {
      {"gqa_ragged_prefill_causal_h32_kv4_d128", {776, 776}},
      {"gqa_paged_prefill_causal_h24_kv8_d128_ps1", {892, 892}},
      {"gqa_paged_decode_h24_kv8_d128_ps1", {1, 969}}};
  for (const auto& [name, plan] : expected) {
    const suite::Problem& p = shipped_problem(name);
    const auto shape = gqa_shape(p);
    ASSERT_TRUE(shape.has_value()) << name;
    const auto planned = gqa_plan(p, *shape);
    ASSERT_TRUE(planned.has_value()) << name << ": " << planned.error().message;
    EXPECT_EQ(planned->max_q_len, plan.max_q_len) << name;
    EXPECT_EQ(planned->max_kv_len, plan.max_kv_len) << name;
  }
}

// A ragged shape of 3 sequences over 10 query and 12 KV tokens.
GqaShape small_ragged() {
  GqaShape shape;
  shape.q_tokens = 10;
  shape.kv_rows = 12;
  shape.sequences = 3;
  return shape;
}

void expect_bad_metadata(const util::Expected<GqaPlan>& plan, std::string_view message) {
  ASSERT_FALSE(plan.has_value());
  EXPECT_EQ(plan.error().kind, util::ErrorKind::invalid_input);
  EXPECT_EQ(plan.error().message, message);
}

TEST(GqaPlan, LongestSequencesOfAWellFormedLayout) {
  const auto plan = gqa_plan(small_ragged(), {0, 1, 1, 10}, {0, 3, 3, 12});
  ASSERT_TRUE(plan.has_value());
  EXPECT_EQ(plan->max_q_len, 9);
  EXPECT_EQ(plan->max_kv_len, 9);
  GqaShape decode = small_ragged();
  decode.layout = GqaLayout::paged_decode;
  decode.q_tokens = 3;
  decode.page_indices = 7;
  const auto decoded = gqa_plan(decode, {}, {0, 2, 7, 7});
  ASSERT_TRUE(decoded.has_value());
  EXPECT_EQ(decoded->max_q_len, 1);
  EXPECT_EQ(decoded->max_kv_len, 5);
}

TEST(GqaPlan, BadIndexMetadataIsNamedAndExplained) {
  const GqaShape shape = small_ragged();
  expect_bad_metadata(gqa_plan(shape, {0, 5, 10}, {0, 3, 6, 12}),
                      "GQA qo_indptr: has 3 entries, expected 4 (sequences + 1)");
  expect_bad_metadata(gqa_plan(shape, {1, 5, 6, 10}, {0, 3, 6, 12}),
                      "GQA qo_indptr: starts at 1, not 0");
  expect_bad_metadata(gqa_plan(shape, {0, 5, 4, 10}, {0, 3, 6, 12}),
                      "GQA qo_indptr: decreases at entry 2 (4 after 5)");
  expect_bad_metadata(gqa_plan(shape, {0, 5, 6, 10}, {0, 3, 6, 11}),
                      "GQA kv_indptr: ends at 11, but its tensor has 12 rows");
  expect_bad_metadata(gqa_plan(shape, {}, {0, 3, 6, 12}), "GQA qo_indptr: is missing");
  GqaShape decode = shape;
  decode.layout = GqaLayout::paged_decode;
  expect_bad_metadata(gqa_plan(decode, {0, 1, 2, 3}, {0, 3, 6, 12}),
                      "GQA qo_indptr: must be absent for decode");
}

void expect_unsupported(const util::Expected<std::unique_ptr<Reference>>& made,
                        std::string_view reason) {
  ASSERT_FALSE(made.has_value());
  EXPECT_EQ(made.error().kind, util::ErrorKind::unsupported);
  EXPECT_NE(made.error().message.find(reason), std::string::npos) << made.error().message;
}

TEST(Factories, UnsupportedShapesAreErrorsWithAReasonEvenWithoutAGpu) {
  suite::Problem wrong = shipped_problem("gemm_n7168_k5120");
  wrong.inputs[0].dtype = trace::DType::float32;
  expect_unsupported(make_library_reference(wrong), "bfloat16");
  expect_unsupported(make_naive_reference(wrong), "bfloat16");
  suite::Problem odd_dim = shipped_problem("mha_with_lse_d128");
  for (auto* list : {&odd_dim.inputs, &odd_dim.outputs})
    for (auto& t : *list)
      if (t.dims.size() == 4)
        t.dims[3] = 100; // not a multiple of 8
  expect_unsupported(make_library_reference(odd_dim), "multiple of 8");
}

TEST(Factories, GqaWithoutSequencesIsUnsupportedWithAReason) {
  suite::Problem empty = shipped_problem("gqa_paged_decode_h24_kv8_d128_ps1");
  empty.inputs[3].dims[0] = 1; // kv_indptr of zero sequences
  expect_unsupported(make_library_reference(empty), "at least one sequence");
}

TEST(Factories, WithoutACudaDeviceEveryProblemIsUnsupported) {
  if (cuda::require_device().has_value())
    GTEST_SKIP() << "a CUDA device is present";
  for (const char* name : {"gemm_n7168_k5120", "mha_with_lse_d128", "mha_bwd_d64_causal",
                           "gqa_paged_prefill_causal_h24_kv8_d128_ps1"}) {
    expect_unsupported(make_library_reference(shipped_problem(name)), "no CUDA device");
    expect_unsupported(make_naive_reference(shipped_problem(name)), "no CUDA device");
  }
}

} // namespace
} // namespace ptxbench::reference
