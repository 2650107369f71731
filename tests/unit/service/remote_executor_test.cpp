// agent::RemoteExecutor against a real in-process service on loopback (and, for the failures a
// real service does not produce on demand, small stand-in servers): the turn equals the one
// GpuExecutor makes of the same evaluation, and every infrastructure failure is an error.
#include "agent/remote_executor.hpp"
#include "exec/evaluation.hpp"
#include "service_test_support.hpp"
#include "trace/json_io.hpp"

#include <atomic>
#include <cmath>
#include <limits>
#include <thread>

using namespace ptxbench;
using namespace ptxbench::service::testing;
using agent::RemoteExecutor;
using agent::RemoteOptions;
using store::TurnCategory;

namespace {

const suite::Problem& gemm() {
  return **tools().suite->find("gemm_n7168_k5120");
}

RemoteOptions remote(std::vector<std::string> urls) {
  RemoteOptions options;
  options.urls = std::move(urls);
  options.poll = std::chrono::seconds(5);
  options.request_timeout = std::chrono::seconds(10);
  return options;
}

// A stand-in service: GET and POST on every path go to `handler`.
class StandIn {
public:
  using Handler = std::function<void(const httplib::Request&, httplib::Response&)>;
  explicit StandIn(Handler handler) : m_handler(std::move(handler)) {
    auto route = [this](const httplib::Request& request, httplib::Response& response) {
      ++m_requests;
      m_handler(request, response);
    };
    m_server.Get(".*", route);
    m_server.Post(".*", route);
    m_port = m_server.bind_to_any_port("127.0.0.1");
    m_thread = std::thread([this] { m_server.listen_after_bind(); });
    while (!m_server.is_running())
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~StandIn() {
    m_server.stop();
    m_thread.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(m_port); }
  int requests() const { return m_requests; }

private:
  Handler m_handler;
  httplib::Server m_server;
  int m_port = 0;
  std::thread m_thread;
  std::atomic<int> m_requests{0};
};

void json_reply(httplib::Response& response, const nlohmann::ordered_json& body, int status = 200) {
  response.status = status;
  response.set_content(body.dump(), "application/json");
}

exec::CheckReport built(const std::string& source) {
  auto report = tools().checker->check(source, gemm(), compile::Arch::sm_90a);
  if (!report || report->outcome != exec::CheckOutcome::ok)
    throw std::runtime_error("the test kernel does not build");
  return std::move(*report);
}

// An evaluation as the H200 would report it, to round-trip through the service's JSON.
exec::Evaluation gpu_evaluation(const exec::CheckReport& check, trace::EvaluationStatus status) {
  exec::Evaluation ev;
  ev.check = check;
  ev.status = status;
  ev.message =
      status == trace::EvaluationStatus::passed ? "" : "correctness call on input set 0: wrong";
  ev.gpu_ran = true;
  ev.problem = gemm().name();
  ev.solution_name = exec::solution_name("src", gemm());
  ev.gpu = "NVIDIA H200";
  ev.timestamp = "2026-11-30T05:00:00.000000";
  ev.library = "cuBLASLt";
  ev.libs = {{"cuda", "13.0"}, {"baseline", "cuBLASLt"}};
  ev.sets = 3;
  ev.correctness = exec::CompareStats{58720256, 0, 0, 0, 0, 0.004, 0.008};
  if (status != trace::EvaluationStatus::passed) {
    ev.correctness->failed = 12;
    ev.correctness->candidate_nan = 12; // reported as NaN: "NaN" in the JSON
  }
  ev.timing = exec::TimingReport{};
  ev.timing->candidate_ms = 0.8;
  ev.timing->reference_ms = 1.0;
  ev.timing->candidate_trial_ms = {0.8, 0.81, 0.79};
  ev.timing->reference_trial_ms = {1.0, 1.0, 1.0};
  ev.dynamic = exec::DynamicReport{};
  ev.dynamic->verdict = exec::DynamicState::present;
  ev.dynamic->families = {{sass::Family::gmma, 32, 917504, exec::DynamicState::present},
                          {sass::Family::tma, 8, 0, exec::DynamicState::not_executed}};
  ev.dynamic->coverage = 1.0;
  ev.violations = {"1 kernel(s) launched that are not in the candidate's kernel.so"};
  return ev;
}

} // namespace

TEST(RemoteExecutor, ReadingTheServiceJsonGivesTheTurnGpuExecutorGives) {
  const std::string source = fill_kernel("round trip");
  const exec::CheckReport check = built(source);
  for (auto status :
       {trace::EvaluationStatus::passed, trace::EvaluationStatus::incorrect_numerical}) {
    const exec::Evaluation local = gpu_evaluation(check, status);
    const agent::TurnResult expected =
        agent::evaluation_turn(local, exec::to_trace(local, gemm()), source);
    // What the service sends: `ptxbench eval --json`, through text.
    const auto wire = nlohmann::ordered_json::parse(exec::to_json(local, gemm()).dump());
    auto remote = agent::read_result(wire, "", check);
    ASSERT_TRUE(remote) << remote.error().message;
    const agent::TurnResult turn =
        agent::evaluation_turn(remote->evaluation, remote->trace, source);
    EXPECT_EQ(turn.category, expected.category);
    EXPECT_EQ(turn.feedback, expected.feedback);
    EXPECT_EQ(turn.speedup, expected.speedup);
    EXPECT_EQ(turn.evaluation.static_verdict, expected.evaluation.static_verdict);
    EXPECT_EQ(turn.evaluation.dynamic_verdict, expected.evaluation.dynamic_verdict);
    ASSERT_EQ(turn.evaluation.traces.size(), 1u);
    EXPECT_EQ(trace::to_json(turn.evaluation.traces[0]).dump(),
              trace::to_json(expected.evaluation.traces[0]).dump());
  }
  EXPECT_EQ(agent::evaluation_turn(gpu_evaluation(check, trace::EvaluationStatus::passed),
                                   trace::Trace{}, source)
                .category,
            TurnCategory::correct);
}

TEST(RemoteExecutor, AResultOfTheWrongShapeIsABadResponse) {
  const exec::CheckReport check = built(fill_kernel("round trip"));
  EXPECT_EQ(agent::read_result(nlohmann::ordered_json::array(), "", check).error().kind,
            util::ErrorKind::bad_response);
  auto wire = nlohmann::ordered_json::parse(
      exec::to_json(gpu_evaluation(check, trace::EvaluationStatus::passed), gemm()).dump());
  wire["trace"]["evaluation"]["ptxbench"]["dynamic"]["verdict"] = "sometimes";
  auto bad = agent::read_result(wire, "", check);
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("unknown dynamic state"), std::string::npos);
  wire["check"]["outcome"] = "compile_error";
  EXPECT_NE(agent::read_result(wire, "", check).error().message.find("build"), std::string::npos);
}

