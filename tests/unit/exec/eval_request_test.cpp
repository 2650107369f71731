// The evaluation request's one encoder and decoder (exec/eval_request.hpp): every member
// round-trips, a FlashInfer-Bench body without ptxbench's members still reads, and a newer
// version, an unknown language or a wrong-typed member is refused naming its JSON path.
#include "exec/eval_request.hpp"

#include <gtest/gtest.h>

using namespace ptxbench;
using exec::EvalRequest;
using Json = nlohmann::ordered_json;

namespace {

EvalRequest every_member_set() {
  EvalRequest request;
  request.problem = "gqa_paged_decode_h32_kv8_d128_ps1";
  request.source = "import triton\n\ndef run(q, k, v, o):\n    pass\n";
  request.workload_uuids = std::vector<std::string>{"a", "b"};
  exec::EvalOptions& o = request.options;
  o.arch = compile::Arch::sm_100a;
  o.language = compile::Language::triton;
  o.sets = 5;
  o.trials = 7;
  o.warmup = 3;
  o.iterations = 11;
  o.timeout = std::chrono::milliseconds(2500);
  o.reference_timing = exec::ReferenceTiming::cached;
  o.sanitize = exec::Sanitize::memcheck;
  o.audit = exec::Audit::ncu;
  o.debug = exec::Debug::cuda_gdb;
  o.gqa_reference = reference::GqaBaseline::cudnn;
  o.seed = 18446744073709551615ULL;
  o.counts_cache = exec::CountsCacheUse::on;
  return request;
}

std::string error_of(const Json& body) {
  auto read = exec::eval_request_from_json(body, "request body");
  return read ? "" : read.error().message;
}

Json fib_body() {
  return Json::parse(R"({"solution": {"definition": "gemm_n7168_k5120", "name": "mine",
      "sources": [{"path": "kernel.cu", "content": "__global__ void k() {}"}]},
      "workload_uuids": null, "iterations": 20, "baseline_cache_mode": "reuse"})");
}

} // namespace

TEST(EvalRequest, EveryMemberRoundTripsAndTheVersionAndLanguageAreWritten) {
  const EvalRequest request = every_member_set();
  const Json body = exec::to_json(request);
  EXPECT_EQ(body["version"], exec::kEvalRequestVersion);
  EXPECT_EQ(body["language"], "triton");
  EXPECT_EQ(body["solution"]["sources"][0]["path"], "kernel.py");
  EXPECT_EQ(body["debug"], true);
  EXPECT_EQ(body["reference"], "cudnn");
  auto read = exec::eval_request_from_json(body, "request body");
  ASSERT_TRUE(read) << read.error().message;
  EXPECT_TRUE(exec::same_request(*read, request));
  EXPECT_EQ(exec::to_json(*read), body);

  // The defaults round-trip too, and one changed member is a different request.
  const EvalRequest plain{"gemm_n7168_k5120", "__global__ void k() {}", std::nullopt, {}};
  auto again = exec::eval_request_from_json(exec::to_json(plain), "request body");
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_TRUE(exec::same_request(*again, plain));
  EvalRequest other = plain;
  other.options.trials = 4;
  EXPECT_FALSE(exec::same_request(other, plain));
  other = plain;
  other.options.debug = exec::Debug::cuda_gdb;
  EXPECT_FALSE(exec::same_request(other, plain));
}

TEST(EvalRequest, DebugIsWrittenOnlyWhenAskedForAndAbsentMeansOff) {
  // A build from before `debug` refuses unknown members: a request that does not ask for the
  // debugger must not carry it.
  const EvalRequest plain{"gemm_n7168_k5120", "__global__ void k() {}", std::nullopt, {}};
  EXPECT_FALSE(exec::to_json(plain).contains("debug"));
  auto read = exec::eval_request_from_json(fib_body(), "request body");
  ASSERT_TRUE(read) << read.error().message;
  EXPECT_EQ(read->options.debug, exec::Debug::off);
  Json body = fib_body();
  body["debug"] = false;
  EXPECT_EQ(exec::eval_request_from_json(body, "")->options.debug, exec::Debug::off);
  body["debug"] = true;
  EXPECT_EQ(exec::eval_request_from_json(body, "")->options.debug, exec::Debug::cuda_gdb);
  body["debug"] = "yes";
  EXPECT_NE(error_of(body).find("$.debug: \"debug\" must be true or false, got \"yes\""),
            std::string::npos)
      << error_of(body);
}

