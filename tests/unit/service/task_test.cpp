// Reading untrusted task requests and the --gpus list: every mistake gets one clear sentence.
#include "service/task.hpp"
#include "service_test_support.hpp"

using namespace ptxbench;
using namespace ptxbench::service;
using service::testing::evaluate_body;
using service::testing::tools;

namespace {

util::Expected<TaskRequest> parse(const nlohmann::ordered_json& body,
                                  TaskKind kind = TaskKind::evaluate) {
  return parse_task_request(body.dump(), kind, *tools().suite);
}

std::string error_of(const std::string& body, TaskKind kind = TaskKind::evaluate) {
  auto parsed = parse_task_request(body, kind, *tools().suite);
  EXPECT_FALSE(parsed) << body;
  return parsed ? std::string() : parsed.error().message;
}

} // namespace

TEST(TaskRequest, DefaultsAreThoseOfPtxbenchEval) {
  auto request = parse(evaluate_body("int x;"));
  ASSERT_TRUE(request) << request.error().message;
  EXPECT_EQ(request->problem, "gemm_n7168_k5120");
  EXPECT_EQ(request->source, "int x;");
  EXPECT_EQ(request->options.arch, compile::Arch::sm_90a);
  EXPECT_EQ(request->options.sets, 3);
  EXPECT_EQ(request->options.trials, 3);
  EXPECT_EQ(request->options.reference_timing, exec::ReferenceTiming::interleave);
  EXPECT_EQ(request->options.sanitize, exec::Sanitize::off);
  EXPECT_EQ(request->options.audit, exec::Audit::none);
  EXPECT_EQ(request->solution_name.rfind("gemm_n7168_k5120_", 0), 0u) << request->solution_name;
}

TEST(TaskRequest, OptionsAndEndpointsMapOntoEvalOptions) {
  auto body = evaluate_body("int x;");
  body["arch"] = "sm_100a";
  body["sets"] = 2;
  body["trials"] = 1;
  body["warmup"] = 0;
  body["iterations"] = 5;
  body["timeout"] = 2.5;
  body["baseline_cache_mode"] = "reuse";
  auto request = parse(body, TaskKind::profile);
  ASSERT_TRUE(request) << request.error().message;
  EXPECT_EQ(request->options.arch, compile::Arch::sm_100a);
  EXPECT_EQ(request->options.sets, 2);
  EXPECT_EQ(request->options.warmup, 0);
  EXPECT_EQ(request->options.timeout, std::chrono::milliseconds(2500));
  EXPECT_EQ(request->options.reference_timing, exec::ReferenceTiming::cached);
  EXPECT_EQ(request->options.audit, exec::Audit::ncu);
  body.erase("baseline_cache_mode");
  body["sanitizer_types"] = {"memcheck"};
  auto sanitize = parse(body, TaskKind::sanitize);
  ASSERT_TRUE(sanitize) << sanitize.error().message;
  EXPECT_EQ(sanitize->options.sanitize, exec::Sanitize::memcheck);
  // The canonical form re-reads to the same request (what a restarted server does).
  auto again =
      parse_task_request(dump_json(sanitize->canonical), TaskKind::sanitize, *tools().suite);
  ASSERT_TRUE(again) << again.error().message;
  EXPECT_EQ(again->options.iterations, 5);
  EXPECT_EQ(again->source, "int x;");
  EXPECT_EQ(again->canonical, sanitize->canonical);
}

TEST(TaskRequest, MalformedBodiesAreRejectedWithTheReason) {
  EXPECT_NE(error_of("{\"solution\": ").find("request body: invalid JSON"), std::string::npos);
  EXPECT_NE(error_of("[1, 2]").find("expected a JSON object"), std::string::npos);
  EXPECT_NE(error_of("{}").find("\"solution\" must be an object"), std::string::npos);
  auto body = evaluate_body("int x;");
  body["trails"] = 3;
  EXPECT_NE(error_of(body.dump()).find("unknown field \"trails\""), std::string::npos);
  body = evaluate_body("int x;");
  body["solution"]["sources"].push_back({{"path", "b.cu"}, {"content", "int y;"}});
  EXPECT_NE(error_of(body.dump()).find("exactly one file"), std::string::npos);
  body = evaluate_body("");
  EXPECT_NE(error_of(body.dump()).find("content is empty"), std::string::npos);
  for (const char* field : {"sets", "trials", "iterations"}) {
    body = evaluate_body("int x;");
    body[field] = 0;
    EXPECT_NE(error_of(body.dump()).find(std::string("\"") + field + "\" must be an integer"),
              std::string::npos);
  }
  body = evaluate_body("int x;");
  body["sets"] = 1000;
  EXPECT_NE(error_of(body.dump()).find("from 1 to 16"), std::string::npos);
  body = evaluate_body("int x;");
  body["timeout"] = -1;
  EXPECT_NE(error_of(body.dump()).find("\"timeout\""), std::string::npos);
  body = evaluate_body("int x;");
  body["arch"] = "sm_80";
  EXPECT_NE(error_of(body.dump()).find("\"arch\""), std::string::npos);
  body = evaluate_body("int x;");
  body["baseline_cache_mode"] = "sometimes";
  EXPECT_NE(error_of(body.dump()).find("baseline_cache_mode"), std::string::npos);
  body = evaluate_body("int x;");
  body["sanitizer_types"] = {"racecheck"};
  EXPECT_NE(error_of(body.dump(), TaskKind::sanitize).find("memcheck"), std::string::npos);
  EXPECT_NE(error_of(body.dump()).find("belongs to POST /sanitize"), std::string::npos);
}

