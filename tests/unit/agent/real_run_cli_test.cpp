// `ptxbench run` as a user meets it with a real model and a flaky service (issue 17): an
// evaluation service that is down, model settings that change before a resume, flags a resume
// cannot honour, missing credentials. The real binary, a replay model or a model server on
// loopback, the real nvcc and SASS scan.
#include "store/run_store.hpp"
#include "support/fill_kernel.hpp"
#include "support/loopback_model.hpp"
#include "support/loopback_server.hpp"
#include "support/ptxbench_cli.hpp"
#include "support/scratch_dir.hpp"
#include "util/fs.hpp"

#include <atomic>
#include <csignal>
#include <gtest/gtest.h>
#include <mutex>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace ptxbench;
using test_support::chat_body;
using test_support::LoopbackServer;
using test_support::reply_json;
using test_support::run_ptxbench;
using test_support::ScratchDir;
using test_support::write_registry;

namespace {

// A loopback port nothing listens on (bound, then closed).
int closed_port() {
  int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t size = sizeof address;
  EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&address), size), 0);
  EXPECT_EQ(::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &size), 0);
  ::close(fd);
  return ntohs(address.sin_port);
}

// A registry with the replay model "rep" whose file holds one reply per kernel given.
std::filesystem::path replay_registry(const ScratchDir& dir,
                                      const std::vector<std::string>& texts) {
  std::string lines;
  for (const auto& text : texts)
    lines += nlohmann::json{{"text", text}}.dump() + "\n";
  EXPECT_TRUE(util::write_file_atomic(dir.path() / "replies.jsonl", lines));
  const nlohmann::json model{
      {"provider", "replay"}, {"model", "rep"}, {"replay_file", "replies.jsonl"}};
  auto path = dir.path() / "models.json";
  EXPECT_TRUE(util::write_file_atomic(path, nlohmann::json{{"models", {{"rep", model}}}}.dump()));
  return path;
}

// A plan whose evaluator retries are quick.
std::filesystem::path quick_retry_plan(const ScratchDir& dir) {
  auto path = dir.path() / "plan.json";
  EXPECT_TRUE(util::write_file_atomic(
      path, R"({"models": ["rep"], "eval_attempts": 3, "eval_retry_delay_s": 0.05,
              "target_speedup": 0})"));
  return path;
}

struct StoredRun {
  std::vector<store::TrajectoryRecord> trajectories;
  std::vector<store::FinishedTurn> turns; // of the first trajectory
  std::int64_t model_calls = 0;
};

StoredRun read_run(const std::filesystem::path& dir) {
  StoredRun run;
  auto store = store::RunStore::open_existing(dir);
  EXPECT_TRUE(store) << store.error().message;
  if (!store)
    return run;
  run.trajectories = *(*store)->trajectories();
  if (run.trajectories.empty())
    return run;
  run.turns = *(*store)->finished_turns(run.trajectories[0].id);
  run.model_calls = (*store)->usage(run.trajectories[0].id)->calls;
  return run;
}

} // namespace

// On main each infra turn asked the replay model again, the exhausted replay then finished the
// trajectory as model_error, the command exited 0 and no reason was stored.
TEST(RealRunCli, AnEvaluationServiceOutageRetriesTheSameReplyAndLeavesTheRunResumable) {
  ScratchDir dir, cache;
  auto registry = replay_registry(dir, {"```cuda\n" + test_support::fill_kernel("down") + "```\n"});
  const std::string service = "http://127.0.0.1:" + std::to_string(closed_port());
  auto run_dir = dir.path() / "run";
  auto first = run_ptxbench({"run", "--plan", quick_retry_plan(dir).string(), "--registry",
                             registry.string(), "--model", "rep", "--variant", "none", "--turns",
                             "2", "--quiet", "--eval-service", service, "--out", run_dir.string()},
                            cache);
  EXPECT_EQ(first.exit_code, 1) << first.err << first.out;
  EXPECT_NE(first.err.find("turn not evaluated (attempt 1 of 3)"), std::string::npos) << first.err;
  EXPECT_NE(first.err.find("attempt 2 of 3"), std::string::npos) << first.err;
  EXPECT_NE(first.out.find("stopped"), std::string::npos) << first.out;
  EXPECT_NE(first.out.find("3 of 3 attempts made"), std::string::npos) << first.out;

  StoredRun stored = read_run(run_dir);
  ASSERT_EQ(stored.trajectories.size(), 1u);
  EXPECT_EQ(stored.trajectories[0].status, store::TrajectoryStatus::running);
  EXPECT_EQ(stored.model_calls, 1);
  ASSERT_EQ(stored.turns.size(), 1u);
  EXPECT_EQ(stored.turns[0].category, store::TurnCategory::infra);
  ASSERT_TRUE(stored.turns[0].infra_reason);
  EXPECT_NE(stored.turns[0].infra_reason->find("evaluation failed"), std::string::npos);
  EXPECT_NE(stored.turns[0].infra_reason->find("127.0.0.1"), std::string::npos)
      << *stored.turns[0].infra_reason;

  // Still down: resume judges the kept reply again and asks the model for nothing.
  auto resumed = run_ptxbench({"run", "--resume", run_dir.string(), "--quiet"}, cache);
  EXPECT_EQ(resumed.exit_code, 1) << resumed.err << resumed.out;
  EXPECT_NE(resumed.err.find("no new model call"), std::string::npos) << resumed.err;
  stored = read_run(run_dir);
  EXPECT_EQ(stored.trajectories[0].status, store::TrajectoryStatus::running);
  EXPECT_EQ(stored.model_calls, 1);
  ASSERT_EQ(stored.turns.size(), 2u);
  EXPECT_EQ(stored.turns[1].reply, stored.turns[0].reply);
}

