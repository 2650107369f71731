// `ptxbench serve`, `run --eval-service` and `demo --eval-service` end to end: the real binary,
// the real nvcc and SASS scan, the service on loopback (no GPU here), a model server on
// loopback; a service that dies mid-run costs infra turns and the run resumes.
#include "service/fleet_host.hpp"
#include "service_test_support.hpp"
#include "store/run_store.hpp"
#include "support/loopback_model.hpp"
#include "support/loopback_server.hpp"
#include "support/postgres_server.hpp"
#include "support/ptxbench_cli.hpp"
#include "util/fs.hpp"

#include <csignal>
#include <cstdio>
#include <fcntl.h>
#include <mutex>
#include <poll.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace ptxbench;
using namespace ptxbench::service::testing;
using ptxbench::service::FleetHost;
using ptxbench::service::FleetHostOptions;
using test_support::cache_env;
using test_support::chat_body;
using test_support::LoopbackServer;
using test_support::reply_json;
using test_support::run_ptxbench;
using test_support::write_registry;

namespace {

// `ptxbench serve --port 0` in the background; the URL is its first line on stdout.
class ServeProcess {
public:
  ServeProcess(const std::filesystem::path& state, const ScratchDir& cache) {
    int out[2];
    if (::pipe(out) != 0)
      throw std::runtime_error("pipe");
    std::vector<std::string> argv{PTXBENCH_BINARY, "serve",       "--port", "0",
                                  "--state",       state.string()};
    const std::string path = "PATH=" + std::string(std::getenv("PATH")) + ":/usr/local/cuda/bin";
    const std::string cache_dir = cache_env(cache);
    m_pid = ::fork();
    if (m_pid == 0) {
      ::putenv(const_cast<char*>(path.c_str()));
      ::putenv(const_cast<char*>(cache_dir.c_str()));
      ::dup2(out[1], STDOUT_FILENO);
      std::vector<char*> raw;
      for (auto& arg : argv)
        raw.push_back(arg.data());
      raw.push_back(nullptr);
      ::execv(raw[0], raw.data());
      ::_exit(127);
    }
    ::close(out[1]);
    m_out = out[0];
    m_url = read_line(std::chrono::seconds(60));
  }
  ~ServeProcess() {
    if (m_pid > 0) {
      ::kill(m_pid, SIGKILL);
      ::waitpid(m_pid, nullptr, 0);
    }
    ::close(m_out);
  }
  const std::string& url() const { return m_url; }
  // Sends `signal` and returns the exit status (or -signal when killed by one).
  int stop(int signal) {
    ::kill(m_pid, signal);
    int status = 0;
    ::waitpid(m_pid, &status, 0);
    m_pid = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
  }

private:
  std::string read_line(std::chrono::milliseconds limit) {
    std::string line;
    char c = 0;
    pollfd fd{m_out, POLLIN, 0};
    while (::poll(&fd, 1, static_cast<int>(limit.count())) > 0 && ::read(m_out, &c, 1) == 1 &&
           c != '\n')
      line += c;
    return line;
  }
  pid_t m_pid = -1;
  int m_out = -1;
  std::string m_url;
};

} // namespace

