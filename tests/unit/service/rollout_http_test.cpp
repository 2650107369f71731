// The service's /v1 endpoints over a real service without a GPU (evaluations stop after the
// static check): the first-turn prompt, rollouts stepped over HTTP through the service's own
// queue, a finished task's feedback as the loop renders it, and the errors of each.
#include "agent/plan.hpp"
#include "pack/manifest.hpp"
#include "rollout/rollouts.hpp"
#include "service/task_executor.hpp"
#include "service_test_support.hpp"
#include "support/real_data.hpp"

#include <gtest/gtest.h>

namespace ptxbench::service::testing {
namespace {

using Json = nlohmann::ordered_json;

constexpr const char* kGemmProblem = "gemm_n7168_k5120";

std::string compile_error_kernel() {
  return fill_kernel("broken") + "\nint broken = ;\n";
}

std::string fenced_cuda(const std::string& code) {
  return "```cuda\n" + code + "\n```\n";
}

// A service, its rollouts (an executor over its own queue per language) and its HTTP server.
class RolloutServer {
public:
  explicit RolloutServer(const std::filesystem::path& state, bool with_rollouts = true) {
    auto started = Service::start(*tools().checker, *tools().suite, options_for(state));
    if (!started)
      throw std::runtime_error(started.error().message);
    m_service = std::move(*started);
    HttpOptions http;
    http.checker = tools().checker.get();
    if (with_rollouts) {
      agent::RunPlan defaults;
      m_executor = std::make_unique<TaskExecutor>(*tools().checker, *m_service,
                                                  agent::eval_options(defaults), "rollouts");
      rollout::RolloutDeps deps;
      deps.root = state / "rollouts";
      deps.suite = tools().suite.get();
      deps.manifest = &test_support::real_manifest();
      deps.executor = [this](compile::Language) -> agent::Executor& { return *m_executor; };
      auto opened = rollout::Rollouts::open(std::move(deps));
      if (!opened)
        throw std::runtime_error(opened.error().message);
      m_rollouts = std::move(*opened);
      http.rollouts = m_rollouts.get();
    }
    m_server = std::make_unique<HttpServer>(*m_service, http);
    auto url = m_server->start();
    if (!url)
      throw std::runtime_error(url.error().message);
    m_url = *url;
  }
  ~RolloutServer() {
    m_server->stop();
    m_service->stop();
  }
  RolloutServer(const RolloutServer&) = delete;
  RolloutServer& operator=(const RolloutServer&) = delete;
  const std::string& url() const { return m_url; }

private:
  std::unique_ptr<Service> m_service;
  std::unique_ptr<TaskExecutor> m_executor;
  std::unique_ptr<rollout::Rollouts> m_rollouts;
  std::unique_ptr<HttpServer> m_server;
  std::string m_url;
};

Answer post(const RolloutServer& server, const std::string& path, const Json& body) {
  return http(server.url(), "POST", path, body.dump());
}

TEST(ServiceRollouts, ThePromptIsTheLoopsOpeningAndABadBodyNamesItsPath) {
  ScratchDir dir;
  RolloutServer server(dir.path());
  Answer prompt = post(server, "/v1/prompt", Json{{"problem", kGemmProblem}});
  ASSERT_EQ(prompt.status, 200) << prompt.body;
  ASSERT_EQ(prompt.json["messages"].size(), 2u);
  EXPECT_EQ(prompt.json["messages"][0]["role"], "system");
  EXPECT_NE(prompt.json["messages"][1]["content"].get<std::string>().find(kGemmProblem),
            std::string::npos);
  Answer bad = post(server, "/v1/prompt", Json{{"problem", kGemmProblem}, {"arch", 90}});
  EXPECT_EQ(bad.status, 400);
  EXPECT_NE(bad.json.value("error", "").find("$.arch"), std::string::npos) << bad.body;
  Answer unknown = post(server, "/v1/prompt", Json{{"problem", "nope"}});
  EXPECT_EQ(unknown.status, 404);
}

TEST(ServiceRollouts, ARolloutIsSteppedOverHttpThroughTheServicesOwnQueue) {
  ScratchDir dir;
  RolloutServer server(dir.path());
  Answer created = post(server, "/v1/rollouts", Json{{"problem", kGemmProblem}, {"max_turns", 3}});
  ASSERT_EQ(created.status, 200) << created.body;
  const std::string id = created.json["rollout_id"];
  const std::string step = "/v1/rollouts/" + id + "/step";

  Answer built = post(server, step, Json{{"reply", fenced_cuda(fill_kernel("http rollout"))}});
  ASSERT_EQ(built.status, 200) << built.body;
  ASSERT_EQ(built.json["stepped"].size(), 1u);
  const Json& first = built.json["stepped"][0];
  EXPECT_EQ(first["category"], "static_only"); // no GPU here: built, not judged
  EXPECT_NE(first["feedback"].get<std::string>().find("Compilation succeeded"), std::string::npos);
  EXPECT_EQ(built.json["messages"].size(), 4u);

  Answer broken = post(server, step, Json{{"reply", fenced_cuda(compile_error_kernel())}});
  ASSERT_EQ(broken.status, 200) << broken.body;
  const std::string feedback = broken.json["stepped"][0]["feedback"];
  EXPECT_EQ(broken.json["stepped"][0]["category"], "compile");
  EXPECT_NE(feedback.find("Compilation FAILED"), std::string::npos);
  EXPECT_NE(feedback.find("Please fix the issues"), std::string::npos);

  Answer seen = http(server.url(), "GET", "/v1/rollouts/" + id);
  ASSERT_EQ(seen.status, 200);
  EXPECT_EQ(seen.json["turns"].size(), 2u);
  EXPECT_EQ(seen.json["counted_turns"], 2);

  Answer closed = post(server, "/v1/rollouts/" + id + "/close", Json::object());
  ASSERT_EQ(closed.status, 200);
  EXPECT_EQ(closed.json["exit"], "cancelled");
  Answer late = post(server, step, Json{{"reply", "x"}});
  EXPECT_EQ(late.status, 409) << late.body;
  Answer retry = post(server, "/v1/rollouts/" + id + "/retry", Json::object());
  EXPECT_EQ(retry.status, 409);
  EXPECT_EQ(http(server.url(), "GET", "/v1/rollouts/00000000-1").status, 404);
  Answer mistyped = post(server, step, Json{{"reply", 7}});
  EXPECT_EQ(mistyped.status, 400);
}

TEST(ServiceRollouts, AFinishedTasksFeedbackIsTheLoopsForTheSameKernel) {
  ScratchDir dir;
  RolloutServer server(dir.path());
  const std::string source = fill_kernel("feedback");
  // A rollout's turn is a `ptxbench run` turn: with the memory check, as /sanitize asks.
  const std::string task = submit(server.url(), source, "/sanitize");
  Answer done = http(server.url(), "GET", "/tasks/" + task + "?timeout=300");
  ASSERT_EQ(done.json.value("status", ""), "completed") << done.body;
  Answer rendered = post(server, "/v1/feedback", Json{{"task_id", task}, {"source", source}});
  ASSERT_EQ(rendered.status, 200) << rendered.body;
  EXPECT_EQ(rendered.json["category"], "static_only");
  // The same kernel as a rollout's turn: the same text.
  Answer created = post(server, "/v1/rollouts", Json{{"problem", kGemmProblem}});
  ASSERT_EQ(created.status, 200);
  Answer stepped =
      post(server, "/v1/rollouts/" + created.json["rollout_id"].get<std::string>() + "/step",
           Json{{"reply", fenced_cuda(source)}});
  ASSERT_EQ(stepped.status, 200) << stepped.body;
  EXPECT_EQ(rendered.json["feedback"], stepped.json["stepped"][0]["feedback"]);

  const std::string broken = compile_error_kernel();
  const std::string failed = submit(server.url(), broken);
  http(server.url(), "GET", "/tasks/" + failed + "?timeout=300");
  Answer compile = post(server, "/v1/feedback",
                        Json{{"task_id", failed}, {"source", broken}, {"target_speedup", nullptr}});
  ASSERT_EQ(compile.status, 200) << compile.body;
  EXPECT_EQ(compile.json["category"], "compile");
  EXPECT_NE(compile.json["feedback"].get<std::string>().find("Please fix the issues"),
            std::string::npos);

  Answer other = post(server, "/v1/feedback", Json{{"task_id", task}, {"source", broken}});
  EXPECT_EQ(other.status, 400) << other.body;
  Answer unknown =
      post(server, "/v1/feedback", Json{{"task_id", std::string(32, 'a')}, {"source", source}});
  EXPECT_EQ(unknown.status, 404);
  Answer missing = post(server, "/v1/feedback", Json{{"task_id", task}});
  EXPECT_EQ(missing.status, 400);
  EXPECT_NE(missing.json.value("error", "").find("source"), std::string::npos);
}

TEST(ServiceRollouts, AServerWithoutRolloutsSaysSo) {
  ScratchDir dir;
  RolloutServer server(dir.path(), /*with_rollouts=*/false);
  Answer created = post(server, "/v1/rollouts", Json{{"problem", kGemmProblem}});
  EXPECT_EQ(created.status, 404);
  EXPECT_NE(created.json.value("error", "").find("no rollouts"), std::string::npos);
  EXPECT_EQ(post(server, "/v1/prompt", Json{{"problem", kGemmProblem}}).status, 404);
  EXPECT_EQ(http(server.url(), "GET", "/v1/rollouts/abc").status, 404);
}

} // namespace
} // namespace ptxbench::service::testing
