#include "gpu_support.hpp"
#include "reference/gemm_autotune.hpp"
#include "reference/library_factories.hpp"
#include "reference/reference.hpp"

#include <algorithm>
#include <cstdio>
#include <gtest/gtest.h>
#include <stdexcept>

namespace ptxbench::reference::testing {
namespace {

// Runs cuBLASLt and the naive GEMM on the same seeded A, B and compares C.
Comparison cublaslt_vs_naive(const suite::Problem& problem) {
  auto library = must(make_library_reference(problem));
  auto naive = must(make_naive_reference(problem));
  EXPECT_EQ(library->kind(), Kind::library);
  EXPECT_EQ(library->library().rfind("cuBLASLt 13.", 0), 0u) << library->library();
  ProblemBuffers lib = allocate(problem);
  ProblemBuffers ref = allocate(problem);
  fill_bf16(lib.pointers[0], problem.inputs[0].element_count(), 11, 0, Values::normal);
  fill_bf16(lib.pointers[1], problem.inputs[1].element_count(), 11, 1, Values::normal);
  ref.pointers[0] = lib.pointers[0];
  ref.pointers[1] = lib.pointers[1];
  const PtxbenchCall lib_call = lib.call();
  const PtxbenchCall ref_call = ref.call();
  EXPECT_TRUE(library->run(lib_call).has_value());
  EXPECT_TRUE(naive->run(ref_call).has_value());
  PTXBENCH_CUDA_CHECK(cudaDeviceSynchronize());
  return compare_bf16(lib.pointers[2], ref.pointers[2], problem.outputs[0].element_count());
}

TEST(GemmGpu, CublasLtMatchesNaiveOnReducedM) {
  const auto problem = with_gemm_m(shipped_problem("gemm_n7168_k5120"), 256);
  const Comparison result = cublaslt_vs_naive(problem);
  EXPECT_EQ(result.failures, 0) << result.describe();
  std::printf("[gemm M=256] %s\n", result.describe().c_str());
}

TEST(GemmGpu, CublasLtMatchesNaiveAtFullSize) {
  const Comparison result = cublaslt_vs_naive(shipped_problem("gemm_n7168_k5120"));
  EXPECT_EQ(result.failures, 0) << result.describe();
  std::printf("[gemm M=8192] %s\n", result.describe().c_str());
}

// Row 26 of the cheat catalogue: the baseline runs the fastest of the heuristic's candidates,
// timed once per device and shape; a second reference for the same key reads the choice.
TEST(GemmGpu, TheBaselineRunsTheFastestHeuristicCandidateAndKeepsTheChoice) {
  AutotuneCache cache{std::filesystem::path()};
  const GemmShape shape{8192, 7168, 5120};
  auto first = make_cublaslt_gemm(shape, cache);
  ASSERT_TRUE(first) << first.error().message;
  const std::string library = (*first)->library();
  std::printf("[gemm autotune] %s\n", library.c_str());
  EXPECT_TRUE(library.find("autotuned: heuristic #") != std::string::npos ||
              library.find("only algorithm") != std::string::npos)
      << library;
  int device = 0;
  PTXBENCH_CUDA_CHECK(cudaGetDevice(&device));
  cudaDeviceProp props{};
  PTXBENCH_CUDA_CHECK(cudaGetDeviceProperties(&props, device));
  const AutotuneKey key{library.substr(0, library.find(" (")),
                        std::string(props.name) + " (sm_" + std::to_string(props.major) +
                            std::to_string(props.minor) + ")",
                        shape, std::size_t{32} << 20};
  auto record = cache.find(key);
  ASSERT_TRUE(record);
  for (std::size_t i = 0; i < record->median_us.size(); ++i)
    std::printf("[gemm autotune] candidate %zu: %.1f us%s\n", i + 1, record->median_us[i],
                static_cast<int>(i) == record->chosen ? " (chosen)" : "");
  if (record->median_us.size() > 1) {
    const double chosen = record->median_us[static_cast<std::size_t>(record->chosen)];
    EXPECT_GT(chosen, 0.0);
    EXPECT_LE(chosen, record->median_us[0]);
  }
  auto second = make_cublaslt_gemm(shape, cache);
  ASSERT_TRUE(second);
  EXPECT_EQ((*second)->library(), library);
  EXPECT_EQ(cache.find(key)->measured_at, record->measured_at); // not timed again
}

TEST(GemmGpu, NaiveGemmComputesABTransposedOnAKnownCase) {
  // A row 1 is 2.0, other rows 1.0; B is all 1.0 → C[r,n] = K·A[r,0] (exact in bf16).
  constexpr std::uint16_t kOne = 0x3F80;
  constexpr std::uint16_t kTwo = 0x4000;
  const auto problem = with_gemm_m(shipped_problem("gemm_n7168_k5120"), 4);
  auto naive = must(make_naive_reference(problem));
  ProblemBuffers buffers = allocate(problem);
  const auto k = static_cast<std::size_t>(problem.inputs[0].dims[1]);
  std::vector<std::uint16_t> a(4 * k, kOne);
  std::fill(a.begin() + static_cast<std::ptrdiff_t>(k),
            a.begin() + static_cast<std::ptrdiff_t>(2 * k), kTwo);
  const std::vector<std::uint16_t> b(static_cast<std::size_t>(problem.inputs[1].element_count()),
                                     kOne);
  PTXBENCH_CUDA_CHECK(
      cudaMemcpy(buffers.pointers[0], a.data(), a.size() * 2, cudaMemcpyHostToDevice));
  PTXBENCH_CUDA_CHECK(
      cudaMemcpy(buffers.pointers[1], b.data(), b.size() * 2, cudaMemcpyHostToDevice));
  ASSERT_TRUE(naive->run(buffers.call()).has_value());
  const auto c = to_host<std::uint16_t>(buffers.pointers[2], problem.outputs[0].element_count());
  const auto n = static_cast<std::size_t>(problem.outputs[0].dims[1]);
  EXPECT_FLOAT_EQ(bf16_to_float(c[0]), static_cast<float>(k));
  EXPECT_FLOAT_EQ(bf16_to_float(c[n + 5]), 2.0f * static_cast<float>(k));
  EXPECT_FLOAT_EQ(bf16_to_float(c[3 * n + n - 1]), static_cast<float>(k));
}

} // namespace
} // namespace ptxbench::reference::testing
