// The Triton candidate signature: generated from the definition in DPS order, shown verbatim
// in prompts; one golden file per shipped problem (tests/data/compile/triton_signature/<name>.txt).
#include "compile/triton_abi.hpp"
#include "definitions.hpp"
#include "support/golden.hpp"
#include "trace/json_io.hpp"
#include "util/paths.hpp"

#include <algorithm>
#include <filesystem>
#include <gtest/gtest.h>

using namespace ptxbench;
using namespace ptxbench::compile;
using namespace ptxbench::compile::testing;

TEST(TritonSignature, InputsThenOutputsThenVariableAxesWithoutAStream) {
  auto signature = make_triton_signature(attention_definition());
  ASSERT_TRUE(signature) << signature.error().message;
  EXPECT_EQ(signature->one_line(), "def run(q, k, v, sm_scale, seq_lens, o, lse, batch, seq)");
  EXPECT_EQ(signature->params()[3].role, ParamRole::scalar_input);
  EXPECT_EQ(signature->params()[3].note, "float (float32), input");
  EXPECT_EQ(signature->params()[6].note,
            "torch.Tensor torch.float32 [batch, seq, 32], output, preallocated: write every "
            "element");
}

TEST(TritonSignature, PrettyFormIsOneCommentedParameterALine) {
  auto signature = make_triton_signature(gemm_definition());
  ASSERT_TRUE(signature) << signature.error().message;
  EXPECT_EQ(signature->pretty(),
            "def run(\n"
            "    A,  # torch.Tensor torch.bfloat16 [M, 5120], input, read-only\n"
            "    B,  # torch.Tensor torch.bfloat16 [7168, 5120], input, read-only\n"
            "    C,  # torch.Tensor torch.bfloat16 [M, 7168], output, preallocated: write every "
            "element\n"
            "    M,  # int, variable axis\n"
            ") -> None: ...");
}

TEST(TritonSignature, PythonKeywordsAndTheModuleNamesAreRefusedAsParameterNames) {
  for (const char* name : {"lambda", "torch", "triton", "1x", "a-b"}) {
    auto definition = gemm_definition();
    definition.inputs[0].name = name;
    auto signature = make_triton_signature(definition);
    ASSERT_FALSE(signature) << name;
    EXPECT_EQ(signature.error().kind, util::ErrorKind::invalid_input);
    EXPECT_NE(signature.error().message.find("cannot be a Python parameter name"),
              std::string::npos);
  }
  auto definition = gemm_definition();
  definition.outputs[0].name = "M";
  auto duplicate = make_triton_signature(definition);
  ASSERT_FALSE(duplicate);
  EXPECT_NE(duplicate.error().message.find("two `run` parameters are named 'M'"),
            std::string::npos);
}

TEST(TritonSignature, EveryShippedProblemMatchesItsGoldenSignature) {
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(
           util::data_root() / "problems" / "definitions"))
    if (entry.path().extension() == ".json")
      files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  ASSERT_GE(files.size(), 16u);
  for (const auto& file : files) {
    auto definition = trace::load_definition(file);
    ASSERT_TRUE(definition) << definition.error().message;
    auto signature = make_triton_signature(*definition);
    ASSERT_TRUE(signature) << signature.error().message;
    ptxbench::test_support::expect_golden("compile/triton_signature/" + definition->name + ".txt",
                                          signature->pretty() + "\n");
  }
}
