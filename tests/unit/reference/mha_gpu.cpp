#include "gpu_support.hpp"
#include "reference/reference.hpp"

#include <cmath>
#include <cstdio>
#include <gtest/gtest.h>
#include <stdexcept>

namespace ptxbench::reference::testing {
namespace {

std::string forward_name(int dim, bool causal) {
  return "mha_with_lse_d" + std::to_string(dim) + (causal ? "_causal" : "");
}
std::string backward_name(int dim, bool causal) {
  return "mha_bwd_d" + std::to_string(dim) + (causal ? "_causal" : "");
}

struct Dims {
  std::int64_t batch, heads, seq;
};

// cuDNN and naive forward on the same seeded Q, K, V; the library buffers stay alive so a
// backward test can use its O and LSE.
struct ForwardRun {
  suite::Problem problem;
  ProblemBuffers library;
  ProblemBuffers naive;
  Comparison o;
  Comparison lse;
};

ForwardRun run_forward(int dim, bool causal, Dims d, Values values) {
  ForwardRun run{with_mha_dims(shipped_problem(forward_name(dim, causal)), d.batch, d.heads, d.seq),
                 {},
                 {},
                 {},
                 {}};
  auto library = must(make_library_reference(run.problem));
  auto naive = must(make_naive_reference(run.problem));
  EXPECT_EQ(library->library().rfind("cuDNN 9.", 0), 0u) << library->library();
  run.library = allocate(run.problem);
  run.naive = allocate(run.problem);
  const std::int64_t count = run.problem.inputs[0].element_count();
  for (std::uint32_t t = 0; t < 3; ++t) {
    fill_bf16(run.library.pointers[t], count, 2026, t, values);
    run.naive.pointers[t] = run.library.pointers[t];
  }
  EXPECT_TRUE(library->run(run.library.call()).has_value());
  EXPECT_TRUE(naive->run(run.naive.call()).has_value());
  PTXBENCH_CUDA_CHECK(cudaDeviceSynchronize());
  run.o = compare_bf16(run.library.pointers[3], run.naive.pointers[3], count);
  run.lse = compare_f32(static_cast<const float*>(run.library.pointers[4]),
                        static_cast<const float*>(run.naive.pointers[4]),
                        run.problem.outputs[1].element_count());
  return run;
}

class MhaForwardGpu : public ::testing::TestWithParam<std::tuple<int, bool>> {};

TEST_P(MhaForwardGpu, CudnnMatchesNaive) {
  const auto [dim, causal] = GetParam();
  const ForwardRun run = run_forward(dim, causal, {1, 2, 512}, Values::normal);
  EXPECT_EQ(run.o.failures, 0) << "O: " << run.o.describe();
  EXPECT_EQ(run.lse.failures, 0) << "LSE: " << run.lse.describe();
  std::printf("[fwd d%d%s S=512] O %s; LSE %s\n", dim, causal ? " causal" : "",
              run.o.describe().c_str(), run.lse.describe().c_str());
}

INSTANTIATE_TEST_SUITE_P(HeadDimsAndMasks, MhaForwardGpu,
                         ::testing::Combine(::testing::Values(64, 96, 128), ::testing::Bool()));

TEST(MhaForwardGpuFull, CudnnMatchesNaiveAtB4H48S4096) {
  const ForwardRun run = run_forward(128, false, {4, 48, 4096}, Values::normal);
  EXPECT_EQ(run.o.failures, 0) << "O: " << run.o.describe();
  EXPECT_EQ(run.lse.failures, 0) << "LSE: " << run.lse.describe();
  std::printf("[fwd d128 B=4 H=48 S=4096] O %s; LSE %s\n", run.o.describe().c_str(),
              run.lse.describe().c_str());
}

// ln Σ_j exp(q_i·k_j/√D) in double on the host, for row i of head 0.
double host_lse_natural(const ForwardRun& run, std::int64_t i, bool causal) {
  const auto& dims = run.problem.inputs[0].dims;
  const std::int64_t seq = dims[2], dim = dims[3];
  const auto q = to_host<std::uint16_t>(run.library.pointers[0], seq * dim);
  const auto k = to_host<std::uint16_t>(run.library.pointers[1], seq * dim);
  const std::int64_t keys = causal ? i + 1 : seq;
  double max = -INFINITY, sum = 0.0;
  std::vector<double> scores;
  for (std::int64_t j = 0; j < keys; ++j) {
    double s = 0.0;
    for (std::int64_t d = 0; d < dim; ++d)
      s += static_cast<double>(bf16_to_float(q[static_cast<std::size_t>(i * dim + d)])) *
           bf16_to_float(k[static_cast<std::size_t>(j * dim + d)]);
    scores.push_back(s / std::sqrt(static_cast<double>(dim)));
    max = std::max(max, scores.back());
  }
  for (const double s : scores)
    sum += std::exp(s - max);
  return max + std::log(sum);
}

TEST(MhaForwardGpuConvention, BothLseAreNaturalLogNotBase2) {
  for (const bool causal : {false, true}) {
    const ForwardRun run = run_forward(128, causal, {1, 2, 512}, Values::normal);
    const auto cudnn = to_host<float>(run.library.pointers[4], 512);
    const auto naive = to_host<float>(run.naive.pointers[4], 512);
    for (const std::int64_t i : {0, 1, 37, 255, 511}) {
      const double expected = host_lse_natural(run, i, causal);
      const auto row = static_cast<std::size_t>(i);
      EXPECT_NEAR(cudnn[row], expected, 2e-3) << "row " << i;
      EXPECT_NEAR(naive[row], expected, 2e-3) << "row " << i;
      if (std::abs(expected) > 0.5) {
        EXPECT_GT(std::abs(cudnn[row] - expected / std::log(2.0)), 0.1) << "looks base-2";
      }
    }
  }
}

struct BackwardCase {
  int dim;
  bool causal;
  Dims dims;
  Values values;
  double allowed_failure_fraction = 0.0;
};

void check_backward(const BackwardCase& c) {
  ForwardRun forward = run_forward(c.dim, c.causal, c.dims, c.values);
  const auto problem = with_mha_dims(shipped_problem(backward_name(c.dim, c.causal)), c.dims.batch,
                                     c.dims.heads, c.dims.seq);
  auto library = must(make_library_reference(problem));
  auto naive = must(make_naive_reference(problem));
  ProblemBuffers lib = allocate(problem);
  ProblemBuffers ref = allocate(problem);
  const std::int64_t count = problem.inputs[0].element_count();
  fill_bf16(lib.pointers[4], count, 2026, 4, c.values); // dO
  // Q, K, V, O and L from the cuDNN forward, as the suite's blobs were made.
  const unsigned from_forward[] = {0, 1, 2, 3};
  for (const unsigned i : from_forward)
    lib.pointers[i] = forward.library.pointers[i];
  lib.pointers[5] = forward.library.pointers[4];
  for (unsigned i = 0; i < 6; ++i)
    ref.pointers[i] = lib.pointers[i];
  ASSERT_TRUE(library->run(lib.call()).has_value());
  ASSERT_TRUE(naive->run(ref.call()).has_value());
  PTXBENCH_CUDA_CHECK(cudaDeviceSynchronize());
  const char* names[] = {"dQ", "dK", "dV"};
  for (unsigned out = 0; out < 3; ++out) {
    const Comparison cmp = compare_bf16(lib.pointers[6 + out], ref.pointers[6 + out], count);
    EXPECT_LE(static_cast<double>(cmp.failures),
              c.allowed_failure_fraction * static_cast<double>(cmp.count))
        << names[out] << ": " << cmp.describe();
    std::printf("[bwd d%d%s S=%lld %s] %s %s\n", c.dim, c.causal ? " causal" : "",
                static_cast<long long>(c.dims.seq), c.values == Values::spiky ? "spiky" : "normal",
                names[out], cmp.describe().c_str());
  }
}

class MhaBackwardGpu : public ::testing::TestWithParam<std::tuple<int, bool>> {};

TEST_P(MhaBackwardGpu, CudnnMatchesNaive) {
  const auto [dim, causal] = GetParam();
  check_backward({dim, causal, {1, 2, 512}, Values::normal});
}

INSTANTIATE_TEST_SUITE_P(HeadDimsAndMasks, MhaBackwardGpu,
                         ::testing::Combine(::testing::Values(64, 96, 128), ::testing::Bool()));

// Spiky inputs (N(0,1) + N(0,100)·Bernoulli(0.001), the suite's mha_bwd data) push a handful
// of cuDNN's elements past atol=rtol=1e-2 against the fp32 naive backward: on an H200 with
// cuDNN 9.19, 2 of 1,048,576 dQ and 1 each of dK, dV (|x−y| ≤ 0.125), from cuDNN's bf16
// P and dS operands. The strict check passes on normal inputs (test below), so here up to
// 1e-5 of the elements may differ; the evaluator compares candidates with cuDNN, not with this.
TEST(MhaBackwardGpuLong, CudnnMatchesNaiveOnSpikyInputsUpToRareBf16Outliers) {
  check_backward({128, true, {1, 2, 4096}, Values::spiky, 1e-5});
}

TEST(MhaBackwardGpuLong, CudnnMatchesNaiveOnNormalInputsAtS4096) {
  check_backward({128, false, {1, 2, 4096}, Values::normal});
}

} // namespace
} // namespace ptxbench::reference::testing
