#include "compile/gate.hpp"
#include "compile/source_text.hpp"

#include <gtest/gtest.h>

using namespace ptxbench;
using namespace ptxbench::compile;

namespace {

constexpr std::string_view kCublasMessage =
    "ERROR: Your kernel uses cuBLAS library calls instead of a hand-written kernel. Please "
    "implement the kernel using CUDA directly — cuBLAS, cuDNN, and other library shortcuts are "
    "not allowed.";

std::optional<BannedLibrary> banned(std::string_view source) {
  auto use = find_banned_library(source);
  return use ? std::optional(use->library) : std::nullopt;
}

} // namespace

TEST(Gate, CublasIncludeIsRejectedWithThePapersMessageAndLine) {
  auto status = check_banned_libraries("#include <cuda_runtime.h>\n#include <cublas_v2.h>\n");
  ASSERT_FALSE(status);
  EXPECT_EQ(status.error().kind, util::ErrorKind::banned_library);
  EXPECT_EQ(status.error().message.substr(0, kCublasMessage.size()), kCublasMessage);
  EXPECT_NE(status.error().message.find("line 2: #include <cublas_v2.h>"), std::string::npos);
}

TEST(Gate, QuotedAndSpacedCublasIncludesAreRejected) {
  EXPECT_EQ(banned("  #  include \"cublas_v2.h\"\n"), BannedLibrary::cublas);
  EXPECT_EQ(banned("#include /* hidden */ <cublasLt.h>\n"), BannedLibrary::cublas);
  EXPECT_EQ(banned("#include <cublas_api.h>\n"), BannedLibrary::cublas);
}

TEST(Gate, CublasCallIsRejected) {
  auto use = find_banned_library("void run() {\n  int x = 0;\n  cublasSgemm (h, x);\n}\n");
  ASSERT_TRUE(use);
  EXPECT_EQ(use->library, BannedLibrary::cublas);
  EXPECT_EQ(use->line, 3u);
  EXPECT_EQ(use->excerpt, "cublasSgemm (h, x);");
  EXPECT_EQ(use->message(), kCublasMessage);
}

TEST(Gate, CublasHandleTypeAndLtIdentifiersAreRejected) {
  EXPECT_EQ(banned("static cublasHandle_t handle;\n"), BannedLibrary::cublas);
  EXPECT_EQ(banned("cublasLtMatmulDesc_t desc;\n"), BannedLibrary::cublas);
  EXPECT_EQ(banned("CUBLASCREATE(&h);\n"), BannedLibrary::cublas);
}

TEST(Gate, AnyCudnnIdentifierOrIncludeIsRejected) {
  EXPECT_EQ(banned("#include <cudnn.h>\n"), BannedLibrary::cudnn);
  EXPECT_EQ(banned("cudnnHandle_t h;\n"), BannedLibrary::cudnn);
  EXPECT_EQ(banned("auto f = my_cudnn_wrapper;\n"), BannedLibrary::cudnn);
  auto use = find_banned_library("cudnnCreate(&h);");
  ASSERT_TRUE(use);
  EXPECT_NE(use->message().find("uses cuDNN library calls"), std::string::npos);
}

TEST(Gate, DlopenAndDlsymAreRejected) {
  EXPECT_EQ(banned("void* lib = dlopen(\"libfoo.so\", RTLD_NOW);\n"),
            BannedLibrary::dynamic_loading);
  EXPECT_EQ(banned("auto fn = dlsym(RTLD_DEFAULT, name);\n"), BannedLibrary::dynamic_loading);
  auto use = find_banned_library("x = dlsym(h, n);");
  ASSERT_TRUE(use);
  EXPECT_NE(use->message().find("dlopen/dlsym"), std::string::npos);
}

TEST(Gate, CutlassAndCuteIncludesAreRejected) {
  EXPECT_EQ(banned("#include <cutlass/gemm/device/gemm.h>\n"), BannedLibrary::cutlass);
  EXPECT_EQ(banned("#include \"cute/tensor.hpp\"\n"), BannedLibrary::cutlass);
  auto use = find_banned_library("#include <cute/atom/mma_atom.hpp>");
  ASSERT_TRUE(use);
  EXPECT_NE(use->message().find("uses CUTLASS/CuTe library calls"), std::string::npos);
}

TEST(Gate, MentionsInCommentsPass) {
  EXPECT_FALSE(banned("// unlike cublasSgemm(h, ...) this is hand-written\n"
                      "/* no cudnn, no #include <cublas_v2.h>,\n   no dlopen( */\n"
                      "// #include <cutlass/gemm.h>\n"
                      "__global__ void k() {}\n"));
}

// Decision (gate.cpp): a string cannot call a library, so names inside literals pass.
TEST(Gate, LibraryNamesInsideStringLiteralsPass) {
  EXPECT_FALSE(banned("printf(\"faster than cublasSgemm(): %f, no cudnn\\n\", t);\n"));
  EXPECT_FALSE(banned("const char* s = R\"x(cublasCreate( cudnn )x\";\n"));
  EXPECT_FALSE(banned("char c = '\"'; const char* s = \"cudnn\";\n"));
}

TEST(Gate, SlashesInsideStringsDoNotStartComments) {
  auto use = find_banned_library("const char* url = \"http://x\"; cublasCreate(&h);\n");
  ASSERT_TRUE(use);
  EXPECT_EQ(use->library, BannedLibrary::cublas);
}

TEST(Gate, FirstHitInSourceOrderIsReported) {
  auto use = find_banned_library("int a;\ncudnnCreate(&d);\n#include <cublas_v2.h>\n");
  ASSERT_TRUE(use);
  EXPECT_EQ(use->library, BannedLibrary::cudnn);
  EXPECT_EQ(use->line, 2u);
}

TEST(Gate, HandWrittenKernelPasses) {
  EXPECT_TRUE(check_banned_libraries("#include <cuda_runtime.h>\n"
                                     "__global__ void gemm_kernel(float* c) { c[0] = 1; }\n"
                                     "void run(float* c, cudaStream_t s) {\n"
                                     "  int cublas_tiles = 4; (void)cublas_tiles;\n"
                                     "  gemm_kernel<<<1, 1, 0, s>>>(c);\n}\n"));
}

// As in the original: any identifier starting with "cublas" and followed by `(` counts as a
// call, so a hand-written function named that way is rejected too (the message names the line).
TEST(Gate, OwnFunctionNamedLikeCublasIsRejectedAsInTheOriginal) {
  auto use = find_banned_library("__global__ void cublas_like_gemm(float* c) {}\n");
  ASSERT_TRUE(use);
  EXPECT_EQ(use->library, BannedLibrary::cublas);
}

TEST(SourceText, StripCommentsKeepsLengthNewlinesAndLiterals) {
  std::string source = "a /* b\nc */ d // e \"f\"\n\"// g\" 'h' 1'000 u8R\"q(/*)q\"";
  std::string stripped = strip_comments(source);
  ASSERT_EQ(stripped.size(), source.size());
  EXPECT_EQ(stripped, "a     \n     d         \n\"// g\" 'h' 1'000 u8R\"q(/*)q\"");
  EXPECT_EQ(strip_comments(source, Literals::blank),
            "a     \n     d         \n\"    \" ' ' 1'000 u8R\"      \"");
}

TEST(SourceText, UnterminatedCommentRunsToTheEnd) {
  EXPECT_EQ(strip_comments("x /* y\nz"), "x     \n ");
  EXPECT_EQ(strip_comments("x // y \\\n z\nw"), "x       \n  \nw");
}
