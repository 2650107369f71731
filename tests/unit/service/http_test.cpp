// The service's HTTP API on loopback with the real checker (nvcc, cuobjdump) and no GPU:
// every endpoint, long-poll, the errors an untrusted client can cause, authentication and
// concurrent submissions.
#include "service_test_support.hpp"

#include <algorithm>
#include <arpa/inet.h>
#include <future>
#include <netinet/in.h>
#include <set>
#include <sys/socket.h>
#include <unistd.h>

using namespace ptxbench;
using namespace ptxbench::service;
using namespace ptxbench::service::testing;
using Clock = std::chrono::steady_clock;

namespace {

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// The whole answer to `request` written byte for byte on a fresh connection (httplib's client
// always sends a Content-Length, which a bodyless `curl -X POST` does not).
std::string raw_exchange(const std::string& url, const std::string& request) {
  const int port = std::stoi(url.substr(url.rfind(':') + 1));
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string answer;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 &&
      ::write(fd, request.data(), request.size()) == static_cast<ssize_t>(request.size())) {
    char buffer[4096];
    for (ssize_t n; (n = ::read(fd, buffer, sizeof buffer)) > 0;)
      answer.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return answer;
}

} // namespace

TEST(ServiceHttp, HealthDefinitionsAndWorkloadsDescribeTheService) {
  ScratchDir state;
  LiveService live(state.path());
  Answer health = http(live.url(), "GET", "/health");
  ASSERT_EQ(health.status, 200) << health.body;
  EXPECT_EQ(health.json["status"], "ok");
  EXPECT_EQ(health.json["queue_size"], 0);
  ASSERT_EQ(health.json["workers"].size(), 1u); // this machine has no GPU: one cpu worker
  EXPECT_EQ(health.json["workers"][0]["device"], "cpu");
  EXPECT_EQ(health.json["workers"][0]["healthy"], true);

  Answer root = http(live.url(), "GET", "/");
  EXPECT_EQ(root.json["name"], "ptxbench serve");
  const auto& endpoints = root.json["endpoints"];
  EXPECT_NE(std::find(endpoints.begin(), endpoints.end(), "POST /debug"), endpoints.end());
  Answer definitions = http(live.url(), "GET", "/definitions");
  ASSERT_EQ(definitions.status, 200);
  EXPECT_EQ(definitions.json.size(), tools().suite->problems().size());
  EXPECT_EQ(definitions.json[0]["name"], "gemm_n7168_k5120");
  Answer gemm = http(live.url(), "GET", "/definitions/gemm_n7168_k5120");
  ASSERT_EQ(gemm.status, 200);
  EXPECT_EQ(gemm.json["op_type"], "gemm");
  EXPECT_TRUE(gemm.json["inputs"].contains("A"));
  Answer workloads = http(live.url(), "GET", "/definitions/gemm_n7168_k5120/workloads");
  ASSERT_EQ(workloads.status, 200);
  ASSERT_EQ(workloads.json.size(), 1u);
  EXPECT_EQ(workloads.json[0]["uuid"], (*tools().suite->find("gemm_n7168_k5120"))->workload.uuid);
  Answer unknown = http(live.url(), "GET", "/definitions/gemm");
  EXPECT_EQ(unknown.status, 404);
  EXPECT_NE(unknown.json.value("error", "").find("unknown problem"), std::string::npos);
  EXPECT_EQ(http(live.url(), "GET", "/definitions/gemm/workloads").status, 404);
  Answer nowhere = http(live.url(), "GET", "/nowhere");
  EXPECT_EQ(nowhere.status, 404);
  EXPECT_EQ(nowhere.json["error"], "no endpoint GET /nowhere");

  Answer metrics = http(live.url(), "GET", "/metrics");
  ASSERT_EQ(metrics.status, 200);
  EXPECT_NE(metrics.body.find("# TYPE ptxbench_service_queued gauge\nptxbench_service_queued 0\n"),
            std::string::npos)
      << metrics.body;
  EXPECT_NE(metrics.body.find("ptxbench_service_worker_up{worker=\"cpu\",gpu=\"\"} 1\n"),
            std::string::npos)
      << metrics.body;
}

