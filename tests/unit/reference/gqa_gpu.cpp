#include "gpu_support.hpp"
#include "reference/reference.hpp"
#include "suite/layouts.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <gtest/gtest.h>
#include <map>
#include <stdexcept>

namespace ptxbench::reference::testing {
namespace {

using Indices = std::vector<std::int32_t>;

struct GqaCase {
  suite::Problem problem;
  std::map<std::string, Indices> indices; // qo_indptr, kv_indptr, kv_indices
};

GqaCase suite_case(const std::string& name) {
  GqaCase c{shipped_problem(name), {}};
  auto layout = suite::build_index_layout(c.problem.definition, c.problem.workload);
  if (!layout)
    throw std::runtime_error(layout.error().message);
  for (auto& named : *layout)
    c.indices[named.name] = std::move(named.values);
  return c;
}

// Host model of the FlashInfer-Trace reference, in double: output row and base-2 LSE of
// (token, head), written per sequence without the kernel's binary search.
struct HostGqa {
  const GqaCase& c;
  std::vector<std::uint16_t> q, k, v;
  std::int64_t hq, hkv, dim;
  double scale;

  struct Row {
    std::vector<double> out;
    double lse2;
  };

  Row row(std::int64_t token, std::int64_t head) const {
    const bool decode = !c.indices.contains("qo_indptr");
    const Indices& kv_indptr = c.indices.at("kv_indptr");
    std::int64_t b = token, i = 0, n_q = 1;
    if (!decode) {
      const Indices& qo = c.indices.at("qo_indptr");
      for (b = 0; !(qo[b] <= token && token < qo[b + 1]); ++b) {
      }
      i = token - qo[b];
      n_q = qo[b + 1] - qo[b];
    }
    const std::int64_t n_kv = kv_indptr[b + 1] - kv_indptr[b];
    const bool causal = c.problem.mask == suite::Mask::causal && !decode;
    const std::int64_t visible =
        causal ? std::clamp<std::int64_t>(i + 1 + n_kv - n_q, 0, n_kv) : n_kv;
    Row result{std::vector<double>(static_cast<std::size_t>(dim), 0.0), -INFINITY};
    if (visible == 0)
      return result;
    const std::int64_t kv_head = head / (hq / hkv);
    std::vector<double> scores;
    std::vector<std::int64_t> rows;
    double max = -INFINITY;
    for (std::int64_t j = 0; j < visible; ++j) {
      const std::int64_t kv_row = c.indices.contains("kv_indices")
                                      ? c.indices.at("kv_indices")[kv_indptr[b] + j]
                                      : kv_indptr[b] + j;
      const std::int64_t base = (kv_row * hkv + kv_head) * dim;
      double s = 0.0;
      for (std::int64_t d = 0; d < dim; ++d)
        s += static_cast<double>(at(q, (token * hq + head) * dim + d)) * at(k, base + d);
      scores.push_back(s * scale);
      rows.push_back(base);
      max = std::max(max, scores.back());
    }
    double sum = 0.0;
    for (const double s : scores)
      sum += std::exp(s - max);
    for (std::size_t j = 0; j < scores.size(); ++j)
      for (std::int64_t d = 0; d < dim; ++d)
        result.out[static_cast<std::size_t>(d)] +=
            std::exp(scores[j] - max) / sum * at(v, rows[j] + d);
    result.lse2 = (max + std::log(sum)) / std::log(2.0);
    return result;
  }