TEST(RemoteExecutor, AKernelThatBuildsIsEvaluatedByTheServiceAndACompileErrorNeverTravels) {
  ScratchDir state;
  LiveService live(state.path());
  auto transport = model::make_curl_transport();
  RemoteExecutor executor(*tools().checker, *transport, remote({live.url() + "/"}));
  EXPECT_EQ(executor.name(), "remote");
  auto turn = executor.evaluate(fill_kernel("remote turn"), gemm(), compile::Arch::sm_90a);
  ASSERT_TRUE(turn) << turn.error().message;
  EXPECT_EQ(turn->category, TurnCategory::static_only); // the service has no GPU either
  EXPECT_NE(turn->feedback.find("Compilation succeeded"), std::string::npos) << turn->feedback;
  EXPECT_NE(turn->feedback.find("Not run: correctness, timing"), std::string::npos)
      << turn->feedback;
  ASSERT_EQ(turn->evaluation.traces.size(), 1u);
  EXPECT_EQ(turn->evaluation.traces[0].definition, "gemm_n7168_k5120");
  EXPECT_EQ(turn->evaluation.static_verdict, "absent");
  EXPECT_EQ(live.service().health().workers[0].finished, 1);

  auto broken = executor.evaluate("not CUDA\n", gemm(), compile::Arch::sm_90a);
  ASSERT_TRUE(broken) << broken.error().message;
  EXPECT_EQ(broken->category, TurnCategory::compile);
  EXPECT_EQ(live.service().health().workers[0].finished, 1) << "a compile error was sent";
}

