#include "compile/cache.hpp"
#include "compile/nvcc_log.hpp"
#include "util/fs.hpp"

#include <gtest/gtest.h>

using namespace ptxbench;
using namespace ptxbench::compile;

TEST(NvccLog, PtxasInfoGivesOneRecordPerEntryFunction) {
  auto log = util::read_file(std::string(PTXBENCH_TEST_DATA) + "/compile/ptxas_sample.log");
  ASSERT_TRUE(log);
  auto kernels = parse_ptxas_info(*log);
  ASSERT_EQ(kernels.size(), 2u);
  EXPECT_EQ(kernels[0].mangled_name, "_ZN1k2tkILi64EEEvPf");
  EXPECT_EQ(kernels[0].demangled_name, "void k::tk<64>(float*)");
  EXPECT_EQ(kernels[0].arch, "sm_90a");
  EXPECT_EQ(kernels[0].registers, 10);
  EXPECT_EQ(kernels[0].barriers, 1);
  EXPECT_EQ(kernels[0].smem_bytes, 256);
  EXPECT_EQ(kernels[0].stack_frame_bytes, 0);

  EXPECT_EQ(kernels[1].demangled_name, "add_one(float*, long)");
  EXPECT_EQ(kernels[1].arch, "sm_100a");
  EXPECT_EQ(kernels[1].registers, 255);
  EXPECT_EQ(kernels[1].stack_frame_bytes, 40);
  EXPECT_EQ(kernels[1].spill_store_bytes, 36);
  EXPECT_EQ(kernels[1].spill_load_bytes, 28);
  EXPECT_EQ(kernels[1].cmem_bytes, 388);
  EXPECT_EQ(kernels[1].smem_bytes, 0);
}

TEST(NvccLog, KernelRecordsRoundTripThroughJson) {
  std::vector<KernelResources> kernels{{"_Z1kv", "k()", "sm_90a", 32, 1, 8, 4, 4, 1024, 380}};
  auto back = kernels_from_json(util::Json::parse(to_json(kernels).dump()), "ptxas.json");
  ASSERT_TRUE(back) << back.error().message;
  ASSERT_EQ(back->size(), 1u);
  EXPECT_EQ((*back)[0].demangled_name, "k()");
  EXPECT_EQ((*back)[0].cmem_bytes, 380);
  EXPECT_EQ((*back)[0].spill_store_bytes, 4);
}

TEST(NvccLog, AWrongTypedKernelRecordFieldIsAnErrorNamingItsPath) {
  util::Json records =
      util::Json::parse(to_json({{"_Z1kv", "k()", "sm_90a", 32, 1, 8, 4, 4, 1024, 380}}).dump());
  records[0]["registers"] = "32";
  auto back = kernels_from_json(records, "entry/ptxas.json");
  ASSERT_FALSE(back);
  EXPECT_EQ(back.error().kind, util::ErrorKind::invalid_input);
  EXPECT_EQ(back.error().message, "entry/ptxas.json: $[0].registers: expected an integer in "
                                  "[-2147483648, 2147483647], got string");
}

TEST(CompileCacheEntry, ResultJsonRoundTripsAndAWrongTypedFieldNamesItsPath) {
  CompileResult result;
  result.ok = false;
  result.diagnostic = "Compilation failed:\nx";
  result.first_errors = {"x"};
  result.compile_time = std::chrono::milliseconds(1234);
  auto back = parse_cache_result(cache_result_json(result).dump(), "result.json");
  ASSERT_TRUE(back) << back.error().message;
  EXPECT_EQ(back->diagnostic, result.diagnostic);
  EXPECT_EQ(back->first_errors, result.first_errors);
  EXPECT_EQ(back->compile_time, result.compile_time);

  util::Json wrong = cache_result_json(result);
  wrong["first_errors"] = util::Json::array({"x", 7});
  auto refused = parse_cache_result(wrong.dump(), "cache/ab/result.json");
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().kind, util::ErrorKind::invalid_input);
  EXPECT_EQ(refused.error().message,
            "cache/ab/result.json: $.first_errors[1]: expected a string, got integer");
  wrong = cache_result_json(result);
  wrong["format"] = 2;
  EXPECT_FALSE(parse_cache_result(wrong.dump(), "result.json"));
}