namespace {

// The registry of the loopback model "loop" with `max_output_tokens`.
std::filesystem::path loop_registry(const ScratchDir& dir, const std::string& base_url,
                                    int max_output_tokens) {
  auto path = dir.path() / "models.json";
  const nlohmann::json model{{"provider", "openai"},
                             {"base_url", base_url + "/v1"},
                             {"model", "m"},
                             {"max_attempts", 1},
                             {"max_output_tokens", max_output_tokens}};
  EXPECT_TRUE(util::write_file_atomic(path, nlohmann::json{{"models", {{"loop", model}}}}.dump()));
  return path;
}

} // namespace

// On main only the model's name was stored, a changed max_output_tokens resumed silently and
// `--resume DIR --turns 1 --model demo` ignored both flags.
TEST(RealRunCli, AResumeRefusesChangedModelSettingsUnlessOverriddenAndRecordsTheOverride) {
  ScratchDir dir, cache;
  std::mutex mutex;
  std::vector<std::int64_t> max_tokens;
  LoopbackServer server([&](int, const httplib::Request& request, httplib::Response& response) {
    std::lock_guard lock(mutex);
    max_tokens.push_back(nlohmann::json::parse(request.body).value("max_tokens", -1));
    if (max_tokens.size() == 2)
      return reply_json(response, {{"error", "overloaded"}}, 503);
    reply_json(response, chat_body("no code here"));
  });
  auto registry = loop_registry(dir, server.base_url(), 100);
  auto plan = dir.path() / "plan.json";
  ASSERT_TRUE(
      util::write_file_atomic(plan, R"({"models": ["loop"], "max_infra_retries": 0, "turns": 2})"));
  auto run_dir = dir.path() / "run";
  auto first =
      run_ptxbench({"run", "--plan", plan.string(), "--registry", registry.string(), "--variant",
                    "none", "--static-only", "--quiet", "--out", run_dir.string()},
                   cache);
  EXPECT_EQ(first.exit_code, 1) << first.err << first.out; // stopped by the 503: resumable

  loop_registry(dir, server.base_url(), 200);
  auto refused = run_ptxbench({"run", "--resume", run_dir.string(), "--quiet"}, cache);
  EXPECT_EQ(refused.exit_code, 2) << refused.err;
  EXPECT_NE(refused.err.find("max_output_tokens 100 -> 200"), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("--override"), std::string::npos) << refused.err;

  auto flags = run_ptxbench(
      {"run", "--resume", run_dir.string(), "--turns", "1", "--model", "demo", "--quiet"}, cache);
  EXPECT_EQ(flags.exit_code, 2) << flags.err;
  EXPECT_NE(flags.err.find("--model cannot be used with --resume"), std::string::npos) << flags.err;
  auto turns_only = run_ptxbench({"run", "--resume", run_dir.string(), "--turns", "1"}, cache);
  EXPECT_EQ(turns_only.exit_code, 2) << turns_only.err;
  EXPECT_NE(turns_only.err.find("--turns cannot be used with --resume"), std::string::npos);

  auto resumed =
      run_ptxbench({"run", "--resume", run_dir.string(), "--quiet", "--override"}, cache);
  EXPECT_EQ(resumed.exit_code, 0) << resumed.err << resumed.out;
  EXPECT_NE(resumed.err.find("override on resume: max_output_tokens 100 -> 200"), std::string::npos)
      << resumed.err;
  {
    std::lock_guard lock(mutex);
    EXPECT_EQ(max_tokens, (std::vector<std::int64_t>{100, 100, 200}));
  }

  auto store = store::RunStore::open_existing(run_dir);
  ASSERT_TRUE(store);
  auto trajectory = (*(*store)->trajectories())[0];
  auto turns = *(*store)->finished_turns(trajectory.id);
  ASSERT_EQ(turns.size(), 3u); // extraction, infra (503), extraction
  ASSERT_TRUE(turns[0].model_settings_id && turns[2].model_settings_id);
  auto before = *(*store)->model_settings_by_id(*turns[0].model_settings_id);
  auto after = *(*store)->model_settings_by_id(*turns[2].model_settings_id);
  ASSERT_TRUE(before && after);
  EXPECT_EQ(before->reason, "run started");
  EXPECT_EQ(nlohmann::json::parse(before->settings_json)["max_output_tokens"], 100);
  EXPECT_EQ(nlohmann::json::parse(after->settings_json)["max_output_tokens"], 200);
  EXPECT_NE(after->reason.find("override on resume"), std::string::npos);
}