TEST(RemoteExecutor, InfrastructureFailuresAreErrorsNotVerdicts) {
  auto transport = model::make_curl_transport();
  const std::string source = fill_kernel("remote turn");
  std::string down_url;
  {
    ScratchDir state;
    LiveService gone(state.path());
    down_url = gone.url();
  }
  RemoteExecutor down(*tools().checker, *transport, remote({down_url}));
  auto refused = down.evaluate(source, gemm(), compile::Arch::sm_90a);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().kind, util::ErrorKind::transport) << refused.error().message;

  StandIn overloaded([](const httplib::Request&, httplib::Response& response) {
    json_reply(response, {{"error", "backend overloaded"}}, 503);
  });
  auto status = RemoteExecutor(*tools().checker, *transport, remote({overloaded.url()}))
                    .evaluate(source, gemm(), compile::Arch::sm_90a);
  ASSERT_FALSE(status);
  EXPECT_EQ(status.error().kind, util::ErrorKind::http_status);
  EXPECT_NE(status.error().message.find("HTTP 503: backend overloaded"), std::string::npos);

  StandIn failing([](const httplib::Request& request, httplib::Response& response) {
    if (request.path == "/evaluate")
      return json_reply(response, {{"task_id", std::string(32, 'c')}});
    json_reply(response, {{"status", "failed"}, {"error", "nvcc is missing"}});
  });
  auto failed = RemoteExecutor(*tools().checker, *transport, remote({failing.url()}))
                    .evaluate(source, gemm(), compile::Arch::sm_90a);
  ASSERT_FALSE(failed);
  EXPECT_NE(failed.error().message.find("nvcc is missing"), std::string::npos);

  StandIn stuck([](const httplib::Request& request, httplib::Response& response) {
    if (request.path == "/evaluate")
      return json_reply(response, {{"task_id", std::string(32, 'd')}});
    json_reply(response, {{"status", "queued"}});
  });
  RemoteOptions patient = remote({stuck.url()});
  patient.max_wait = std::chrono::milliseconds(300);
  auto late = RemoteExecutor(*tools().checker, *transport, patient)
                  .evaluate(source, gemm(), compile::Arch::sm_90a);
  ASSERT_FALSE(late);
  EXPECT_EQ(late.error().kind, util::ErrorKind::timeout);

  StandIn garbled([](const httplib::Request&, httplib::Response& response) {
    response.set_content("<html>proxy error</html>", "text/html");
  });
  auto garbage = RemoteExecutor(*tools().checker, *transport, remote({garbled.url()}))
                     .evaluate(source, gemm(), compile::Arch::sm_90a);
  ASSERT_FALSE(garbage);
  EXPECT_EQ(garbage.error().kind, util::ErrorKind::bad_response);
}