TEST(ServiceHttp, AnEvaluationIsQueuedAtOnceAndTheLongPollReturnsWhenItIsDone) {
  ScratchDir state;
  LiveService live(state.path());
  auto start = Clock::now();
  Answer submitted =
      http(live.url(), "POST", "/evaluate", evaluate_body(fill_kernel("long-poll")).dump());
  ASSERT_EQ(submitted.status, 200) << submitted.body;
  EXPECT_LT(seconds_since(start), 1.0) << "submitting waited for the evaluation";
  const std::string id = submitted.json["task_id"];
  EXPECT_TRUE(is_task_id(id));
  EXPECT_EQ(
      submitted.json["normalized_solution_name"].get<std::string>().rfind("gemm_n7168_k5120_", 0),
      0u);

  // nvcc takes seconds: a short long-poll comes back unfinished after its timeout.
  start = Clock::now();
  Answer early = http(live.url(), "GET", "/tasks/" + id + "?timeout=0.5");
  const double waited = seconds_since(start);
  ASSERT_EQ(early.status, 200) << early.body;
  EXPECT_TRUE(early.json["status"] == "queued" || early.json["status"] == "running") << early.body;
  EXPECT_FALSE(early.json.contains("result"));
  EXPECT_GE(waited, 0.45);
  EXPECT_LT(waited, 3.0);

  Answer done = http(live.url(), "GET", "/tasks/" + id + "?timeout=300");
  ASSERT_EQ(done.status, 200) << done.body;
  EXPECT_EQ(done.json["status"], "completed");
  EXPECT_EQ(done.json["kind"], "evaluate");
  EXPECT_EQ(done.json["device"], "cpu");
  EXPECT_EQ(done.json["definition"], "gemm_n7168_k5120");
  // The result is what `ptxbench eval --json` prints: built, not run without a GPU.
  const auto& result = done.json["result"];
  EXPECT_TRUE(result["status"].is_null());
  EXPECT_EQ(result["check"]["outcome"], "ok");
  EXPECT_EQ(result["trace"]["definition"], "gemm_n7168_k5120");
  EXPECT_NE(done.json.value("needs_gpu", "").find("need a GPU"), std::string::npos) << done.body;
  // A finished task answers at once, whatever the timeout.
  start = Clock::now();
  EXPECT_EQ(http(live.url(), "GET", "/tasks/" + id + "?timeout=60").json["status"], "completed");
  EXPECT_LT(seconds_since(start), 1.0);
}

TEST(ServiceHttp, CompileErrorsAndTheToolEndpointsComeBackAsVerdicts) {
  ScratchDir state;
  LiveService live(state.path());
  const std::string broken = "this is not CUDA\n";
  const std::string evaluate = submit(live.url(), broken);
  const std::string sanitize = submit(live.url(), broken, "/sanitize");
  const std::string profile = submit(live.url(), broken, "/profile");
  const std::string debug = submit(live.url(), broken, "/debug");
  Answer batch = http(
      live.url(), "POST", "/tasks/batch",
      nlohmann::json{{"task_ids", {evaluate, sanitize, profile, debug}}, {"timeout", 300}}.dump());
  ASSERT_EQ(batch.status, 200) << batch.body;
  ASSERT_EQ(batch.json.size(), 4u);
  const char* kinds[] = {"evaluate", "sanitize", "profile", "debug"};
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(batch.json[i]["kind"], kinds[i]);
    EXPECT_EQ(batch.json[i]["status"], "completed") << batch.json[i].dump();
    EXPECT_EQ(batch.json[i]["result"]["status"], "COMPILE_ERROR");
    EXPECT_EQ(batch.json[i]["result"]["check"]["outcome"], "compile_error");
  }
  EXPECT_EQ(batch.json[0]["task_id"], evaluate);
  EXPECT_EQ(batch.json[2]["task_id"], profile);
}