  static float at(const std::vector<std::uint16_t>& t, std::int64_t i) {
    return bf16_to_float(t[static_cast<std::size_t>(i)]);
  }
};

struct GqaRun {
  ProblemBuffers buffers;
  HostGqa host;
};

// Seeded q, k, v, the case's index tensors, sm_scale; runs `reference` and copies all back.
GqaRun run_gqa(const GqaCase& c, Reference& reference) {
  GqaRun run{allocate(c.problem), {c, {}, {}, {}, 0, 0, 0, kScale}};
  const auto& in = c.problem.inputs;
  for (std::uint32_t t = 0; t < 3; ++t)
    fill_bf16(run.buffers.pointers[t], in[t].element_count(), 7, t, Values::normal);
  for (std::size_t t = 3; t < in.size(); ++t) {
    if (in[t].scalar)
      continue;
    const Indices& values = c.indices.at(in[t].name);
    EXPECT_EQ(static_cast<std::int64_t>(values.size()), in[t].element_count()) << in[t].name;
    PTXBENCH_CUDA_CHECK(cudaMemcpy(run.buffers.pointers[t], values.data(), values.size() * 4,
                                   cudaMemcpyHostToDevice));
  }
  run.buffers.scalars.at(0).f32 = kScale;
  EXPECT_TRUE(reference.run(run.buffers.call()).has_value());
  PTXBENCH_CUDA_CHECK(cudaDeviceSynchronize());
  run.host.q = to_host<std::uint16_t>(run.buffers.pointers[0], in[0].element_count());
  run.host.k = to_host<std::uint16_t>(run.buffers.pointers[1], in[1].element_count());
  run.host.v = to_host<std::uint16_t>(run.buffers.pointers[2], in[2].element_count());
  run.host.hq = in[0].dims[1];
  run.host.dim = in[0].dims[2];
  run.host.hkv = in[1].dims[in[1].dims.size() - 2];
  return run;
}

struct Checked {
  std::int64_t rows = 0;
  std::int64_t failures = 0;
  double max_lse_error = 0.0;
};

// About `samples` (token, head) rows of the kernel's output, spread over all tokens and heads,
// plus the last row, against the host model; samples <= 0 checks every row.
Checked check_rows(const GqaCase& c, const GqaRun& run, std::int64_t samples) {
  const auto& out_tensor = c.problem.outputs[0];
  const std::size_t n = run.buffers.pointers.size();
  const auto out = to_host<std::uint16_t>(run.buffers.pointers[n - 2], out_tensor.element_count());
  const auto lse =
      to_host<float>(run.buffers.pointers[n - 1], c.problem.outputs[1].element_count());
  Checked checked;
  const std::int64_t rows = out_tensor.dims[0] * run.host.hq;
  std::int64_t stride = samples <= 0 ? 1 : std::max<std::int64_t>(1, rows / samples) | 1;
  if (stride > 1 && stride % run.host.hq == 0)
    stride += 2;
  std::vector<std::int64_t> picks;
  for (std::int64_t r = 0; r < rows; r += stride)
    picks.push_back(r);
  if (picks.back() != rows - 1)
    picks.push_back(rows - 1);
  for (const std::int64_t r : picks) {
    const HostGqa::Row expected = run.host.row(r / run.host.hq, r % run.host.hq);
    ++checked.rows;
    for (std::int64_t d = 0; d < run.host.dim; ++d) {
      const double x = HostGqa::at(out, r * run.host.dim + d);
      const double y = expected.out[static_cast<std::size_t>(d)];
      if (std::abs(x - y) > 1e-2 && std::abs(x - y) > 1e-2 * std::abs(y))
        ++checked.failures;
    }
    const double got = lse[static_cast<std::size_t>(r)];
    if (std::isinf(expected.lse2)) {
      if (!(std::isinf(got) && got < 0))
        ++checked.failures;
    } else {
      checked.max_lse_error = std::max(checked.max_lse_error, std::abs(got - expected.lse2));
    }
  }
  return checked;
}

class GqaGpu : public ::testing::TestWithParam<std::string> {};

TEST_P(GqaGpu, NaiveMatchesHostModelOnTheSuiteLayout) {
  const GqaCase c = suite_case(GetParam());
  auto naive = must(make_naive_reference(c.problem));
  const GqaRun run = run_gqa(c, *naive);
  const Checked checked = check_rows(c, run, 2000);
  EXPECT_GT(checked.rows, 50);
  EXPECT_EQ(checked.failures, 0);
  EXPECT_LT(checked.max_lse_error, 2e-3); // base-2 LSE
  std::printf("[%s] %lld rows checked, %lld failures, max |lse2 err| %.3g\n", GetParam().c_str(),
              static_cast<long long>(checked.rows), static_cast<long long>(checked.failures),
              checked.max_lse_error);
}

// The library reference (cuDNN standing in for FlashInfer) is tested against this naive kernel
// in gqa_cudnn_gpu.cpp.

INSTANTIATE_TEST_SUITE_P(SuiteProblems, GqaGpu,
                         ::testing::Values("gqa_ragged_prefill_causal_h32_kv4_d128",
                                           "gqa_paged_prefill_causal_h24_kv8_d128_ps1",
                                           "gqa_paged_decode_h24_kv8_d128_ps1"));

// Sequence 0 has 2 queries and 1 key (bottom-right: query 0 sees nothing, query 1 sees key 0);
// sequence 1 is empty; sequence 2 has 1 query and 2 keys (sees both).
TEST(GqaGpuEdges, BottomRightCausalAndEmptyRowsGiveZeroAndMinusInfinity) {
  GqaCase c{shipped_problem("gqa_ragged_prefill_causal_h32_kv4_d128"),
            {{"qo_indptr", {0, 2, 2, 3}}, {"kv_indptr", {0, 1, 1, 3}}}};
  auto& in = c.problem.inputs;
  in[0].dims[0] = 3; // q [total_q, 32, 128]
  in[1].dims[0] = 3; // k [total_kv, 4, 128]
  in[2].dims[0] = 3;
  in[3].dims[0] = 4;
  in[4].dims[0] = 4;
  c.problem.outputs[0].dims[0] = 3;
  c.problem.outputs[1].dims[0] = 3;
  auto naive = must(make_naive_reference(c.problem));
  const GqaRun run = run_gqa(c, *naive);
  const auto out = to_host<std::uint16_t>(run.buffers.pointers[5], 3 * 32 * 128);
  const auto lse = to_host<float>(run.buffers.pointers[6], 3 * 32);
  for (std::int64_t h = 0; h < 32; ++h) {
    EXPECT_TRUE(std::isinf(lse[static_cast<std::size_t>(h)]) &&
                lse[static_cast<std::size_t>(h)] < 0);
    for (std::int64_t d = 0; d < 128; ++d)
      EXPECT_EQ(out[static_cast<std::size_t>(h * 128 + d)], 0u);
  }
  const Checked checked = check_rows(c, run, 0);
  EXPECT_EQ(checked.rows, 96);
  EXPECT_EQ(checked.failures, 0);
  EXPECT_LT(checked.max_lse_error, 1e-3);
  // Query 1 of sequence 0 sees exactly key 0: its output is V[0] of its kv head, LSE2 = s/ln2.
  const HostGqa::Row one = run.host.row(1, 0);
  EXPECT_NEAR(HostGqa::at(out, 32 * 128), HostGqa::at(run.host.v, 0), 1e-6);
  EXPECT_NEAR(lse[32], one.lse2, 1e-3);
}

} // namespace
} // namespace ptxbench::reference::testing