TEST(RemoteExecutor, OfSeveralServicesTheOneWithTheShortestQueueGetsTheTask) {
  auto transport = model::make_curl_transport();
  auto service = [](int queue, std::string name) {
    return [queue, name](const httplib::Request& request, httplib::Response& response) {
      if (request.path == "/health")
        return json_reply(response, {{"status", "ok"}, {"queue_size", queue}});
      if (request.path == "/evaluate")
        return json_reply(response, {{"task_id", std::string(32, 'e')}});
      json_reply(response, {{"status", "failed"}, {"error", "answered by " + name}});
    };
  };
  StandIn busy(service(5, "busy")), idle(service(0, "idle")), busier(service(9, "busier"));
  std::string down_url;
  {
    ScratchDir state;
    LiveService gone(state.path());
    down_url = gone.url();
  }
  RemoteExecutor executor(*tools().checker, *transport,
                          remote({down_url, busy.url(), idle.url(), busier.url()}));
  auto answer = executor.evaluate(fill_kernel("remote turn"), gemm(), compile::Arch::sm_90a);
  ASSERT_FALSE(answer);
  EXPECT_NE(answer.error().message.find("answered by idle"), std::string::npos)
      << answer.error().message;
  EXPECT_EQ(busy.requests(), 1); // its /health only
  EXPECT_EQ(busier.requests(), 1);

  RemoteExecutor none(*tools().checker, *transport, remote({down_url, down_url + "0"}));
  auto nobody = none.evaluate(fill_kernel("remote turn"), gemm(), compile::Arch::sm_90a);
  ASSERT_FALSE(nobody);
  EXPECT_NE(nobody.error().message.find("no evaluation service is taking tasks"),
            std::string::npos);
}

TEST(RemoteExecutor, AWrongTypedFieldInTheServicesAnswerNamesItsPath) {
  auto answer = agent::read_task_answer(nlohmann::ordered_json{{"status", "failed"}, {"error", 7}},
                                        "task c on http://h");
  ASSERT_FALSE(answer);
  EXPECT_EQ(answer.error().kind, util::ErrorKind::bad_response);
  EXPECT_EQ(answer.error().message, "task c on http://h: $.error: expected a string, got integer");
  auto read = agent::read_task_answer(nlohmann::ordered_json{{"status", "queued"}}, "t");
  ASSERT_TRUE(read) << read.error().message;
  EXPECT_EQ(read->error, "no reason given");

  auto transport = model::make_curl_transport();
  auto health = [](nlohmann::ordered_json queue) {
    return [queue](const httplib::Request&, httplib::Response& response) {
      json_reply(response, {{"status", "ok"}, {"queue_size", queue}});
    };
  };
  StandIn garbled(health("5")), also(health(nullptr));
  auto none = RemoteExecutor(*tools().checker, *transport, remote({garbled.url(), also.url()}))
                  .evaluate(fill_kernel("remote turn"), gemm(), compile::Arch::sm_90a);
  ASSERT_FALSE(none);
  EXPECT_NE(none.error().message.find("GET " + garbled.url() +
                                      "/health: $.queue_size: expected an integer, got string"),
            std::string::npos)
      << none.error().message;
}

TEST(RemoteExecutor, TheBearerTokenTravelsAndIsNeverEchoed) {
  ScratchDir state;
  service::HttpOptions http_options;
  http_options.token = "tok-123456789";
  LiveService live(state.path(), http_options);
  auto transport = model::make_curl_transport();
  auto without =
      RemoteExecutor(*tools().checker, *transport, remote({live.url()}))
          .evaluate("not CUDA, but built here first\n#error stop", gemm(), compile::Arch::sm_90a);
  ASSERT_TRUE(without); // a compile error never reaches the service
  auto denied = RemoteExecutor(*tools().checker, *transport, remote({live.url()}))
                    .evaluate(fill_kernel("remote turn"), gemm(), compile::Arch::sm_90a);
  ASSERT_FALSE(denied);
  EXPECT_NE(denied.error().message.find("HTTP 401"), std::string::npos);
  RemoteOptions with = remote({live.url()});
  with.token = model::Secret("tok-123456789");
  auto turn = RemoteExecutor(*tools().checker, *transport, with)
                  .evaluate(fill_kernel("remote turn"), gemm(), compile::Arch::sm_90a);
  ASSERT_TRUE(turn) << turn.error().message;
  EXPECT_EQ(turn->category, TurnCategory::static_only);
}

TEST(RemoteExecutor, ServiceUrlsMustBeHttp) {
  EXPECT_TRUE(agent::check_service_urls({"http://127.0.0.1:8000", "https://gpu.example"}));
  auto bad = agent::check_service_urls({"127.0.0.1:8000"});
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("expected an http:// or https:// URL"), std::string::npos);
  EXPECT_FALSE(agent::check_service_urls({"http://"}));
}