TEST(ServiceHttp, MistypedBatchBodyIsRefusedNamingTheJsonPath) {
  ScratchDir state;
  LiveService live(state.path(), HttpOptions{});
  Answer mistyped = http(live.url(), "POST", "/tasks/batch",
                         nlohmann::json{{"task_ids", {std::string(32, 'b'), 3}}}.dump());
  EXPECT_EQ(mistyped.status, 400);
  EXPECT_NE(mistyped.json.value("error", "")
                .find("request body: $.task_ids[1]: expected a string, got integer"),
            std::string::npos)
      << mistyped.json.dump();
  Answer timeout =
      http(live.url(), "POST", "/tasks/batch",
           nlohmann::json{{"task_ids", {std::string(32, 'b')}}, {"timeout", "soon"}}.dump());
  EXPECT_EQ(timeout.status, 400);
  EXPECT_NE(timeout.json.value("error", "").find("$.timeout: expected a number, got string"),
            std::string::npos)
      << timeout.json.dump();
}

TEST(ServiceHttp, UntrustedRequestsGetClearErrors) {
  ScratchDir state;
  HttpOptions options;
  options.max_body_bytes = 64 * 1024;
  LiveService live(state.path(), options);
  Answer malformed = http(live.url(), "POST", "/evaluate", "{\"solution\": {");
  EXPECT_EQ(malformed.status, 400);
  EXPECT_NE(malformed.json.value("error", "").find("invalid JSON"), std::string::npos);
  Answer shape = http(live.url(), "POST", "/evaluate", "{\"solution\": 3}");
  EXPECT_EQ(shape.status, 400);
  EXPECT_NE(shape.json.value("error", "").find("\"solution\" must be an object"),
            std::string::npos);
  auto debugging = evaluate_body("int x;");
  debugging["debug"] = true;
  Answer misplaced = http(live.url(), "POST", "/evaluate", debugging.dump());
  EXPECT_EQ(misplaced.status, 400);
  EXPECT_NE(misplaced.json.value("error", "").find("$.debug: \"debug\" belongs to POST /debug"),
            std::string::npos)
      << misplaced.body;
  Answer oversized = http(live.url(), "POST", "/evaluate",
                          evaluate_body("// " + std::string(100 * 1024, 'x')).dump());
  EXPECT_EQ(oversized.status, 413);
  EXPECT_NE(oversized.json.value("error", "").find("larger than 65536 bytes"), std::string::npos);
  Answer unknown_problem =
      http(live.url(), "POST", "/evaluate", evaluate_body("int x;", "no_such_problem").dump());
  EXPECT_EQ(unknown_problem.status, 404);
  EXPECT_NE(unknown_problem.json.value("error", "").find("no_such_problem"), std::string::npos);
  Answer unknown_task = http(live.url(), "GET", "/tasks/" + std::string(32, 'a') + "?timeout=5");
  EXPECT_EQ(unknown_task.status, 404);
  EXPECT_NE(unknown_task.json.value("error", "").find("unknown task"), std::string::npos);
  EXPECT_EQ(http(live.url(), "GET", "/tasks/not-a-task-id").status, 404);
  EXPECT_EQ(http(live.url(), "GET", "/tasks/" + std::string(32, 'a') + "?timeout=forever").status,
            400);
  EXPECT_EQ(http(live.url(), "GET", "/tasks/" + std::string(32, 'a') + "?timeout=99999").status,
            400);
  Answer batch = http(live.url(), "POST", "/tasks/batch", "{\"task_ids\": \"x\"}");
  EXPECT_EQ(batch.status, 400);
  Answer batch_unknown = http(live.url(), "POST", "/tasks/batch",
                              nlohmann::json{{"task_ids", {std::string(32, 'b')}}}.dump());
  EXPECT_EQ(batch_unknown.status, 404);
  // Nothing of that reached the queue.
  EXPECT_EQ(live.service().health().queue_size, 0u);
  EXPECT_EQ(live.service().health().workers[0].finished, 0);
}

TEST(ServiceHttp, ABearerTokenGuardsEverythingButHealth) {
  ScratchDir state;
  HttpOptions options;
  options.token = "s3cret-token";
  LiveService live(state.path(), options);
  EXPECT_EQ(http(live.url(), "GET", "/health").status, 200);
  Answer denied = http(live.url(), "GET", "/definitions");
  EXPECT_EQ(denied.status, 401);
  EXPECT_NE(denied.json.value("error", "").find("bearer token"), std::string::npos);
  EXPECT_EQ(denied.body.find("s3cret"), std::string::npos);
  EXPECT_EQ(http(live.url(), "POST", "/evaluate", evaluate_body("int x;").dump(),
                 {{"Authorization", "Bearer wrong-token!"}})
                .status,
            401);
  EXPECT_EQ(http(live.url(), "GET", "/definitions", "", {{"Authorization", "Bearer s3cret-token"}})
                .status,
            200);
}

