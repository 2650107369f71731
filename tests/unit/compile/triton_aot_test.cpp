// The Triton AOT compile as the C++ side runs it: aot.py's JSON read back (each stage to its
// outcome, Triton missing as not_found, anything else as a subprocess error), the spec it is
// given, and one real compile of the persistent TMA fixture into cubins. aot.py's own tests
// (python/tests/test_aot.py) cover the stand-ins and the failure stages.
#include "compile/triton_aot.hpp"
#include "util/fs.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

using namespace ptxbench;
using namespace ptxbench::compile;

namespace {

std::string triton_fixture(const std::string& name) {
  auto text =
      util::read_file(std::filesystem::path(PTXBENCH_TEST_DATA) / "compile" / "triton" / name);
  if (!text)
    throw util::Fatal(text.error().message);
  return *text;
}

std::vector<TritonAotArg> gemm_args(std::int64_t m) {
  return {{"A", trace::DType::bfloat16, {m, 5120}, std::int64_t{0}},
          {"B", trace::DType::bfloat16, {7168, 5120}, std::int64_t{0}},
          {"C", trace::DType::bfloat16, {m, 7168}, std::int64_t{0}},
          {"M", std::nullopt, {}, m}};
}

} // namespace

TEST(TritonAotOutput, ALaunchIsReadWithItsCubinGridAndConstexprs) {
  auto result = parse_aot_output(
      R"({"ok": true, "triton": "3.6.0", "launches": [{"kernel": "k", "function": "k",
          "cubin": "/tmp/x/00_k.cubin", "grid": [132], "num_warps": 8, "num_stages": 4,
          "shared_bytes": 1024, "constexprs": {"BM": 128},
          "autotune": {"configs": 3, "config": "BM: 128"}}]})");
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ(result->outcome, TritonAotOutcome::ok);
  EXPECT_EQ(result->triton_version, "3.6.0");
  ASSERT_EQ(result->launches.size(), 1u);
  const auto& launch = result->launches[0];
  EXPECT_EQ(launch.grid, std::vector<std::int64_t>{132});
  EXPECT_EQ(launch.num_warps, 8);
  EXPECT_EQ(launch.constexprs["BM"], 128);
  EXPECT_EQ(launch.autotune, "first of 3 configurations: BM: 128");
  EXPECT_EQ(result->cubins(), std::vector<std::filesystem::path>{"/tmp/x/00_k.cubin"});
}

TEST(TritonAotOutput, EachFailureStageHasItsOutcome) {
  const std::pair<const char*, TritonAotOutcome> cases[] = {
      {"import", TritonAotOutcome::import_error},
      {"run", TritonAotOutcome::cannot_specialise},
      {"no_launch", TritonAotOutcome::cannot_specialise},
      {"compile", TritonAotOutcome::compile_error}};
  for (const auto& [stage, outcome] : cases) {
    auto result =
        parse_aot_output(fmt::format(R"({{"ok": false, "stage": "{}", "message": "why"}})", stage));
    ASSERT_TRUE(result) << stage;
    EXPECT_EQ(result->outcome, outcome) << stage;
    EXPECT_EQ(result->message, "why");
  }
}

TEST(TritonAotOutput, MissingTritonIsNotFoundAndSaysHowToInstallIt) {
  auto result = parse_aot_output(
      R"({"ok": false, "stage": "triton_missing", "message": "cannot import triton: x"})");
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().kind, util::ErrorKind::not_found);
  EXPECT_NE(result.error().message.find("scripts/setup.sh"), std::string::npos);
}

TEST(TritonAotOutput, OutputThatIsNotItsJsonIsASubprocessError) {
  for (const char* bad : {"", "Traceback (most recent call last):", R"({"ok": true})",
                          R"({"ok": true, "launches": [{"kernel": 1}]})",
                          R"({"ok": false, "stage": "spec", "message": "m"})",
                          // Fields of the wrong type (the candidate's own print can stand in
                          // for aot.py's line): an error, never an exception.
                          R"({"ok": false, "stage": 5})",
                          R"({"ok": true, "launches": [{"kernel": "k", "function": "k",
                              "cubin": "c", "num_warps": "eight"}]})",
                          R"({"ok": true, "launches": [{"kernel": "k", "function": "k",
                              "cubin": "c", "autotune": {"configs": "3"}}]})",
                          R"({"ok": true, "launches": [{"kernel": "k", "function": "k",
                              "cubin": "c", "grid": ["x"]}]})"}) {
    auto result = parse_aot_output(bad);
    ASSERT_FALSE(result) << bad;
    EXPECT_EQ(result.error().kind, util::ErrorKind::subprocess) << bad;
  }
}

TEST(TritonAotOutput, AWrongTypedOkOrLaunchListNamesItsPath) {
  auto ok = parse_aot_output(R"({"ok": "yes"})");
  ASSERT_FALSE(ok);
  EXPECT_NE(ok.error().message.find("aot.py output: $.ok: expected a boolean, got string"),
            std::string::npos)
      << ok.error().message;
  auto launches = parse_aot_output(R"({"ok": true, "launches": {"kernel": "k"}})");
  ASSERT_FALSE(launches);
  EXPECT_NE(launches.error().message.find("$.launches: expected an array, got object"),
            std::string::npos)
      << launches.error().message;
}

TEST(TritonAotSpec, TensorsCarryDtypeAndDimsAndNumbersTheirValue) {
  const auto spec = make_aot_spec(Arch::sm_100a, gemm_args(256));
  EXPECT_EQ(spec["arch"], "sm_100a");
  ASSERT_EQ(spec["params"].size(), 4u);
  EXPECT_EQ(spec["params"][0]["kind"], "tensor");
  EXPECT_EQ(spec["params"][0]["dtype"], "bfloat16");
  EXPECT_EQ(spec["params"][2]["shape"], nlohmann::json::parse("[256, 7168]"));
  EXPECT_EQ(spec["params"][3]["kind"], "scalar");
  EXPECT_EQ(spec["params"][3]["value"], 256);
}

TEST(TritonAotCompiler, ThePersistentTmaGemmBuildsOneSm90aCubin) {
  util::PosixProcessRunner runner;
  TritonAotCompiler compiler(runner);
  auto folder = util::TempFolder::make("ptxbench-aot", "the Triton AOT compile");
  ASSERT_TRUE(folder);
  auto result = compiler.compile(triton_fixture("gemm_persistent_tma.py"), gemm_args(4096),
                                 Arch::sm_90a, *folder);
  ASSERT_TRUE(result) << result.error().message;
  ASSERT_EQ(result->outcome, TritonAotOutcome::ok) << result->message;
  ASSERT_EQ(result->launches.size(), 1u);
  EXPECT_EQ(result->launches[0].kernel, "gemm_persistent");
  auto cubin = util::read_file(result->launches[0].cubin);
  ASSERT_TRUE(cubin);
  EXPECT_EQ(cubin->substr(0, 4), "\x7f"
                                 "ELF");
  const auto path = folder->path();
  { auto moved = std::move(*folder); }
  EXPECT_FALSE(std::filesystem::exists(path)) << "the folder outlives its owner";
}

TEST(TritonAotCompiler, AnInterpreterThatCannotRunIsAnError) {
  util::PosixProcessRunner runner;
  TritonAotCompiler compiler(runner, "/nonexistent/python3");
  auto folder = util::TempFolder::make("ptxbench-aot", "the Triton AOT compile");
  ASSERT_TRUE(folder);
  auto result =
      compiler.compile("def run(A, B, C, M): pass\n", gemm_args(128), Arch::sm_90a, *folder);
  EXPECT_FALSE(result);
}