// On main a missing API key was found after the run folder existed, with exit 1.
TEST(RealRunCli, AMissingApiKeyOrABadEndpointIsRefusedBeforeTheRunFolderExists) {
  ScratchDir dir, cache;
  const std::vector<std::pair<nlohmann::json, std::string>> cases{
      {{{"provider", "openai"},
        {"base_url", "http://127.0.0.1:9/v1"},
        {"model", "m"},
        {"api_key_env", "PTXBENCH_TEST_KEY_THAT_IS_NOT_SET"}},
       "PTXBENCH_TEST_KEY_THAT_IS_NOT_SET"},
      {{{"provider", "openai"}, {"base_url", "localhost:8000/v1"}, {"model", "m"}},
       "is not an http:// or https:// URL"}};
  for (const auto& [entry, message] : cases) {
    auto registry = dir.path() / "models.json";
    ASSERT_TRUE(
        util::write_file_atomic(registry, nlohmann::json{{"models", {{"key", entry}}}}.dump()));
    auto run_dir = dir.path() / "run";
    auto result = run_ptxbench({"run", "--registry", registry.string(), "--model", "key",
                                "--variant", "none", "--quiet", "--out", run_dir.string()},
                               cache);
    EXPECT_EQ(result.exit_code, 2) << result.err;
    EXPECT_NE(result.err.find(message), std::string::npos) << result.err;
    EXPECT_FALSE(std::filesystem::exists(run_dir));
  }
}

