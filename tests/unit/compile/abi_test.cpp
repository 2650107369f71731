#include "compile/abi.hpp"
#include "definitions.hpp"
#include "util/fs.hpp"

#include <gtest/gtest.h>

using namespace ptxbench;
using namespace ptxbench::compile;
using namespace ptxbench::compile::testing;

TEST(Abi, GemmSignatureIsInputsOutputsVarAxesThenStream) {
  auto signature = make_signature(gemm_definition());
  ASSERT_TRUE(signature) << signature.error().message;
  EXPECT_EQ(signature->one_line(), "void run(const __nv_bfloat16* A, const __nv_bfloat16* B, "
                                   "__nv_bfloat16* C, int64_t M, cudaStream_t stream)");
}

TEST(Abi, PrettyFormWrapsLikeTheAbiDocument) {
  auto signature = make_signature(gemm_definition());
  ASSERT_TRUE(signature);
  EXPECT_EQ(
      signature->pretty(),
      "void run(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int64_t M,\n"
      "         cudaStream_t stream);");
  EXPECT_EQ(signature->pretty(40), "void run(const __nv_bfloat16* A,\n"
                                   "         const __nv_bfloat16* B,\n"
                                   "         __nv_bfloat16* C, int64_t M,\n"
                                   "         cudaStream_t stream);");
}

TEST(Abi, ScalarInputsPassByValueInDefinitionOrder) {
  auto signature = make_signature(attention_definition());
  ASSERT_TRUE(signature) << signature.error().message;
  EXPECT_EQ(signature->one_line(),
            "void run(const __nv_bfloat16* q, const __nv_bfloat16* k, const __nv_bfloat16* v, "
            "float sm_scale, const int32_t* seq_lens, __nv_bfloat16* o, float* lse, "
            "int64_t batch, int64_t seq, cudaStream_t stream)");
  EXPECT_EQ(signature->count(ParamRole::tensor_input), 4u);
  EXPECT_EQ(signature->count(ParamRole::scalar_input), 1u);
  EXPECT_EQ(signature->count(ParamRole::var_axis), 2u);
}

TEST(Abi, HeadersFollowTheTypesUsedCudaRuntimeFirst) {
  auto signature = make_signature(attention_definition());
  ASSERT_TRUE(signature);
  EXPECT_EQ(signature->headers(),
            (std::vector<std::string>{"cuda_runtime.h", "cuda_bf16.h", "cstdint"}));
}

TEST(Abi, EveryDTypeHasTheDocumentedCType) {
  EXPECT_EQ(c_type(DType::float32).spelling, "float");
  EXPECT_EQ(c_type(DType::float16).header, "cuda_fp16.h");
  EXPECT_EQ(c_type(DType::float8_e4m3fn).spelling, "__nv_fp8_e4m3");
  EXPECT_EQ(c_type(DType::float8_e5m2).spelling, "__nv_fp8_e5m2");
  EXPECT_EQ(c_type(DType::float4_e2m1).spelling, "__nv_fp4x2_e2m1");
  EXPECT_EQ(c_type(DType::float4_e2m1).header, "cuda_fp4.h");
  EXPECT_EQ(c_type(DType::int16).spelling, "int16_t");
  EXPECT_EQ(c_type(DType::boolean).spelling, "bool");
}

TEST(Abi, NamesThatCannotBeParametersAreInvalidInput) {
  for (std::string bad : {"stream", "float", "1x", "a-b", ""}) {
    trace::Definition d = axpy_definition();
    d.inputs[0].name = bad;
    auto signature = make_signature(d);
    ASSERT_FALSE(signature) << bad;
    EXPECT_EQ(signature.error().kind, util::ErrorKind::invalid_input);
  }
}

TEST(Abi, ShimExportsBothSymbolsAndCallsRunWithTypedArguments) {
  auto signature = make_signature(attention_definition());
  ASSERT_TRUE(signature);
  std::string shim = shim_source(*signature);
  EXPECT_NE(shim.find(signature->one_line() + ";"), std::string::npos);
  EXPECT_NE(shim.find("extern \"C\" __attribute__((visibility(\"default\"))) int "
                      "ptxbench_invoke(const PtxbenchCall* call)"),
            std::string::npos);
  EXPECT_NE(shim.find("const char* ptxbench_abi_signature()"), std::string::npos);
  EXPECT_NE(shim.find("return \"" + signature->one_line() + "\";"), std::string::npos);
  EXPECT_NE(shim.find("static_cast<const int32_t*>(call->buffers[3])"), std::string::npos);
  EXPECT_NE(shim.find("static_cast<float*>(call->buffers[5])"), std::string::npos);
  EXPECT_NE(shim.find("call->scalars[0].f32"), std::string::npos);
  EXPECT_NE(shim.find("call->var_axes[1]"), std::string::npos);
  EXPECT_NE(shim.find("call->num_buffers != 6u"), std::string::npos);
}

TEST(Abi, ShimReadsNarrowFloatScalarsFromRawBitsAndBoolFromAByte) {
  trace::Definition d = axpy_definition();
  d.inputs.push_back(scalar("half_scale", DType::float16));
  d.inputs.push_back(scalar("flag", DType::boolean));
  auto signature = make_signature(d);
  ASSERT_TRUE(signature);
  std::string shim = shim_source(*signature);
  EXPECT_NE(shim.find("ptxbench_from_bits<__half>(call->scalars[1].u16)"), std::string::npos);
  EXPECT_NE(shim.find("call->scalars[2].u8 != 0"), std::string::npos);
}

TEST(Abi, EmbeddedCallHeaderIsTheHeaderFile) {
  auto header =
      util::read_file(std::string(PTXBENCH_TEST_DATA) + "/../../src/compile/ptxbench_call.h");
  ASSERT_TRUE(header);
  EXPECT_EQ(ptxbench_call_header(), *header);
  auto signature = make_signature(gemm_definition());
  ASSERT_TRUE(signature);
  EXPECT_NE(shim_source(*signature).find(*header), std::string::npos);
}
