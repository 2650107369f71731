#include "suite/layouts.hpp"
#include "suite/metrics.hpp"
#include "suite/recipes.hpp"
#include "suite/safetensors.hpp"
#include "suite/suite.hpp"
#include "util/fs.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <gtest/gtest.h>
#include <numeric>
#include <set>
#include <unistd.h>

namespace ptxbench::suite {
namespace {

const Suite& suite() {
  static const Suite loaded = [] {
    auto result = Suite::load_default();
    if (!result)
      throw std::runtime_error(result.error().message);
    return std::move(*result);
  }();
  return loaded;
}

const Problem& problem(std::string_view name) {
  auto found = suite().find(name);
  if (!found)
    throw std::runtime_error(found.error().message);
  return **found;
}

std::vector<std::string> names_of(const std::vector<ResolvedTensor>& tensors) {
  std::vector<std::string> names;
  for (const auto& tensor : tensors)
    names.push_back(tensor.name);
  return names;
}

using Dims = std::vector<std::int64_t>;

TEST(Suite, LoadsAllSixteenProblems) {
  ASSERT_EQ(suite().problems().size(), 16u);
  std::size_t primary = 0;
  for (const Problem& p : suite().problems())
    primary += p.suite == "primary" ? 1 : 0;
  EXPECT_EQ(primary, 5u);
  EXPECT_EQ(suite().problems().front().name(), "gemm_n7168_k5120");
}

TEST(Suite, GemmShapesAndFlops) {
  const Problem& gemm = problem("gemm_n7168_k5120");
  EXPECT_EQ(gemm.kind, OpKind::gemm);
  EXPECT_EQ(gemm.baseline, "cuBLASLt");
  EXPECT_EQ(gemm.workload.uuid, "94920358-01a8-4c5b-9209-3103fd490e94");
  EXPECT_EQ(names_of(gemm.inputs), (std::vector<std::string>{"A", "B"}));
  EXPECT_EQ(gemm.inputs[0].dims, (Dims{8192, 5120}));
  EXPECT_EQ(gemm.inputs[1].dims, (Dims{7168, 5120}));
  EXPECT_EQ(gemm.outputs[0].dims, (Dims{8192, 7168}));
  EXPECT_EQ(gemm.outputs[0].dtype, trace::DType::bfloat16);
  EXPECT_EQ(gemm.flops, 2LL * 8192 * 7168 * 5120);
  EXPECT_EQ(gemm.io_bytes, 2LL * (8192 * 5120 + 7168 * 5120 + 8192 * 7168));
}

TEST(Suite, MhaForwardShapesFlopsAndUuids) {
  const Problem& fwd = problem("mha_with_lse_d128");
  EXPECT_EQ(fwd.workload.uuid, "bc38b351-d595-451b-9153-8e225702e53b");
  EXPECT_EQ(fwd.var_axes, (std::vector<std::pair<std::string, std::int64_t>>{{"S", 4096}}));
  EXPECT_EQ(names_of(fwd.outputs), (std::vector<std::string>{"O", "LSE"}));
  EXPECT_EQ(fwd.inputs[0].dims, (Dims{4, 48, 4096, 128}));
  EXPECT_EQ(fwd.outputs[1].dims, (Dims{4, 48, 4096}));
  EXPECT_EQ(fwd.outputs[1].dtype, trace::DType::float32);
  const std::int64_t full = 4LL * 4 * 48 * 4096 * 4096 * 128;
  EXPECT_EQ(fwd.flops, full);
  EXPECT_EQ(problem("mha_with_lse_d128_causal").flops, full / 2);
  EXPECT_EQ(problem("mha_with_lse_d128_causal").workload.uuid,
            "6d2f67a7-225a-4af5-87d3-cbb99b496325");
  EXPECT_EQ(problem("mha_with_lse_d64").flops, full / 2);
  EXPECT_EQ(fwd.io_bytes, 4LL * 4 * 48 * 4096 * 128 * 2 + 4LL * 48 * 4096 * 4);
}

TEST(Suite, MhaBackwardInputsAndFlops) {
  const Problem& bwd = problem("mha_bwd_d128_causal");
  EXPECT_EQ(bwd.workload.uuid, "c119b3f0-c051-5e96-9c2a-2268d992fe1a");
  EXPECT_EQ(problem("mha_bwd_d128").workload.uuid, "38c3b07c-f006-5f5e-9860-ba214c805a6b");
  EXPECT_EQ(problem("mha_bwd_d64").workload.uuid, "d3bcb902-6a13-5ada-9251-fa841b10cd0b");
  EXPECT_EQ(names_of(bwd.inputs), (std::vector<std::string>{"Q", "K", "V", "O", "dO", "L"}));
  EXPECT_EQ(names_of(bwd.outputs), (std::vector<std::string>{"dQ", "dK", "dV"}));
  EXPECT_EQ(bwd.inputs[5].dtype, trace::DType::float32);
  EXPECT_EQ(bwd.baseline, "cuDNN SDPA backward");
  EXPECT_EQ(problem("mha_bwd_d128").flops, 10LL * 4 * 48 * 4096 * 4096 * 128);
  EXPECT_EQ(bwd.flops, 5LL * 4 * 48 * 4096 * 4096 * 128);
}

TEST(Suite, GqaDefinitionsFollowFlashInfer) {
  const Problem& decode = problem("gqa_paged_decode_h24_kv8_d128_ps1");
  EXPECT_EQ(
      names_of(decode.inputs),
      (std::vector<std::string>{"q", "k_cache", "v_cache", "kv_indptr", "kv_indices", "sm_scale"}));
  EXPECT_TRUE(decode.inputs[5].scalar);
  EXPECT_EQ(decode.inputs[4].dtype, trace::DType::int32);
  EXPECT_EQ(decode.inputs[1].dims, (Dims{42784, 1, 8, 128}));
  EXPECT_EQ(decode.outputs[1].dims, (Dims{15, 24}));
  EXPECT_EQ(decode.flops, 4LL * 24 * 128 * 9625);
  const Problem& prefill = problem("gqa_paged_prefill_causal_h24_kv8_d128_ps1");
  EXPECT_EQ(names_of(prefill.inputs),
            (std::vector<std::string>{"q", "k_cache", "v_cache", "qo_indptr", "kv_indptr",
                                      "kv_indices", "sm_scale"}));
  EXPECT_EQ(prefill.flops, 4LL * 24 * 128 * (892LL * 893 / 2));
  const Problem& ragged = problem("gqa_ragged_prefill_causal_h32_kv4_d128");
  EXPECT_EQ(names_of(ragged.inputs),
            (std::vector<std::string>{"q", "k", "v", "qo_indptr", "kv_indptr", "sm_scale"}));
  EXPECT_EQ(ragged.baseline, "FlashInfer");
}

std::vector<std::int32_t> blob_indices(const Problem& p, const std::string& input) {
  for (const auto& [name, spec] : p.workload.inputs)
    if (const auto* blob = std::get_if<trace::SafetensorsInput>(&spec); blob && name == input) {
      auto tensor = read_safetensors_tensor(suite().root() / blob->path, blob->tensor_key);
      EXPECT_TRUE(tensor.has_value()) << (tensor ? "" : tensor.error().message);
      return tensor ? *as_i32(*tensor) : std::vector<std::int32_t>{};
    }
  ADD_FAILURE() << p.name() << " has no blob input " << input;
  return {};
}

void expect_indptr(const std::vector<std::int32_t>& indptr, std::size_t sequences,
                   std::int32_t total) {
  ASSERT_EQ(indptr.size(), sequences + 1);
  EXPECT_EQ(indptr.front(), 0);
  EXPECT_EQ(indptr.back(), total);
  for (std::size_t i = 0; i + 1 < indptr.size(); ++i)
    EXPECT_LT(indptr[i], indptr[i + 1]);
}

void expect_distinct_pages(const std::vector<std::int32_t>& pages, std::size_t count,
                           std::int32_t pool) {
  ASSERT_EQ(pages.size(), count);
  EXPECT_EQ(std::set<std::int32_t>(pages.begin(), pages.end()).size(), count);
  for (std::int32_t page : pages)
    ASSERT_TRUE(page >= 0 && page < pool);
}

TEST(Layouts, RaggedPrefillHas33SequencesOf16294Tokens) {
  const Problem& p = problem("gqa_ragged_prefill_causal_h32_kv4_d128");
  const auto qo = blob_indices(p, "qo_indptr");
  expect_indptr(qo, 33, 16294);
  EXPECT_EQ(blob_indices(p, "kv_indptr"), qo);
  EXPECT_EQ(p.flops, 4LL * 32 * 128 * attended_pairs(qo, qo, Mask::causal));
}

TEST(Layouts, PagedPrefillHasOneSequenceOf892Pages) {
  const Problem& p = problem("gqa_paged_prefill_causal_h24_kv8_d128_ps1");
  expect_indptr(blob_indices(p, "qo_indptr"), 1, 892);
  expect_indptr(blob_indices(p, "kv_indptr"), 1, 892);
  expect_distinct_pages(blob_indices(p, "kv_indices"), 892, 43676);
}

TEST(Layouts, PagedDecodeHas15RequestsOver9625Pages) {
  const Problem& p = problem("gqa_paged_decode_h24_kv8_d128_ps1");
  expect_indptr(blob_indices(p, "kv_indptr"), 15, 9625);
  expect_distinct_pages(blob_indices(p, "kv_indices"), 9625, 42784);
}

TEST(Layouts, BottomRightCausalPairsAreCountedExactly) {
  EXPECT_EQ(attended_pairs({0, 2}, {0, 5}, Mask::causal), 4 + 5);
  EXPECT_EQ(attended_pairs({0, 3}, {0, 3}, Mask::causal), 6);
  EXPECT_EQ(attended_pairs({}, {0, 7, 9}, Mask::none), 9);
  EXPECT_EQ(attended_pairs({0, 5}, {0, 2}, Mask::causal), 0 + 0 + 0 + 1 + 2);
}

TEST(Layouts, SplitTotalIsExactAndRespectsMinimum) {
  for (std::int64_t total : {33, 34, 1000, 16294}) {
    const auto lengths = split_total(total, 33, 1, 99, 1);
    EXPECT_EQ(std::accumulate(lengths.begin(), lengths.end(), std::int64_t{0}), total);
    EXPECT_GE(*std::min_element(lengths.begin(), lengths.end()), 1);
  }
  const auto zeros = split_total(0, 4, 0, 5, 2);
  EXPECT_EQ(zeros, (std::vector<std::int32_t>{0, 0, 0, 0}));
}

TEST(Recipes, BackwardInputsAreSpikyOrFromForward) {
  const Problem& bwd = problem("mha_bwd_d96_causal");
  auto q = recipe_for(bwd.definition, bwd.workload, "Q");
  ASSERT_TRUE(q);
  EXPECT_EQ(q->distribution, Distribution::spiky);
  auto l = recipe_for(bwd.definition, bwd.workload, "L");
  ASSERT_TRUE(l);
  EXPECT_EQ(l->distribution, Distribution::from_forward);
  EXPECT_EQ(l->forward_definition, "mha_with_lse_d96_causal");
  EXPECT_EQ(l->forward_output, "LSE");
  EXPECT_EQ(l->tensor_index, 5u);
  const Problem& gemm = problem("gemm_n7168_k5120");
  EXPECT_EQ(recipe_for(gemm.definition, gemm.workload, "B")->distribution, Distribution::normal);
  const Problem& decode = problem("gqa_paged_decode_h24_kv8_d128_ps1");
  EXPECT_EQ(recipe_for(decode.definition, decode.workload, "kv_indices")->distribution,
            Distribution::blob);
  EXPECT_EQ(recipe_for(decode.definition, decode.workload, "sm_scale")->distribution,
            Distribution::scalar);
  EXPECT_FALSE(recipe_for(decode.definition, decode.workload, "nope"));
}

TEST(Suite, UnknownNameSuggestsTheClosest) {
  auto found = suite().find("gemm_n7168_k512");
  ASSERT_FALSE(found);
  EXPECT_EQ(found.error().kind, util::ErrorKind::not_found);
  EXPECT_EQ(found.error().message,
            "unknown problem 'gemm_n7168_k512'; did you mean 'gemm_n7168_k5120'?");
}

TEST(Suite, ANameThatIsNoTypoGetsNoSuggestion) {
  auto found = suite().find("nosuch");
  ASSERT_FALSE(found);
  EXPECT_EQ(found.error().message, "unknown problem 'nosuch'");
}

TEST(Suite, APrefixOfAKnownNameSuggestsIt) {
  EXPECT_EQ(closest_name("mha_bwd", {"gemm_n7168_k5120", "mha_bwd_d64"}), "mha_bwd_d64");
  EXPECT_EQ(closest_name("gemm_n7168_k5121", {"gemm_n7168_k5120", "mha_bwd_d64"}),
            "gemm_n7168_k5120");
  EXPECT_EQ(closest_name("xyz", {"gemm_n7168_k5120", "mha_bwd_d64"}), "");
  EXPECT_EQ(closest_name("gemm", {}), "");
  // Issue 17 item 14: another case is the same name.
  EXPECT_EQ(closest_name("GEMM_N7168_K5120", {"gemm_n7168_k5120", "mha_bwd_d64"}),
            "gemm_n7168_k5120");
}

std::filesystem::path temp_copy(const std::string& tag) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("ptxbench_suite_" + tag + "_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::copy(suite().root(), dir, std::filesystem::copy_options::recursive);
  return dir;
}

TEST(Suite, MalformedDefinitionErrorNamesTheFile) {
  const auto dir = temp_copy("malformed");
  std::ofstream(dir / "definitions/gemm/gemm_n7168_k5120.json")
      << "{\"name\": \"gemm_n7168_k5120\",";
  auto loaded = Suite::load(dir);
  ASSERT_FALSE(loaded);
  EXPECT_NE(loaded.error().message.find("gemm_n7168_k5120.json"), std::string::npos)
      << loaded.error().message;
  std::filesystem::remove_all(dir);
}

TEST(Suite, RegeneratedBlobsAreByteIdentical) {
  const auto dir = temp_copy("blobs");
  std::filesystem::remove_all(dir / "blob");
  auto written = regenerate_blobs(dir);
  ASSERT_TRUE(written) << written.error().message;
  EXPECT_EQ(written->size(), 3u);
  for (const auto& relative : *written) {
    auto fresh = util::read_file(dir / relative);
    auto committed = util::read_file(suite().root() / relative);
    ASSERT_TRUE(fresh && committed) << relative;
    EXPECT_TRUE(*fresh == *committed) << relative << " differs from the committed blob";
  }
  std::filesystem::remove_all(dir);
}

TEST(Safetensors, RoundTripsAndRejectsTruncation) {
  const std::string bytes =
      encode_safetensors({make_i32_tensor("a", {1, -2, 3}), make_i32_tensor("b", {7})});
  EXPECT_EQ(bytes.size() % 8, (3u * 4 + 4) % 8);
  auto decoded = decode_safetensors(bytes, "mem");
  ASSERT_TRUE(decoded);
  ASSERT_EQ(decoded->size(), 2u);
  EXPECT_EQ(*as_i32((*decoded)[0]), (std::vector<std::int32_t>{1, -2, 3}));
  EXPECT_EQ((*decoded)[1].shape, (std::vector<std::int64_t>{1}));
  auto truncated = decode_safetensors(bytes.substr(0, bytes.size() - 1), "mem");
  ASSERT_FALSE(truncated);
  EXPECT_NE(truncated.error().message.find("mem"), std::string::npos);
}

// A safetensors file whose 8-byte length prefix is followed by `header` and `data`.
std::string safetensors_with_header(const std::string& header, const std::string& data) {
  std::string out(8, '\0');
  for (std::size_t i = 0; i < 8; ++i)
    out[i] = static_cast<char>((header.size() >> (8 * i)) & 0xFF);
  return out + header + data;
}

TEST(Safetensors, AWrongTypedHeaderFieldIsAnErrorNamingItsPath) {
  const std::string data(8, '\0');
  auto offsets = decode_safetensors(
      safetensors_with_header(R"({"x": {"dtype": "I32", "shape": [2], "data_offsets": [0, "8"]}})",
                              data),
      "mem.safetensors");
  ASSERT_FALSE(offsets);
  EXPECT_EQ(offsets.error().kind, util::ErrorKind::invalid_input);
  EXPECT_EQ(
      offsets.error().message,
      "mem.safetensors: $.x.data_offsets[1]: expected a non-negative 64-bit integer, got string");
  auto shape = decode_safetensors(
      safetensors_with_header(R"({"x": {"dtype": "I32", "shape": {}, "data_offsets": [0, 8]}})",
                              data),
      "mem.safetensors");
  ASSERT_FALSE(shape);
  EXPECT_NE(shape.error().message.find("$.x.shape: expected an array"), std::string::npos);
}

} // namespace
} // namespace ptxbench::suite