TEST(ServeCli, PrintsItsUrlFirstAndAKilledServerLosesNoTask) {
  ScratchDir state, cache;
  std::string id;
  {
    ServeProcess serve(state.path(), cache);
    ASSERT_EQ(serve.url().rfind("http://127.0.0.1:", 0), 0u) << serve.url();
    ASSERT_EQ(http(serve.url(), "GET", "/health").json["status"], "ok");
    id = submit(serve.url(), fill_kernel("killed mid-evaluation"));
    for (int i = 0; i < 200 && http(serve.url(), "GET", "/tasks/" + id).json["status"] != "running";
         ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    ASSERT_EQ(http(serve.url(), "GET", "/tasks/" + id).json["status"], "running");
    EXPECT_EQ(serve.stop(SIGKILL), -SIGKILL);
  }
  ServeProcess again(state.path(), cache);
  Answer done = http(again.url(), "GET", "/tasks/" + id + "?timeout=300");
  EXPECT_EQ(done.json["status"], "completed") << done.body;
  EXPECT_EQ(done.json["attempts"], 2);
  EXPECT_EQ(again.stop(SIGTERM), 0); // graceful: exit status 0
}

TEST(ServeCli, TheDemoRunsItsGpuStepThroughTheService) {
  ScratchDir state, dir, cache;
  LiveService live(state.path());
  auto demo = run_ptxbench(
      {"demo", "--eval-service", live.url(), "--out", (dir.path() / "demo").string()}, cache);
  EXPECT_EQ(demo.exit_code, 0) << demo.err << demo.out;
  EXPECT_NE(demo.out.find("(remote on sm_90a)"), std::string::npos) << demo.out;
  EXPECT_NE(demo.out.find("turn 1: compile"), std::string::npos) << demo.out;
  EXPECT_NE(demo.out.find("turn 3: static_only"), std::string::npos);
  // Turn 1 did not build, so only turns 2 and 3 reached the service.
  EXPECT_EQ(live.service().health().workers[0].finished, 2);
  auto store = store::RunStore::open_existing(dir.path() / "demo");
  ASSERT_TRUE(store);
  auto turns = *(*store)->finished_turns((*(*store)->trajectories())[0].id);
  ASSERT_EQ(turns.size(), 3u);
  // Through the service too, every evaluated turn is memory-checked (POST /sanitize).
  EXPECT_NE(turns[2].feedback.value_or("").find("Not run: correctness, timing, the memory check "
                                                "and dynamic instruction counts need a GPU"),
            std::string::npos)
      << turns[2].feedback.value_or("");
  ASSERT_EQ(turns[2].evaluations.size(), 1u);
  auto bad = run_ptxbench({"demo", "--eval-service", "localhost:1"}, cache);
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("expected an http:// or https:// URL"), std::string::npos) << bad.err;
}

TEST(ServeCli, AServiceThatDiesMidRunCostsOneInfraTurnAndTheRunResumesWithItsReply) {
  ScratchDir state, dir, cache;
  auto live = std::make_unique<LiveService>(state.path());
  std::mutex mutex;
  std::vector<std::size_t> message_counts;
  bool killed = false;
  LoopbackServer model([&](int, const httplib::Request& request, httplib::Response& response) {
    const std::size_t count = nlohmann::json::parse(request.body)["messages"].size();
    std::lock_guard lock(mutex);
    message_counts.push_back(count);
    if (count == 4 && !killed) { // the service dies before the second turn is evaluated
      live->stop();
      killed = true;
    }
    reply_json(response, chat_body("```cuda\n" + fill_kernel("mid-run") + "```\n"));
  });
  auto registry = write_registry(dir, model.base_url());
  auto run_dir = dir.path() / "run";
  auto plan = dir.path() / "plan.json";
  ASSERT_TRUE(util::write_file_atomic(
      plan, R"({"models": ["loop"], "eval_attempts": 2, "eval_retry_delay_s": 0.05})"));
  auto first = run_ptxbench({"run", "--plan", plan.string(), "--registry", registry.string(),
                             "--variant", "none", "--turns", "3", "--target-speedup", "0",
                             "--quiet", "--eval-service", live->url(), "--out", run_dir.string()},
                            cache);
  EXPECT_EQ(first.exit_code, 1) << first.err << first.out;
  EXPECT_NE(first.out.find("evaluation failed"), std::string::npos) << first.out;

  {
    std::lock_guard lock(mutex);
    live = std::make_unique<LiveService>(state.path()); // same state, another port
  }
  auto resumed = run_ptxbench(
      {"run", "--resume", run_dir.string(), "--quiet", "--eval-service", live->url()}, cache);
  EXPECT_EQ(resumed.exit_code, 0) << resumed.err << resumed.out;
  EXPECT_NE(resumed.out.find("turn_budget, 3 counted turns"), std::string::npos) << resumed.out;

  auto store = store::RunStore::open_existing(run_dir);
  ASSERT_TRUE(store);
  auto trajectories = *(*store)->trajectories();
  ASSERT_EQ(trajectories.size(), 1u);
  auto turns = *(*store)->finished_turns(trajectories[0].id);
  int counted = 0, infra = 0;
  for (const auto& turn : turns) {
    if (turn.category == store::TurnCategory::infra) {
      ++infra;
      EXPECT_EQ(turn.counting, store::Counting::not_counted);
    } else {
      ++counted;
      EXPECT_EQ(turn.category, store::TurnCategory::static_only);
      ASSERT_EQ(turn.evaluations.size(), 1u);
    }
  }
  EXPECT_EQ(counted, 3);
  EXPECT_EQ(infra, 1); // the reply the dead service could not judge, judged again on resume
  // The model was asked once per counted turn: the reply of the infra turn was kept.
  std::lock_guard lock(mutex);
  EXPECT_EQ(message_counts, (std::vector<std::size_t>{2, 4, 6}));
}

