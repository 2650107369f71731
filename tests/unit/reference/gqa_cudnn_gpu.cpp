// The cuDNN SDPA GQA references against the naive GPU reference (one warp per row, fp32 online
// softmax, its own index bookkeeping): the suite's three workloads at full size through the
// factory the evaluator uses, and small layouts built for the edge cases — sequences of length
// 1, KV longer than the queries (bottom-right mask), decode, and queries that see no key.
// Both write into NaN-filled outputs; tolerance atol = rtol = 1e-2 on output and base-2 LSE,
// as the MHA reference tests.
#include "gpu_support.hpp"
#include "reference/library_factories.hpp"
#include "reference/reference.hpp"
#include "reference/shapes.hpp"
#include "suite/layouts.hpp"

#include <cstdio>
#include <gtest/gtest.h>
#include <stdexcept>

namespace ptxbench::reference::testing {
namespace {

using Indices = std::vector<std::int32_t>;
struct Layout {
  Indices qo_indptr; // empty for decode
  Indices kv_indptr;
  Indices kv_indices; // paged only
};

Indices offsets(const Indices& lengths) {
  Indices out{0};
  for (const std::int32_t n : lengths)
    out.push_back(out.back() + n);
  return out;
}

// Pages of `count` KV rows scattered over a pool: j ↦ (j·7919 + 11) mod pool, distinct while
// pool is not a multiple of 7919.
Indices scattered_pages(std::int64_t count, std::int64_t pool) {
  Indices pages;
  for (std::int64_t j = 0; j < count; ++j)
    pages.push_back(static_cast<std::int32_t>((j * 7919 + 11) % pool));
  return pages;
}

Layout suite_layout(const suite::Problem& problem) {
  Layout layout;
  for (auto& named : must(suite::build_index_layout(problem.definition, problem.workload))) {
    if (named.name == "qo_indptr")
      layout.qo_indptr = std::move(named.values);
    if (named.name == "kv_indptr")
      layout.kv_indptr = std::move(named.values);
    if (named.name == "kv_indices")
      layout.kv_indices = std::move(named.values);
  }
  return layout;
}

// The suite problem `name` resized to `layout` (paged: a pool of `pool` pages).
suite::Problem resized(const std::string& name, const Layout& layout, std::int64_t pool) {
  suite::Problem problem = shipped_problem(name);
  const bool decode = layout.qo_indptr.empty();
  const std::int64_t tokens =
      decode ? static_cast<std::int64_t>(layout.kv_indptr.size()) - 1 : layout.qo_indptr.back();
  for (auto* list : {&problem.inputs, &problem.outputs})
    for (auto& t : *list) {
      if (t.scalar)
        continue;
      if (t.name == "q" || t.name == "output" || t.name == "lse")
        t.dims[0] = tokens;
      if (t.name == "k" || t.name == "v")
        t.dims[0] = layout.kv_indptr.back();
      if (t.name == "k_cache" || t.name == "v_cache")
        t.dims[0] = pool;
      if (t.name == "qo_indptr" || t.name == "kv_indptr")
        t.dims[0] = static_cast<std::int64_t>(layout.kv_indptr.size());
      if (t.name == "kv_indices")
        t.dims[0] = static_cast<std::int64_t>(layout.kv_indices.size());
    }
  return problem;
}

struct Agreement {
  Comparison out;
  Comparison lse;
};

// Buffers for the library reference and the naive one: shared inputs (the index tensors of
// `layout`), separate outputs.
struct PairBuffers {
  ProblemBuffers lib;
  ProblemBuffers ref;
};

PairBuffers pair_buffers(const suite::Problem& problem, const Layout& layout) {
  PairBuffers pair{allocate(problem), allocate(problem)};
  const auto& in = problem.inputs;
  for (std::size_t t = 3; t < in.size(); ++t) {
    if (in[t].scalar)
      continue;
    const Indices& values = in[t].name == "qo_indptr"   ? layout.qo_indptr
                            : in[t].name == "kv_indptr" ? layout.kv_indptr
                                                        : layout.kv_indices;
    EXPECT_EQ(static_cast<std::int64_t>(values.size()), in[t].element_count()) << in[t].name;
    PTXBENCH_CUDA_CHECK(cudaMemcpy(pair.lib.pointers[t], values.data(),
                                   values.size() * sizeof(std::int32_t), cudaMemcpyHostToDevice));
  }
  for (std::size_t t = 0; t < pair.lib.pointers.size() - 2; ++t)
    pair.ref.pointers[t] = pair.lib.pointers[t];
  return pair;
}

// New seeded q, k, v; NaN-filled outputs on both sides.
void refill(const suite::Problem& problem, PairBuffers& pair, std::uint64_t seed) {
  for (std::uint32_t t = 0; t < 3; ++t)
    fill_bf16(pair.lib.pointers[t], problem.inputs[t].element_count(), seed, t, Values::normal);
  const std::size_t n = pair.lib.pointers.size();
  for (std::size_t t = n - 2; t < n; ++t) {
    const auto bytes = static_cast<std::size_t>(problem.outputs[t - (n - 2)].size_bytes());
    PTXBENCH_CUDA_CHECK(cudaMemset(pair.lib.pointers[t], 0xff, bytes)); // NaN sentinel
    PTXBENCH_CUDA_CHECK(cudaMemset(pair.ref.pointers[t], 0xff, bytes));
  }
}

Agreement run_pair(const suite::Problem& problem, PairBuffers& pair, Reference& library,
                   Reference& naive, float scale = kScale) {
  pair.lib.scalars.at(0).f32 = scale;
  pair.ref.scalars.at(0).f32 = scale;
  EXPECT_TRUE(library.run(pair.lib.call()).has_value());
  EXPECT_TRUE(naive.run(pair.ref.call()).has_value());
  PTXBENCH_CUDA_CHECK(cudaDeviceSynchronize());
  const std::size_t n = pair.lib.pointers.size();
  return Agreement{compare_bf16(pair.lib.pointers[n - 2], pair.ref.pointers[n - 2],
                                problem.outputs[0].element_count()),
                   compare_f32(static_cast<const float*>(pair.lib.pointers[n - 1]),
                               static_cast<const float*>(pair.ref.pointers[n - 1]),
                               problem.outputs[1].element_count())};
}

// Runs `library` and the naive reference on the same seeded inputs and `layout`.
Agreement against_naive(const suite::Problem& problem, const Layout& layout, Reference& library) {
  auto naive = must(make_naive_reference(problem));
  PairBuffers pair = pair_buffers(problem, layout);
  refill(problem, pair, 2027);
  return run_pair(problem, pair, library, *naive);
}

void expect_agreement(const std::string& label, const Agreement& a) {
  EXPECT_EQ(a.out.failures, 0) << label << " output: " << a.out.describe();
  EXPECT_EQ(a.lse.failures, 0) << label << " lse: " << a.lse.describe();
  std::printf("[gqa cudnn %s] output %s; lse %s\n", label.c_str(), a.out.describe().c_str(),
              a.lse.describe().c_str());
}

// The cuDNN reference planned for `layout` itself.
std::unique_ptr<Reference> planned_cudnn(const suite::Problem& problem, const Layout& layout,
                                         GqaLaunch launch = GqaLaunch::graph) {
  const GqaShape shape = must(gqa_shape(problem));
  const GqaPlan plan = must(gqa_plan(shape, layout.qo_indptr, layout.kv_indptr));
  auto cudnn = must(make_cudnn_gqa(shape, plan, launch));
  EXPECT_EQ(cudnn->library().find("direct launches"), std::string::npos) << cudnn->library();
  return cudnn;
}

void check_layout(const std::string& label, const std::string& name, const Layout& layout,
                  std::int64_t pool) {
  const suite::Problem problem = resized(name, layout, pool);
  expect_agreement(label, against_naive(problem, layout, *planned_cudnn(problem, layout)));
}

const char* const kRagged = "gqa_ragged_prefill_causal_h32_kv4_d128";
const char* const kPagedPrefill = "gqa_paged_prefill_causal_h24_kv8_d128_ps1";
const char* const kDecode = "gqa_paged_decode_h24_kv8_d128_ps1";

class GqaCudnnSuite : public ::testing::TestWithParam<std::string> {};

TEST_P(GqaCudnnSuite, LibraryReferenceIsCudnnStandingInForFlashInfer) {
  auto library = must(make_library_reference(shipped_problem(GetParam()), GqaBaseline::cudnn));
  EXPECT_EQ(library->kind(), Kind::library);
  EXPECT_EQ(library->library().rfind("cuDNN 9.", 0), 0u) << library->library();
  EXPECT_NE(library->library().find(kGqaStandIn), std::string::npos) << library->library();
}

TEST_P(GqaCudnnSuite, CudnnMatchesNaiveOnTheSuiteWorkload) {
  const suite::Problem& problem = shipped_problem(GetParam());
  auto library = must(make_library_reference(problem, GqaBaseline::cudnn));
  expect_agreement(GetParam(), against_naive(problem, suite_layout(problem), *library));
  EXPECT_EQ(library->library().find("direct launches"), std::string::npos) << library->library();
}

INSTANTIATE_TEST_SUITE_P(SuiteProblems, GqaCudnnSuite,
                         ::testing::Values(kRagged, kPagedPrefill, kDecode));

// Lengths (q, kv): (1,1) and (1,64) single queries, (5,9) and (130,300) KV longer than the
// queries (bottom-right), (37,37) square.
TEST(GqaCudnnLayouts, RaggedPrefillWithSingleTokenAndLongerKvSequences) {
  const Layout layout{offsets({1, 5, 1, 37, 130}), offsets({1, 9, 64, 37, 300}), {}};
  check_layout("ragged small", kRagged, layout, 0);
}

TEST(GqaCudnnLayouts, PagedPrefillWithScatteredPagesAndLongerKvSequences) {
  Layout layout{offsets({1, 7, 20, 129}), offsets({1, 30, 20, 200}), {}};
  layout.kv_indices = scattered_pages(layout.kv_indptr.back(), 1000);
  check_layout("paged prefill small", kPagedPrefill, layout, 1000);
}

TEST(GqaCudnnLayouts, PagedDecodeOneQueryPerSequence) {
  Layout layout{{}, offsets({1, 2, 100, 257, 1000}), {}};
  layout.kv_indices = scattered_pages(layout.kv_indptr.back(), 2003);
  check_layout("decode small", kDecode, layout, 2003);
}

// Sequence 0: 2 queries, 1 key (bottom-right: query 0 sees nothing); sequence 1 empty;
// sequence 2: 1 query, 2 keys. Kept apart (filter *Degenerate*): cuDNN gets zero lengths.
TEST(GqaCudnnDegenerate, QueriesThatSeeNoKeyGetZeroOutputAndMinusInfinity) {
  const Layout layout{offsets({2, 0, 1}), offsets({1, 0, 2}), {}};
  check_layout("ragged degenerate", kRagged, layout, 0);
}

TEST(GqaCudnnDegenerate, DecodeWithAnEmptyKvSequence) {
  Layout layout{{}, offsets({3, 0, 5}), {}};
  layout.kv_indices = scattered_pages(layout.kv_indptr.back(), 101);
  check_layout("decode empty kv", kDecode, layout, 101);
}

// Replayed graphs must follow each call: buffers A, buffers B, A again with new values, then
// A with another sm_scale (a new capture) — each against the naive reference.
TEST(GqaCudnnLaunch, GraphReplayFollowsBuffersValuesAndScale) {
  const Layout layout{offsets({3, 40, 17}), offsets({3, 64, 20}), {}};
  const suite::Problem problem = resized(kRagged, layout, 0);
  auto cudnn = planned_cudnn(problem, layout);
  auto naive = must(make_naive_reference(problem));
  PairBuffers a = pair_buffers(problem, layout);
  PairBuffers b = pair_buffers(problem, layout);
  refill(problem, a, 1);
  expect_agreement("replay A", run_pair(problem, a, *cudnn, *naive));
  refill(problem, b, 2);
  expect_agreement("replay B", run_pair(problem, b, *cudnn, *naive));
  refill(problem, a, 3);
  expect_agreement("replay A new values", run_pair(problem, a, *cudnn, *naive));
  refill(problem, a, 3);
  expect_agreement("replay A scale 0.05", run_pair(problem, a, *cudnn, *naive, 0.05f));
  EXPECT_EQ(cudnn->library().find("direct launches"), std::string::npos) << cudnn->library();
}

TEST(GqaCudnnLaunch, DirectLaunchesAgreeAndSaySo) {
  Layout layout{offsets({1, 7, 20, 129}), offsets({1, 30, 20, 200}), {}};
  layout.kv_indices = scattered_pages(layout.kv_indptr.back(), 1000);
  const suite::Problem problem = resized(kPagedPrefill, layout, 1000);
  const GqaShape shape = must(gqa_shape(problem));
  auto direct = must(make_cudnn_gqa(
      shape, must(gqa_plan(shape, layout.qo_indptr, layout.kv_indptr)), GqaLaunch::direct));
  EXPECT_NE(direct->library().find("direct launches"), std::string::npos) << direct->library();
  expect_agreement("paged prefill direct", against_naive(problem, layout, *direct));
}

} // namespace
} // namespace ptxbench::reference::testing
