// FlashInfer's GQA references (the default GQA baseline) against the naive GPU reference and
// against cuDNN SDPA (`--reference cudnn`), on the suite's three workloads at full size through
// the factory the evaluator uses: the same seeded inputs and the workload's index layout for all
// three, NaN-filled outputs, atol = rtol = 1e-2 on output and base-2 LSE, as the cuDNN tests.
// A second call with new values and another sm_scale checks that run() follows the call: only
// the schedule is planned once.
#include "gpu_support.hpp"
#include "reference/library_factories.hpp"
#include "reference/reference.hpp"
#include "reference/shapes.hpp"
#include "suite/layouts.hpp"

#include <cstdio>
#include <gtest/gtest.h>

namespace ptxbench::reference::testing {
namespace {

// Outputs of FlashInfer, the naive reference and cuDNN over one set of inputs.
struct FlashInferTriple {
  ProblemBuffers flashinfer;
  ProblemBuffers naive;
  ProblemBuffers cudnn;
};

FlashInferTriple flashinfer_triple(const suite::Problem& problem) {
  FlashInferTriple t{allocate(problem), allocate(problem), allocate(problem)};
  const auto layout = must(suite::build_index_layout(problem.definition, problem.workload));
  for (std::size_t i = 3; i < problem.inputs.size(); ++i)
    for (const auto& named : layout)
      if (!problem.inputs[i].scalar && named.name == problem.inputs[i].name)
        PTXBENCH_CUDA_CHECK(cudaMemcpy(t.flashinfer.pointers[i], named.values.data(),
                                       named.values.size() * sizeof(std::int32_t),
                                       cudaMemcpyHostToDevice));
  for (std::size_t i = 0; i + 2 < t.flashinfer.pointers.size(); ++i)
    t.naive.pointers[i] = t.cudnn.pointers[i] = t.flashinfer.pointers[i];
  return t;
}

// New seeded q, k, v and sm_scale; NaN-filled outputs on every side.
void flashinfer_refill(const suite::Problem& problem, FlashInferTriple& t, std::uint64_t seed,
                       float scale) {
  for (std::uint32_t i = 0; i < 3; ++i)
    fill_bf16(t.flashinfer.pointers[i], problem.inputs[i].element_count(), seed, i, Values::normal);
  const std::size_t n = t.flashinfer.pointers.size();
  for (ProblemBuffers* side : {&t.flashinfer, &t.naive, &t.cudnn}) {
    side->scalars.at(0).f32 = scale;
    for (std::size_t i = n - 2; i < n; ++i)
      PTXBENCH_CUDA_CHECK(
          cudaMemset(side->pointers[i], 0xff,
                     static_cast<std::size_t>(problem.outputs[i - (n - 2)].size_bytes())));
  }
}

// FlashInfer's outputs against `expected`'s; fails the test on any element out of tolerance.
void expect_flashinfer_agrees(const suite::Problem& problem, const FlashInferTriple& t,
                              const ProblemBuffers& expected, const std::string& label) {
  const std::size_t n = t.flashinfer.pointers.size();
  const Comparison out = compare_bf16(t.flashinfer.pointers[n - 2], expected.pointers[n - 2],
                                      problem.outputs[0].element_count());
  const Comparison lse = compare_f32(static_cast<const float*>(t.flashinfer.pointers[n - 1]),
                                     static_cast<const float*>(expected.pointers[n - 1]),
                                     problem.outputs[1].element_count());
  EXPECT_EQ(out.failures, 0) << label << " output: " << out.describe();
  EXPECT_EQ(lse.failures, 0) << label << " lse: " << lse.describe();
  std::printf("[gqa flashinfer %s] output %s; lse %s\n", label.c_str(), out.describe().c_str(),
              lse.describe().c_str());
}

class GqaFlashInferSuite : public ::testing::TestWithParam<std::string> {};

TEST_P(GqaFlashInferSuite, LibraryReferenceIsFlashInferByDefault) {
  const suite::Problem& problem = shipped_problem(GetParam());
  auto library = must(make_library_reference(problem));
  EXPECT_EQ(library->kind(), Kind::library);
  EXPECT_EQ(library->library(), flashinfer_library(must(gqa_shape(problem)).layout));
}

TEST_P(GqaFlashInferSuite, CudnnOnRequestStandsInAndSaysSo) {
  auto cudnn = must(make_library_reference(shipped_problem(GetParam()), GqaBaseline::cudnn));
  EXPECT_EQ(cudnn->library().rfind("cuDNN 9.", 0), 0u) << cudnn->library();
  EXPECT_NE(cudnn->library().find(kGqaStandIn), std::string::npos) << cudnn->library();
}

TEST_P(GqaFlashInferSuite, FlashInferMatchesNaiveAndCudnnOnTheSuiteWorkload) {
  const suite::Problem& problem = shipped_problem(GetParam());
  auto flashinfer = must(make_library_reference(problem));
  auto naive = must(make_naive_reference(problem));
  auto cudnn = must(make_library_reference(problem, GqaBaseline::cudnn));
  FlashInferTriple t = flashinfer_triple(problem);
  const std::pair<std::uint64_t, float> calls[] = {{2027, kScale}, {2028, 0.05f}};
  for (const auto& [seed, scale] : calls) {
    flashinfer_refill(problem, t, seed, scale);
    EXPECT_TRUE(flashinfer->run(t.flashinfer.call()).has_value());
    EXPECT_TRUE(naive->run(t.naive.call()).has_value());
    EXPECT_TRUE(cudnn->run(t.cudnn.call()).has_value());
    PTXBENCH_CUDA_CHECK(cudaDeviceSynchronize());
    const std::string label = GetParam() + " seed " + std::to_string(seed);
    expect_flashinfer_agrees(problem, t, t.naive, label + " vs naive");
    expect_flashinfer_agrees(problem, t, t.cudnn, label + " vs cuDNN");
  }
}

INSTANTIATE_TEST_SUITE_P(SuiteProblems, GqaFlashInferSuite,
                         ::testing::Values("gqa_ragged_prefill_causal_h32_kv4_d128",
                                           "gqa_paged_prefill_causal_h24_kv8_d128_ps1",
                                           "gqa_paged_decode_h24_kv8_d128_ps1"));

} // namespace
} // namespace ptxbench::reference::testing