TEST(ServiceHttp, TheBearerSchemeNameIsCaseInsensitive) {
  ScratchDir state;
  HttpOptions options;
  options.token = "s3cret-token";
  LiveService live(state.path(), options);
  for (const char* scheme : {"bearer", "BEARER", "beArer"})
    EXPECT_EQ(http(live.url(), "GET", "/definitions", "",
                   {{"Authorization", std::string(scheme) + " s3cret-token"}})
                  .status,
              200)
        << scheme;
  EXPECT_EQ(
      http(live.url(), "GET", "/definitions", "", {{"Authorization", "Basic s3cret-token"}}).status,
      401);
}

// curl -d sends application/x-www-form-urlencoded, which cpp-httplib parsed as a form and
// refused with 413 past 8 KiB whatever --max-body-mib said.
TEST(ServiceHttp, ABodyOfAnotherContentTypeIs415NotAFalse413) {
  ScratchDir state;
  LiveService live(state.path(), HttpOptions{});
  httplib::Client client(live.url());
  const std::string body = evaluate_body("// " + std::string(16 * 1024, 'x')).dump();
  auto form = client.Post("/evaluate", body, "application/x-www-form-urlencoded");
  ASSERT_TRUE(form);
  EXPECT_EQ(form->status, 415) << form->body;
  EXPECT_NE(form->body.find("Content-Type: application/json"), std::string::npos) << form->body;
  auto json = client.Post("/evaluate", body, "application/json; charset=utf-8");
  ASSERT_TRUE(json);
  EXPECT_EQ(json->status, 200) << json->body;
  auto untyped = raw_exchange(live.url(), "POST /evaluate HTTP/1.1\r\nHost: x\r\nConnection: "
                                          "close\r\nContent-Length: " +
                                              std::to_string(body.size()) + "\r\n\r\n" + body);
  EXPECT_NE(untyped.find("HTTP/1.1 200"), std::string::npos) << untyped.substr(0, 300);
}

TEST(ServiceHttp, ABodylessPostGetsASentenceNotHttp400) {
  ScratchDir state;
  LiveService live(state.path(), HttpOptions{});
  const std::string answer =
      raw_exchange(live.url(), "POST /evaluate HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
  EXPECT_NE(answer.find("HTTP/1.1 400"), std::string::npos) << answer;
  EXPECT_NE(answer.find("POST /evaluate needs a JSON body"), std::string::npos) << answer;
  Answer empty = http(live.url(), "POST", "/tasks/batch", "");
  EXPECT_EQ(empty.status, 400);
  EXPECT_NE(empty.json.value("error", "").find("needs a JSON body"), std::string::npos)
      << empty.body;
}

TEST(ServiceHttp, ConcurrentSubmissionsAndLongPollsAreAllServed) {
  ScratchDir state;
  LiveService live(state.path());
  constexpr int kClients = 8;
  std::vector<std::future<std::string>> futures;
  for (int i = 0; i < kClients; ++i)
    futures.push_back(std::async(std::launch::async, [&live] {
      return submit(live.url(), "not CUDA either\n"); // one compile, then cache hits
    }));
  std::vector<std::string> ids;
  for (auto& future : futures)
    ids.push_back(future.get());
  std::set<std::string> distinct(ids.begin(), ids.end());
  EXPECT_EQ(distinct.size(), static_cast<std::size_t>(kClients));
  // Long-polls of every task at once, from as many clients.
  std::vector<std::future<Answer>> polls;
  for (const std::string& id : ids)
    polls.push_back(std::async(std::launch::async, [&live, id] {
      return http(live.url(), "GET", "/tasks/" + id + "?timeout=300");
    }));
  for (auto& poll : polls) {
    Answer answer = poll.get();
    ASSERT_EQ(answer.status, 200);
    EXPECT_EQ(answer.json["status"], "completed");
    EXPECT_EQ(answer.json["result"]["status"], "COMPILE_ERROR");
  }
  EXPECT_EQ(live.service().health().workers[0].finished, kClients);
  EXPECT_EQ(live.service().health().queue_size, 0u);
}