// On main an attempt was stored only when it ended: a SIGKILL during the call lost it, though
// the report says the usage of abandoned turns is included.
TEST(RealRunCli, AnAttemptKilledInFlightIsCountedWithItsUsageMarkedUnknown) {
  ScratchDir dir, cache;
  std::atomic<int> requests{0};
  LoopbackServer* self = nullptr;
  LoopbackServer server([&](int, const httplib::Request&, httplib::Response& response) {
    if (requests.fetch_add(1) == 1)
      self->hold(std::chrono::seconds(60)); // the run dies waiting for its second reply
    reply_json(response, chat_body("no code"));
  });
  self = &server;
  auto registry = write_registry(dir, server.base_url());
  auto run_dir = dir.path() / "run";
  pid_t pid = test_support::spawn_ptxbench({"run", "--registry", registry.string(), "--model",
                                            "loop", "--variant", "none", "--turns", "2",
                                            "--static-only", "--quiet", "--out", run_dir.string()},
                                           cache);
  ASSERT_GT(pid, 0);
  for (int i = 0; i < 3000 && requests.load() < 2; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ASSERT_EQ(requests.load(), 2) << "the run never reached its second model call";
  ASSERT_EQ(kill(pid, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  server.release();

  {
    auto store = store::RunStore::open_existing(run_dir);
    ASSERT_TRUE(store);
    auto trajectory = (*(*store)->trajectories())[0];
    auto usage = *(*store)->usage(trajectory.id);
    EXPECT_EQ(usage.calls, 2);
    EXPECT_EQ(usage.calls_in_flight, 1);
    EXPECT_EQ(usage.input_tokens, 100); // the first call's; the second's is unknown
  }
  auto markdown = run_ptxbench({"report", run_dir.string()}, cache);
  EXPECT_EQ(markdown.exit_code, 0) << markdown.err;
  EXPECT_NE(markdown.out.find("2 (1 cut off, usage unknown)"), std::string::npos) << markdown.out;
  auto json_report = run_ptxbench({"report", run_dir.string(), "--format", "json"}, cache);
  EXPECT_EQ(json_report.exit_code, 0) << json_report.err;
  EXPECT_NE(json_report.out.find("\"attempts_usage_unknown\": 1"), std::string::npos)
      << json_report.out;

  // Resumed, the attempt is completed by a new one; the killed one stays on record.
  auto resumed = run_ptxbench({"run", "--resume", run_dir.string(), "--quiet"}, cache);
  EXPECT_EQ(resumed.exit_code, 0) << resumed.err;
  auto store = store::RunStore::open_existing(run_dir);
  ASSERT_TRUE(store);
  auto usage = *(*store)->usage((*(*store)->trajectories())[0].id);
  EXPECT_EQ(usage.calls, 3);
  EXPECT_EQ(usage.calls_in_flight, 1);
  EXPECT_EQ(usage.input_tokens, 200);
}

// llama.cpp says where its time went; the store keeps it beside the call's wall-clock latency.
TEST(RealRunCli, AServerThatReportsItsTimingsHasThemStoredWithTheCall) {
  ScratchDir dir, cache;
  LoopbackServer server([&](int, const httplib::Request&, httplib::Response& response) {
    auto body = chat_body("no code");
    body["timings"] = {
        {"prompt_n", 100}, {"prompt_ms", 12.5}, {"predicted_n", 50}, {"predicted_ms", 80.25}};
    reply_json(response, body);
  });
  auto registry = write_registry(dir, server.base_url());
  auto run_dir = dir.path() / "run";
  auto result =
      run_ptxbench({"run", "--registry", registry.string(), "--model", "loop", "--variant", "none",
                    "--turns", "1", "--static-only", "--quiet", "--out", run_dir.string()},
                   cache);
  EXPECT_EQ(result.exit_code, 0) << result.err;
  auto store = store::RunStore::open_existing(run_dir);
  ASSERT_TRUE(store);
  auto turns = *(*store)->finished_turns((*(*store)->trajectories())[0].id);
  ASSERT_EQ(turns.size(), 1u);
  auto calls = *(*store)->model_calls(turns[0].id);
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_EQ(calls[0].state, store::CallState::ended);
  EXPECT_EQ(calls[0].server_prompt_ms, 12.5);
  EXPECT_EQ(calls[0].server_generation_ms, 80.25);
  EXPECT_GT(calls[0].latency_ms, 0);
}

// On main the first Ctrl-C printed nothing while the run waited for the model's reply.
TEST(RealRunCli, TheFirstCtrlCSaysWhatTheRunWaitsForAndTheSecondStopsItAtOnce) {
  ScratchDir dir, cache;
  std::atomic<int> requests{0};
  LoopbackServer* self = nullptr;
  LoopbackServer server([&](int, const httplib::Request&, httplib::Response& response) {
    requests.fetch_add(1);
    self->hold(std::chrono::seconds(60));
    reply_json(response, chat_body("no code"));
  });
  self = &server;
  auto registry = write_registry(dir, server.base_url());
  auto err = dir.path() / "err.txt";
  pid_t pid = test_support::spawn_ptxbench(
      {"run", "--registry", registry.string(), "--model", "loop", "--variant", "none", "--turns",
       "2", "--static-only", "--out", (dir.path() / "run").string()},
      cache, err);
  ASSERT_GT(pid, 0);
  for (int i = 0; i < 3000 && requests.load() == 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ASSERT_EQ(requests.load(), 1) << "the run never called the model";
  ASSERT_EQ(kill(pid, SIGINT), 0);
  std::string text;
  for (int i = 0; i < 100 && text.find("waiting for") == std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    auto read = util::read_file(err);
    text = read ? *read : std::string();
  }
  EXPECT_NE(text.find("stop requested"), std::string::npos) << text;
  EXPECT_NE(text.find("waiting for 1 model call in flight"), std::string::npos) << text;
  EXPECT_NE(text.find("Ctrl-C again"), std::string::npos) << text;
  ASSERT_EQ(kill(pid, SIGINT), 0);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGINT) << status;
  server.release();
}
