// The binding of a Triton candidate's `run` parameters (frontend/triton/binding.hpp) that the
// `load` request carries to the Python child.
#include "frontend/triton/binding.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace ptxbench::frontend {
namespace {

trace::Definition gemm_definition() {
  trace::Definition d;
  d.name = "gemm_scaled";
  d.axes = {{"M", trace::Axis::Kind::variable, 0, {}},
            {"N", trace::Axis::Kind::constant, 64, {}},
            {"K", trace::Axis::Kind::constant, 32, {}}};
  d.inputs = {{"A", std::vector<std::string>{"M", "K"}, trace::DType::bfloat16, {}},
              {"alpha", std::nullopt, trace::DType::float32, {}},
              {"B", std::vector<std::string>{"N", "K"}, trace::DType::bfloat16, {}}};
  d.outputs = {{"C", std::vector<std::string>{"M", "N"}, trace::DType::float32, {}}};
  return d;
}

TEST(TritonBinding, ParametersComeInRunsOrderWithWorkloadShapesAndIndices) {
  auto text = triton_binding(gemm_definition(), {4096});
  ASSERT_TRUE(text) << text.error().message;
  const auto j = nlohmann::json::parse(*text);
  EXPECT_EQ(j["params"], nlohmann::json({"A", "alpha", "B", "C", "M"}));
  const auto& args = j["args"];
  ASSERT_EQ(args.size(), 5u);
  EXPECT_EQ(args[0],
            nlohmann::json(
                {{"kind", "tensor"}, {"index", 0}, {"shape", {4096, 32}}, {"dtype", "bfloat16"}}));
  EXPECT_EQ(args[1], nlohmann::json({{"kind", "scalar"}, {"index", 0}, {"dtype", "float32"}}));
  EXPECT_EQ(args[2]["index"], 1);
  EXPECT_EQ(args[3]["index"], 2);
  EXPECT_EQ(args[3]["shape"], nlohmann::json({4096, 64}));
  EXPECT_EQ(args[4], nlohmann::json({{"kind", "axis"}, {"index", 0}}));
}

TEST(TritonBinding, AMissingAxisValueOrAnUnknownDimensionIsInvalidInput) {
  EXPECT_FALSE(triton_binding(gemm_definition(), {}));
  auto definition = gemm_definition();
  definition.inputs[0].shape = std::vector<std::string>{"Q", "K"};
  auto bad = triton_binding(definition, {8});
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("`Q`"), std::string::npos);
  definition.inputs[0].shape = std::vector<std::string>{"8", "K"};
  EXPECT_TRUE(triton_binding(definition, {8}));
}

} // namespace
} // namespace ptxbench::frontend
