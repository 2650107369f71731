// The Triton gate as the C++ side runs it: a real python3 subprocess on the shipped gate.py,
// its JSON findings read back with the offending line quoted. gate.py's own tests
// (python/tests/test_gate.py) cover each rule; these cover the join.
#include "compile/triton_gate.hpp"
#include "definitions.hpp"
#include "util/fs.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <utility>

using namespace ptxbench;
using namespace ptxbench::compile;
using namespace ptxbench::compile::testing;

namespace {

std::string kernel(const std::string& name) {
  auto text =
      util::read_file(std::filesystem::path(PTXBENCH_TEST_DATA) / "compile" / "triton" / name);
  if (!text)
    throw util::Fatal(text.error().message);
  return *text;
}

TritonSignature gemm_signature() {
  auto signature = make_triton_signature(gemm_definition());
  if (!signature)
    throw util::Fatal(signature.error().message);
  return *signature;
}

} // namespace

TEST(TritonGate, ACleanGemmKernelPasses) {
  util::PosixProcessRunner runner;
  TritonGate gate(runner);
  auto report = gate.check(kernel("gemm_clean.py"), gemm_signature());
  ASSERT_TRUE(report) << report.error().message;
  EXPECT_TRUE(report->ok()) << render_text(*report);
}

TEST(TritonGate, ThePackStylePersistentTmaGemmPasses) {
  util::PosixProcessRunner runner;
  TritonGate gate(runner);
  auto report = gate.check(kernel("gemm_persistent_tma.py"), gemm_signature());
  ASSERT_TRUE(report) << report.error().message;
  EXPECT_TRUE(report->ok()) << render_text(*report);
}

TEST(TritonGate, ATorchMatmulIsRejectedWithItsLineQuoted) {
  util::PosixProcessRunner runner;
  TritonGate gate(runner);
  auto report = gate.check(kernel("gemm_torch_matmul.py"), gemm_signature());
  ASSERT_TRUE(report) << report.error().message;
  ASSERT_EQ(report->findings.size(), 1u) << render_text(*report);
  const TritonFinding& finding = report->findings[0];
  EXPECT_EQ(finding.rule, "torch_call");
  EXPECT_EQ(finding.line, 24u);
  EXPECT_EQ(finding.quote, "C.copy_(torch.matmul(A, B.T))");
  EXPECT_NE(render_text(*report).find("line 24: `C.copy_(torch.matmul(A, B.T))`: `torch.matmul"),
            std::string::npos)
      << render_text(*report);
}

TEST(TritonGate, TheGeneratedSignatureIsWhatRunIsCheckedAgainst) {
  util::PosixProcessRunner runner;
  TritonGate gate(runner);
  auto definition = gemm_definition();
  definition.axes[0].name = "rows"; // the var axis is now `rows`, so `run(A, B, C, M)` is wrong
  definition.inputs[0].shape = std::vector<std::string>{"rows", "K"};
  auto signature = make_triton_signature(definition);
  ASSERT_TRUE(signature);
  auto report = gate.check(kernel("gemm_clean.py"), *signature);
  ASSERT_TRUE(report) << report.error().message;
  ASSERT_EQ(report->findings.size(), 1u) << render_text(*report);
  EXPECT_EQ(report->findings[0].rule, "run_signature");
  EXPECT_EQ(report->findings[0].quote, "def run(A, B, C, M):");
  EXPECT_NE(report->findings[0].message.find("`def run(A, B, C, rows)`"), std::string::npos);
}

TEST(TritonGate, AFileThatDoesNotParseGetsOneSyntaxFinding) {
  util::PosixProcessRunner runner;
  TritonGate gate(runner);
  auto report = gate.check("import triton\ndef run(A, B, C, M)\n    pass\n", gemm_signature());
  ASSERT_TRUE(report) << report.error().message;
  ASSERT_EQ(report->findings.size(), 1u);
  EXPECT_EQ(report->findings[0].rule, "syntax_error");
  EXPECT_EQ(report->findings[0].quote, "def run(A, B, C, M)");
}

// Issue 29: torch's matmul through an alias, its dunder method and an ATen overload; each
// fixture (tests/kernels/triton/) is rejected on its line by rules that are all banned_library.
TEST(TritonGate, LibraryCallsInAnyFormAreRejectedByLibraryRules) {
  util::PosixProcessRunner runner;
  TritonGate gate(runner);
  for (const auto& [name, line] :
       {std::pair{"alias_matmul.py", 19u}, std::pair{"dunder_matmul.py", 18u},
        std::pair{"aten_overload.py", 18u}}) {
    auto text = util::read_file(std::filesystem::path(PTXBENCH_TEST_KERNELS) / "triton" / name);
    ASSERT_TRUE(text) << name;
    auto report = gate.check(*text, gemm_signature());
    ASSERT_TRUE(report) << name << ": " << report.error().message;
    ASSERT_FALSE(report->ok()) << name;
    for (const TritonFinding& finding : report->findings)
      EXPECT_TRUE(triton_library_rule(finding.rule)) << name << ": " << finding.rule;
    EXPECT_NE(render_text(*report).find(fmt::format("line {}: `", line)), std::string::npos)
        << name << ": " << render_text(*report);
  }
  EXPECT_TRUE(triton_library_rule("dynamic_access"));
  EXPECT_FALSE(triton_library_rule("too_deep"));
  EXPECT_FALSE(triton_library_rule("syntax_error"));
}

TEST(TritonGate, AMissingInterpreterIsAnErrorNotAPass) {
  util::PosixProcessRunner runner;
  TritonGate gate(runner, "/nonexistent/python3");
  auto report = gate.check(kernel("gemm_clean.py"), gemm_signature());
  ASSERT_FALSE(report);
  EXPECT_EQ(report.error().kind, util::ErrorKind::subprocess);
}

TEST(TritonGate, OutputThatIsNotTheGatesJsonIsAnError) {
  EXPECT_FALSE(parse_gate_output("not json", ""));
  EXPECT_FALSE(parse_gate_output(R"({"findings": [{"rule": 3}]})", ""));
  auto ok = parse_gate_output(R"({"findings": [{"rule": "missing_run", "line": 0, "col": 0,
      "message": "no top-level `def run(...)`"}]})",
                              "x = 1\n");
  ASSERT_TRUE(ok) << ok.error().message;
  EXPECT_EQ(render_text(*ok), "no top-level `def run(...)` [missing_run]\n");
}

TEST(TritonGate, AWrongTypedFindingFieldIsAnErrorNamingItsPath) {
  auto col = parse_gate_output(
      R"({"findings": [{"rule": "a", "message": "m", "line": 1}, {"rule": "b", "message": "m",
      "line": 2, "col": "3"}]})",
      "x = 1\ny = 2\n");
  ASSERT_FALSE(col);
  EXPECT_EQ(col.error().kind, util::ErrorKind::subprocess);
  EXPECT_EQ(col.error().message,
            "the Triton gate answered with a malformed finding: gate.py output: $.findings[1].col: "
            "expected a non-negative 64-bit integer, got string");
}