TEST(TaskRequest, TheDebuggerBelongsToPostDebugAndTravelsInTheCanonicalForm) {
  auto body = evaluate_body("int x;");
  auto plain = parse(body, TaskKind::debug); // the endpoint decides the tool
  ASSERT_TRUE(plain) << plain.error().message;
  EXPECT_EQ(plain->options.debug, exec::Debug::cuda_gdb);
  EXPECT_EQ(plain->canonical["debug"], true);
  EXPECT_EQ(kind_of(plain->options), TaskKind::debug);
  body["debug"] = true;
  auto asked = parse(body, TaskKind::debug);
  ASSERT_TRUE(asked) << asked.error().message;
  EXPECT_EQ(asked->canonical, plain->canonical);
  EXPECT_NE(error_of(body.dump()).find("$.debug: \"debug\" belongs to POST /debug"),
            std::string::npos)
      << error_of(body.dump());
  EXPECT_NE(error_of(body.dump(), TaskKind::sanitize).find("belongs to POST /debug"),
            std::string::npos);
  body["debug"] = false; // what a build that writes every member would send: accepted anywhere
  auto off = parse(body, TaskKind::evaluate);
  ASSERT_TRUE(off) << off.error().message;
  EXPECT_EQ(off->options.debug, exec::Debug::off);
  EXPECT_EQ(kind_of(off->options), TaskKind::evaluate);
  EXPECT_EQ(to_string(TaskKind::debug), "debug");
}

TEST(TaskRequest, UnknownProblemsAndWorkloadsAreNotFound) {
  auto unknown = parse(evaluate_body("int x;", "gemm_n7168_k5121"));
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().kind, util::ErrorKind::not_found);
  EXPECT_NE(unknown.error().message.find("did you mean"), std::string::npos);
  auto body = evaluate_body("int x;");
  body["workload_uuids"] = {"no-such-uuid"};
  auto workloads = parse(body);
  ASSERT_FALSE(workloads);
  EXPECT_EQ(workloads.error().kind, util::ErrorKind::not_found);
  EXPECT_NE(workloads.error().message.find("No workloads found"), std::string::npos);
  const std::string uuid = (*tools().suite->find("gemm_n7168_k5120"))->workload.uuid;
  body["workload_uuids"] = {"no-such-uuid", uuid};
  EXPECT_TRUE(parse(body));
}

TEST(TaskRequest, MistypedFieldsAreRejectedNamingTheirJsonPath) {
  auto body = evaluate_body("int x;");
  body["solution"]["sources"][0]["content"] = 5;
  auto content = parse(body);
  ASSERT_FALSE(content);
  EXPECT_EQ(content.error().kind, util::ErrorKind::invalid_input);
  EXPECT_EQ(content.error().message,
            "request body: $.solution.sources[0].content: expected a string, got integer");
  body = evaluate_body("int x;");
  body["workload_uuids"] = {"no-such-uuid", 3};
  EXPECT_EQ(error_of(body.dump()),
            "request body: $.workload_uuids[1]: expected a string, got integer");
  body = evaluate_body("int x;");
  body["trials"] = "3";
  EXPECT_EQ(error_of(body.dump()),
            "request body: $.trials: \"trials\" must be an integer from 1 to 100, got \"3\"");
  body = evaluate_body("int x;");
  body["solution"]["definition"] = 7;
  EXPECT_NE(error_of(body.dump()).find("request body: $.solution.definition: "), std::string::npos);
  EXPECT_NE(error_of("{\"trails\": 3}").find("request body: $.trails: unknown field"),
            std::string::npos);
}

TEST(TaskIds, OnlyThirtyTwoLowerCaseHexDigitsAreTaskIds) {
  const std::string id = new_task_id();
  EXPECT_TRUE(is_task_id(id)) << id;
  EXPECT_NE(new_task_id(), id);
  EXPECT_FALSE(is_task_id(""));
  EXPECT_FALSE(is_task_id(std::string(32, 'G')));
  EXPECT_FALSE(is_task_id("../../etc/passwd"));
  EXPECT_FALSE(is_task_id(id + "0"));
}

TEST(GpuList, AllOrExistingDistinctIndices) {
  EXPECT_EQ(*parse_gpus("all", 0), std::vector<int>{});
  EXPECT_EQ(*parse_gpus("all", 2), (std::vector<int>{0, 1}));
  EXPECT_EQ(*parse_gpus("1, 0", 2), (std::vector<int>{1, 0}));
  EXPECT_NE(parse_gpus("2", 2).error().message.find("no CUDA device 2"), std::string::npos);
  EXPECT_NE(parse_gpus("0,0", 2).error().message.find("listed twice"), std::string::npos);
  EXPECT_NE(parse_gpus("gpu0", 2).error().message.find("not \"all\""), std::string::npos);
  EXPECT_FALSE(parse_gpus("", 2));
  EXPECT_FALSE(parse_gpus("0,", 2));
}