// Triton candidates travel like CUDA ones (issue 31): the local gate stops a torch call, a
// kernel that passes goes to the service with its language, and the service's own gate and
// trace are Triton's.
namespace {

// A two-turn Triton run whose GPU step is `eval_args` (--eval-service URL or --broker URL): the
// first reply imports torch and stops at the local gate, the second is clean and travels.
void expect_a_triton_run_through(const std::vector<std::string>& eval_args) {
  ScratchDir dir, cache;
  std::mutex mutex;
  int calls = 0;
  LoopbackServer model([&](int, const httplib::Request&, httplib::Response& response) {
    std::lock_guard lock(mutex);
    const std::string torch = "```python\nimport torch\nimport triton\n\n@triton.jit\n"
                              "def noop(x):\n    pass\n\ndef run(A, B, C, M):\n"
                              "    C.copy_(torch.matmul(A, B.T))\n```\n";
    const std::string clean =
        "```python\nimport triton\nimport triton.language as tl\n\n@triton.jit\n"
        "def zero(c, n, BLOCK: tl.constexpr):\n"
        "    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
        "    tl.store(c + offs, tl.zeros((BLOCK,), tl.bfloat16), mask=offs < n)\n\n"
        "def run(A, B, C, M):\n"
        "    zero[(triton.cdiv(M * 7168, 1024),)](C, M * 7168, BLOCK=1024)\n```\n";
    reply_json(response, chat_body(calls++ == 0 ? torch : clean));
  });
  auto registry = write_registry(dir, model.base_url());
  auto run_dir = dir.path() / "run";
  std::vector<std::string> args{
      "run",    "--registry", registry.string(), "--model",       "loop", "--language",
      "triton", "--variant",  "default",         "--turns",       "2",    "--target-speedup",
      "0",      "--quiet",    "--out",           run_dir.string()};
  args.insert(args.end(), eval_args.begin(), eval_args.end());
  auto run = run_ptxbench(args, cache);
  ASSERT_EQ(run.exit_code, 0) << run.err << run.out;

  auto store = store::RunStore::open_existing(run_dir);
  ASSERT_TRUE(store);
  auto trajectories = *(*store)->trajectories();
  ASSERT_EQ(trajectories.size(), 1u);
  EXPECT_EQ(trajectories[0].key.language, trace::Language::triton);
  auto turns = *(*store)->finished_turns(trajectories[0].id);
  ASSERT_EQ(turns.size(), 2u);
  EXPECT_EQ(turns[0].category, store::TurnCategory::banned_library);
  EXPECT_EQ(turns[1].category, store::TurnCategory::static_only);
  ASSERT_EQ(turns[1].evaluations.size(), 1u);
  EXPECT_NE(turns[1].feedback.value_or("").find("Triton"), std::string::npos)
      << turns[1].feedback.value_or("");
}

} // namespace