TEST(EvalRequest, TheGqaReferenceIsFlashInferUnlessCudnnIsAskedFor) {
  // Written only when cuDNN is asked for, as `debug`: older builds read every other request.
  const EvalRequest plain{"gemm_n7168_k5120", "__global__ void k() {}", std::nullopt, {}};
  EXPECT_FALSE(exec::to_json(plain).contains("reference"));
  Json body = fib_body();
  EXPECT_EQ(exec::eval_request_from_json(body, "")->options.gqa_reference,
            reference::GqaBaseline::flashinfer);
  body["reference"] = "flashinfer";
  EXPECT_EQ(exec::eval_request_from_json(body, "")->options.gqa_reference,
            reference::GqaBaseline::flashinfer);
  body["reference"] = "cudnn";
  EXPECT_EQ(exec::eval_request_from_json(body, "")->options.gqa_reference,
            reference::GqaBaseline::cudnn);
  EvalRequest other = plain;
  other.options.gqa_reference = reference::GqaBaseline::cudnn;
  EXPECT_FALSE(exec::same_request(other, plain));
  body["reference"] = "triton";
  EXPECT_NE(error_of(body).find("$.reference: \"reference\" must be \"flashinfer\" or "
                                "\"cudnn\" (the GQA baseline), got \"triton\""),
            std::string::npos)
      << error_of(body);
}

TEST(EvalRequest, TheSeedAndTheCountsCacheAreWrittenOnlyWhenSetAndReadStrictly) {
  const EvalRequest plain{"gemm_n7168_k5120", "__global__ void k() {}", std::nullopt, {}};
  EXPECT_FALSE(exec::to_json(plain).contains("seed"));
  EXPECT_FALSE(exec::to_json(plain).contains("counts_cache"));
  Json body = fib_body();
  auto read = exec::eval_request_from_json(body, "");
  ASSERT_TRUE(read) << read.error().message;
  EXPECT_FALSE(read->options.seed);
  EXPECT_EQ(read->options.counts_cache, exec::CountsCacheUse::off);
  body["seed"] = 0;
  body["counts_cache"] = "on";
  read = exec::eval_request_from_json(body, "");
  ASSERT_TRUE(read) << read.error().message;
  EXPECT_EQ(read->options.seed, 0U);
  EXPECT_EQ(read->options.counts_cache, exec::CountsCacheUse::on);
  EvalRequest other = plain;
  other.options.seed = 1;
  EXPECT_FALSE(exec::same_request(other, plain));

  body["seed"] = -1;
  EXPECT_NE(error_of(body).find("$.seed: \"seed\" must be an integer from 0 to 2^64-1, got -1"),
            std::string::npos)
      << error_of(body);
  body["seed"] = "42";
  EXPECT_NE(error_of(body).find("$.seed:"), std::string::npos) << error_of(body);
  body["seed"] = 42;
  body["counts_cache"] = true;
  EXPECT_NE(
      error_of(body).find("$.counts_cache: \"counts_cache\" must be \"on\" or \"off\", got true"),
      std::string::npos)
      << error_of(body);
}

TEST(EvalRequest, AFlashInferBenchBodyWithoutPtxbenchsMembersReadsAsVersionOneCuda) {
  auto read = exec::eval_request_from_json(fib_body(), "request body");
  ASSERT_TRUE(read) << read.error().message;
  EXPECT_EQ(read->problem, "gemm_n7168_k5120");
  EXPECT_EQ(read->options.language, compile::Language::cuda);
  EXPECT_EQ(read->options.iterations, 20);
  EXPECT_EQ(read->options.reference_timing, exec::ReferenceTiming::cached);
  EXPECT_FALSE(read->workload_uuids.has_value());

  Json python = fib_body();
  python["solution"]["sources"][0]["path"] = "kernel.py";
  auto triton = exec::eval_request_from_json(python, "request body");
  ASSERT_TRUE(triton) << triton.error().message;
  EXPECT_EQ(triton->options.language, compile::Language::triton);
  python["language"] = "cuda"; // the member, when present, decides
  EXPECT_EQ(exec::eval_request_from_json(python, "")->options.language, compile::Language::cuda);
}

TEST(EvalRequest, ANewerVersionAnUnknownLanguageOrAWrongTypeIsRefusedByPath) {
  Json body = fib_body();
  body["version"] = exec::kEvalRequestVersion + 1;
  EXPECT_NE(error_of(body).find("$.version: request version 2 is newer than this build reads"),
            std::string::npos)
      << error_of(body);
  body["version"] = "1";
  EXPECT_NE(error_of(body).find("$.version: \"version\" must be a positive integer"),
            std::string::npos);
  body = fib_body();
  body["language"] = "rust";
  EXPECT_NE(error_of(body).find("request body: $.language: \"language\" must be \"cuda\" or "
                                "\"triton\", got \"rust\""),
            std::string::npos)
      << error_of(body);
  body = fib_body();
  body["sets"] = 1000;
  EXPECT_NE(error_of(body).find("$.sets: \"sets\" must be an integer from 1 to 16"),
            std::string::npos);
  body = fib_body();
  body["audit"] = "nsys";
  EXPECT_NE(error_of(body).find("$.audit"), std::string::npos);
  body = fib_body();
  body["solution"]["sources"][0]["content"] = 3;
  EXPECT_NE(error_of(body).find("$.solution.sources[0].content: expected a string, got integer"),
            std::string::npos)
      << error_of(body);
  body = fib_body();
  body["priority"] = 1;
  EXPECT_NE(error_of(body).find("$.priority: unknown field"), std::string::npos);
  EXPECT_NE(error_of(Json::array()).find("$: expected a JSON object, got array"),
            std::string::npos);
}