TEST(NvccLog, NamesThatDoNotDemangleAreKept) {
  EXPECT_EQ(demangle("plain_c_kernel"), "plain_c_kernel");
  EXPECT_EQ(demangle("_Z3fooi"), "foo(int)");
}

TEST(NvccLog, FirstErrorsKeepContextAndSkipSummaries) {
  std::string log =
      "kernel.cu(4): warning #177-D: variable \"z\" was declared but never referenced\n"
      "kernel.cu(7): error: expected a \";\"\n"
      "    if (i < n) y[i] = 1;\n"
      "    ^\n"
      "\n"
      "1 error detected in the compilation of \"kernel.cu\".\n"
      "ptxas error   : Entry function '_Z1kPf' uses too much shared data\n"
      "/usr/bin/ld: /tmp/tmpxft_1-18_shim.o: in function `ptxbench_invoke':\n"
      "tmpxft_1.cudafe1.cpp:(.text+0x1d): undefined reference to `run(int)'\n"
      "collect2: error: ld returned 1 exit status\n";
  auto errors = first_errors(log);
  ASSERT_EQ(errors.size(), 3u);
  EXPECT_EQ(errors[0], "kernel.cu(7): error: expected a \";\"\n    if (i < n) y[i] = 1;\n    ^");
  EXPECT_EQ(errors[1], "ptxas error   : Entry function '_Z1kPf' uses too much shared data");
  EXPECT_EQ(errors[2], "undefined reference to `run(int)'");
  EXPECT_EQ(first_errors(log, 1).size(), 1u);
}

TEST(NvccLog, PtxasErrorsInTheGeneratedPtxAreListedOnceEachWithoutTheTemporaryFile) {
  // nvcc 13.0 assembling Hopper wgmma for sm_100a (tests/kernels/sm90_wgmma_tma_gemm.cu).
  const std::string ptx = "ptxas /root/.cache/ptxbench/compile/.staging/build-Div2Jp/"
                          "tmpxft_00002ce3_00000000-6_kernel.ptx, ";
  std::string log =
      ptx + "line 349; error   : Instruction 'wgmma.fence' not supported on .target 'sm_100a'\n" +
      ptx +
      "line 349; error   : Instruction 'wgmma.fence' cannot be compiled for architecture "
      "'sm_100a'\n" +
      ptx +
      "line 374; error   : Instruction 'wgmma.mma_async with floating point types' not "
      "supported on .target 'sm_100a'\n" +
      ptx +
      "line 401; error   : Instruction 'wgmma.mma_async with floating point types' not "
      "supported on .target 'sm_100a'\n" +
      ptx +
      "line 12; warning : an unused warning\n"
      "ptxas fatal   : Ptx assembly aborted due to errors\n";
  auto errors = first_errors(log);
  ASSERT_EQ(errors.size(), 3u);
  EXPECT_EQ(errors[0],
            "ptxas error   : Instruction 'wgmma.fence' not supported on .target 'sm_100a'");
  EXPECT_EQ(errors[1], "ptxas error   : Instruction 'wgmma.fence' cannot be compiled for "
                       "architecture 'sm_100a'");
  EXPECT_EQ(errors[2], "ptxas error   : Instruction 'wgmma.mma_async with floating point types' "
                       "not supported on .target 'sm_100a'");
  EXPECT_EQ(first_errors(ptx + "line 3; fatal   : Parsing error near 'x': syntax error\n"),
            std::vector<std::string>{"ptxas fatal   : Parsing error near 'x': syntax error"});
}

TEST(NvccLog, RunLinkErrorBecomesAnExpectedSignatureMessage) {
  auto message = run_link_diagnostic("x.cpp:(.text+0x1d): undefined reference to `run(int)'\n",
                                     "void run(int64_t N, cudaStream_t stream)");
  ASSERT_TRUE(message);
  EXPECT_NE(message->find("void run(int64_t N, cudaStream_t stream);"), std::string::npos);
  EXPECT_NE(message->find("`run(int)`"), std::string::npos);
  EXPECT_FALSE(run_link_diagnostic("undefined reference to `runner()'", "void run()"));
}