TEST(ServeCli, ATritonRunIsEvaluatedThroughTheService) {
  ScratchDir state;
  LiveService live(state.path());
  expect_a_triton_run_through({"--eval-service", live.url()});
  EXPECT_EQ(live.service().health().workers[0].finished, 1) << "only the gated kernel travels";
}

TEST(ServeCli, ATritonRunIsEvaluatedThroughTheFleet) {
  test_support::PostgresServer server;
  FleetHostOptions options;
  options.broker.url = server.url();
  options.host = "triton-host";
  options.reference_cache = std::filesystem::path();
  auto host = FleetHost::start(*tools().checker, *tools().suite, options);
  ASSERT_TRUE(host) << host.error().message;
  expect_a_triton_run_through({"--broker", server.url()});
  (*host)->stop();
  EXPECT_EQ(server.psql("SELECT language || ' ' || state || ' ' || worker FROM ptxbench_tasks"),
            "triton completed triton-host/cpu")
      << "only the gated kernel travels, in its language";
}

// Every task runs its sender's native code: a server reachable beyond this machine without a
// token must be asked for in words (issue 31, "Security").
TEST(ServeCli, ListeningBeyondLoopbackWithoutATokenIsRefusedUnlessSaidInsecure) {
  ScratchDir state, cache;
  auto refused = run_ptxbench(
      {"serve", "--host", "0.0.0.0", "--port", "0", "--state", state.path().string()}, cache);
  EXPECT_EQ(refused.exit_code, 2) << refused.err;
  EXPECT_NE(refused.err.find("listens beyond this machine"), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("--insecure-no-auth"), std::string::npos) << refused.err;
  ScratchDir other;
  auto insecure =
      test_support::run_ptxbench({"serve", "--host", "0.0.0.0", "--port", "0", "--insecure-no-auth",
                                  "--state", other.path().string()},
                                 std::chrono::seconds(5), {cache_env(cache)});
  ASSERT_TRUE(insecure);
  EXPECT_NE(insecure->err.find("auth off"), std::string::npos) << insecure->err;
  ScratchDir third;
  auto guarded = test_support::run_ptxbench(
      {"serve", "--host", "0.0.0.0", "--port", "0", "--state", third.path().string()},
      std::chrono::seconds(5), {cache_env(cache), "PTXBENCH_SERVICE_TOKEN=t0ken"});
  ASSERT_TRUE(guarded);
  EXPECT_NE(guarded->err.find("auth on"), std::string::npos) << guarded->err;
}

TEST(ServeCli, AStateFolderInUseIsABadInputAndTheStartLineSaysWhetherAuthIsOn) {
  ScratchDir state, cache;
  ServeProcess serve(state.path(), cache);
  ASSERT_EQ(serve.url().rfind("http://", 0), 0u) << serve.url();
  auto second = run_ptxbench({"serve", "--port", "0", "--state", state.path().string()}, cache);
  EXPECT_EQ(second.exit_code, 2) << second.err;
  EXPECT_NE(second.err.find("in use by another ptxbench serve"), std::string::npos) << second.err;
  EXPECT_EQ(serve.stop(SIGTERM), 0);

  ScratchDir other;
  auto guarded = test_support::run_ptxbench(
      {"serve", "--port", "0", "--state", other.path().string()}, std::chrono::seconds(15),
      {cache_env(cache), "PTXBENCH_SERVICE_TOKEN=t0ken"});
  ASSERT_TRUE(guarded);
  EXPECT_NE(guarded->err.find("auth on: a bearer token"), std::string::npos) << guarded->err;
  EXPECT_EQ(guarded->err.find("t0ken"), std::string::npos) << "the token itself is never logged";
}
