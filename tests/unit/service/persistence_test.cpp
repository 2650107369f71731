// A restart loses nothing: queued tasks of a stopped server run at the next start, running
// tasks of a killed one are re-queued (and given up after TaskStore::kMaxAttempts), finished
// results are served from the state folder, and two servers never share one. Retention:
// finished tasks past --keep-finished-hours are pruned at start and while serving; queued and
// running ones never are.
#include "service_test_support.hpp"
#include "support/ptxbench_cli.hpp"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <set>
#include <thread>

using namespace ptxbench;
using namespace ptxbench::service;
using namespace ptxbench::service::testing;

namespace {

TaskRequest request_for(const std::string& source) {
  auto request =
      parse_task_request(evaluate_body(source).dump(), TaskKind::evaluate, *tools().suite);
  if (!request)
    throw std::runtime_error(request.error().message);
  return std::move(*request);
}

using std::chrono::hours;
using std::chrono::system_clock;

// A task for `request` written to the store as a finished one, `age` before now.
Task finished_task(TaskStore& store, const TaskRequest& request, system_clock::duration age,
                   TaskState state = TaskState::completed) {
  Task task = new_task(request);
  EXPECT_TRUE(store.insert(task, request.canonical));
  EXPECT_TRUE(store.mark_running(task.id, "cpu"));
  task.state = state;
  task.result = Json{{"status", "COMPILE_ERROR"}};
  if (state == TaskState::failed)
    task.error = "a broken set-up";
  task.finished_at = utc_text(system_clock::now() - age);
  EXPECT_TRUE(store.finish(task));
  return task;
}

bool stored(TaskStore& store, const std::string& id) {
  auto found = store.find(id);
  EXPECT_TRUE(found) << found.error().message;
  return found && found->has_value();
}

// Service::start with `options` and its HTTP server on loopback, stopped on destruction.
class Served {
public:
  explicit Served(ServiceOptions options) {
    auto started = Service::start(*tools().checker, *tools().suite, std::move(options));
    if (!started)
      throw std::runtime_error(started.error().message);
    m_service = std::move(*started);
    m_server = std::make_unique<HttpServer>(*m_service, HttpOptions{});
    auto url = m_server->start();
    if (!url)
      throw std::runtime_error(url.error().message);
    m_url = *url;
  }
  ~Served() {
    m_server->stop();
    m_service->stop();
  }
  Served(const Served&) = delete;
  Served& operator=(const Served&) = delete;
  const std::string& url() const { return m_url; }

private:
  std::unique_ptr<Service> m_service;
  std::unique_ptr<HttpServer> m_server;
  std::string m_url;
};

} // namespace

TEST(TaskStoreRetention, OnlyFinishedTasksThatFinishedBeforeTheCutoffArePruned) {
  ScratchDir state;
  const TaskRequest request = request_for("int x;\n");
  const auto now = system_clock::now();
  Task old_completed, old_failed, recent, queued, running;
  {
    auto store = TaskStore::open(state.path());
    ASSERT_TRUE(store) << store.error().message;
    old_completed = finished_task(**store, request, hours(10 * 24));
    old_failed = finished_task(**store, request, hours(8 * 24), TaskState::failed);
    recent = finished_task(**store, request, hours(6 * 24));
    queued = new_task(request);
    queued.submitted_at = utc_text(now - hours(30 * 24));
    running = new_task(request);
    running.submitted_at = queued.submitted_at;
    ASSERT_TRUE((*store)->insert(queued, request.canonical));
    ASSERT_TRUE((*store)->insert(running, request.canonical));
    ASSERT_TRUE((*store)->mark_running(running.id, "cpu"));

    auto pruned = (*store)->prune_finished(now - hours(7 * 24));
    ASSERT_TRUE(pruned) << pruned.error().message;
    EXPECT_EQ(*pruned, 2);
  }
  // Re-opened from the file: the deletions were written.
  auto store = TaskStore::open(state.path());
  ASSERT_TRUE(store) << store.error().message;
  EXPECT_FALSE(stored(**store, old_completed.id));
  EXPECT_FALSE(stored(**store, old_failed.id));
  EXPECT_TRUE(stored(**store, recent.id));
  EXPECT_TRUE(stored(**store, queued.id));
  EXPECT_TRUE(stored(**store, running.id));
  // A cutoff past every finish time takes every finished task, and still no unfinished one.
  auto pruned = (*store)->prune_finished(now + hours(24));
  ASSERT_TRUE(pruned) << pruned.error().message;
  EXPECT_EQ(*pruned, 1);
  EXPECT_FALSE(stored(**store, recent.id));
  EXPECT_TRUE(stored(**store, queued.id));
  EXPECT_TRUE(stored(**store, running.id));
}

TEST(ServicePersistence, AtStartFinishedTasksPastTheRetentionArePrunedAndAnswer404) {
  ScratchDir state;
  const TaskRequest request = request_for("int x;\n");
  Task old_task, recent;
  {
    auto store = TaskStore::open(state.path());
    ASSERT_TRUE(store) << store.error().message;
    old_task = finished_task(**store, request, hours(8 * 24));
    recent = finished_task(**store, request, hours(6 * 24));
  }
  ServiceOptions options = options_for(state.path());
  EXPECT_EQ(options.keep_finished, hours(7 * 24)) << "the default retention is 7 days";
  std::vector<std::string> lines;
  std::mutex mutex;
  options.log = [&](const std::string& line) {
    std::lock_guard lock(mutex);
    lines.push_back(line);
  };
  Served served(options);
  Answer gone = http(served.url(), "GET", "/tasks/" + old_task.id);
  EXPECT_EQ(gone.status, 404) << gone.body;
  const std::string error = gone.json.value("error", "");
  EXPECT_NE(error.find("never submitted here, or it finished more than 168 hours ago and was "
                       "pruned"),
            std::string::npos)
      << error;
  Answer kept = http(served.url(), "GET", "/tasks/" + recent.id);
  EXPECT_EQ(kept.status, 200) << kept.body;
  EXPECT_EQ(kept.json["status"], "completed");
  Answer batch = http(served.url(), "POST", "/tasks/batch",
                      nlohmann::json{{"task_ids", {recent.id, old_task.id}}}.dump());
  EXPECT_EQ(batch.status, 404) << batch.body;
  std::lock_guard lock(mutex);
  EXPECT_NE(std::find(lines.begin(), lines.end(), "pruned 1 finished task(s) older than 168 hours"),
            lines.end());
}

TEST(ServicePersistence, ARetentionOfZeroKeepsFinishedTasksForever) {
  ScratchDir state;
  const TaskRequest request = request_for("int x;\n");
  Task ancient;
  {
    auto store = TaskStore::open(state.path());
    ASSERT_TRUE(store) << store.error().message;
    ancient = finished_task(**store, request, hours(5 * 365 * 24), TaskState::failed);
  }
  ServiceOptions options = options_for(state.path());
  options.keep_finished = hours(0);
  options.prune_interval = std::chrono::milliseconds(10);
  Served served(options);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  Answer kept = http(served.url(), "GET", "/tasks/" + ancient.id);
  EXPECT_EQ(kept.status, 200) << kept.body;
  EXPECT_EQ(kept.json["status"], "failed");
  Answer unknown = http(served.url(), "GET", "/tasks/" + new_task_id());
  EXPECT_EQ(unknown.status, 404);
  EXPECT_EQ(unknown.json.value("error", "").find("pruned"), std::string::npos) << unknown.body;
}

TEST(ServicePersistence, WhileServingTasksArePrunedOnceTheyAgePastTheRetention) {
  ScratchDir state;
  const TaskRequest request = request_for("int x;\n");
  Task task;
  {
    auto store = TaskStore::open(state.path());
    ASSERT_TRUE(store) << store.error().message;
    task = finished_task(**store, request, hours(1));
  }
  auto offset = std::make_shared<std::atomic<std::int64_t>>(0); // hours the clock is ahead
  ServiceOptions options = options_for(state.path());
  options.keep_finished = hours(48);
  options.prune_interval = std::chrono::milliseconds(20);
  options.clock = [offset] { return system_clock::now() + hours(offset->load()); };
  Served served(options);
  std::this_thread::sleep_for(std::chrono::milliseconds(200)); // several pruning rounds
  EXPECT_EQ(http(served.url(), "GET", "/tasks/" + task.id).status, 200);
  offset->store(48); // the task finished 49 hours ago now
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  Answer answer;
  do {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    answer = http(served.url(), "GET", "/tasks/" + task.id);
  } while (answer.status == 200 && std::chrono::steady_clock::now() < deadline);
  EXPECT_EQ(answer.status, 404) << answer.body;
  EXPECT_NE(answer.json.value("error", "").find("more than 48 hours ago and was pruned"),
            std::string::npos)
      << answer.body;
}

TEST(ServicePersistence, ANegativeRetentionIsRefused) {
  ScratchDir state;
  ServiceOptions options = options_for(state.path());
  options.keep_finished = hours(-1);
  auto refused = Service::start(*tools().checker, *tools().suite, options);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().kind, util::ErrorKind::invalid_input);
  EXPECT_NE(refused.error().message.find("retention"), std::string::npos);
  auto cli = test_support::run_ptxbench(
      {"serve", "--port", "0", "--state", state.path().string(), "--keep-finished-hours=-1"},
      std::chrono::seconds(60));
  ASSERT_TRUE(cli) << cli.error().message;
  EXPECT_NE(cli->exit_code, 0);
  EXPECT_NE((cli->out + cli->err).find("--keep-finished-hours"), std::string::npos)
      << cli->out << cli->err;
}

TEST(ServicePersistence, QueuedTasksOfAStoppedServerRunAfterTheRestartInSubmissionOrder) {
  ScratchDir state;
  std::vector<std::string> ids;
  {
    LiveService first(state.path());
    for (int i = 0; i < 3; ++i)
      ids.push_back(submit(first.url(), fill_kernel("restart " + std::to_string(i))));
    // One worker and seconds of nvcc per kernel: the last one is still waiting.
    Answer last = http(first.url(), "GET", "/tasks/" + ids[2]);
    EXPECT_EQ(last.json["status"], "queued") << last.body;
    first.stop(); // the running task finishes; queued ones stay queued
  }
  LiveService second(state.path());
  Answer batch = http(second.url(), "POST", "/tasks/batch",
                      nlohmann::json{{"task_ids", ids}, {"timeout", 300}}.dump());
  ASSERT_EQ(batch.status, 200) << batch.body;
  for (const auto& task : batch.json) {
    EXPECT_EQ(task["status"], "completed") << task.dump();
    EXPECT_EQ(task["result"]["check"]["outcome"], "ok");
    EXPECT_FALSE(task.contains("attempts")) << "a queued task must not count as started twice";
  }
  // FIFO: one worker started them in submission order, the first before the restart.
  EXPECT_LT(batch.json[0]["finished_at"].get<std::string>(),
            batch.json[1]["started_at"].get<std::string>());
  EXPECT_LT(batch.json[1]["started_at"].get<std::string>(),
            batch.json[2]["started_at"].get<std::string>());
}

TEST(ServicePersistence, RunningTasksOfAKilledServerAreRequeuedThenGivenUp) {
  ScratchDir state;
  const TaskRequest request = request_for("not CUDA at all\n");
  Task killed = new_task(request);
  Task poison = new_task(request);
  {
    // What a SIGKILLed server leaves behind: tasks marked running.
    auto store = TaskStore::open(state.path());
    ASSERT_TRUE(store) << store.error().message;
    ASSERT_TRUE((*store)->insert(killed, request.canonical));
    ASSERT_TRUE((*store)->insert(poison, request.canonical));
    ASSERT_TRUE((*store)->mark_running(killed.id, "cpu"));
    for (int i = 0; i < TaskStore::kMaxAttempts; ++i)
      ASSERT_TRUE((*store)->mark_running(poison.id, "cpu"));
  }
  LiveService restarted(state.path());
  Answer again = http(restarted.url(), "GET", "/tasks/" + killed.id + "?timeout=300");
  EXPECT_EQ(again.json["status"], "completed") << again.body;
  EXPECT_EQ(again.json["attempts"], 2);
  EXPECT_EQ(again.json["result"]["status"], "COMPILE_ERROR");
  Answer given_up = http(restarted.url(), "GET", "/tasks/" + poison.id);
  EXPECT_EQ(given_up.json["status"], "failed") << given_up.body;
  EXPECT_NE(given_up.json.value("error", "").find("3 times"), std::string::npos);
}

TEST(ServicePersistence, TwoServersNeverShareAStateFolder) {
  ScratchDir state;
  LiveService first(state.path());
  auto second = Service::start(*tools().checker, *tools().suite, options_for(state.path()));
  ASSERT_FALSE(second);
  EXPECT_NE(second.error().message.find("in use by another ptxbench serve"), std::string::npos)
      << second.error().message;
  first.stop();
  auto third = Service::start(*tools().checker, *tools().suite, options_for(state.path()));
  EXPECT_TRUE(third) << third.error().message;
}

TEST(ServicePersistence, AStoppingServiceTakesNoTaskAndReleasesItsLongPolls) {
  ScratchDir state;
  auto service = Service::start(*tools().checker, *tools().suite, options_for(state.path()));
  ASSERT_TRUE(service);
  auto submitted = (*service)->submit(request_for(fill_kernel("stopping")));
  ASSERT_TRUE(submitted);
  (*service)->stop_accepting();
  const auto start = std::chrono::steady_clock::now();
  auto task = (*service)->task(submitted->task_id, std::chrono::minutes(5));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
  ASSERT_TRUE(task);
  auto refused = (*service)->submit(request_for("int y;"));
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().kind, util::ErrorKind::unsupported);
  (*service)->stop();
}

// The child takes its device from its supervisor, so a worker on any device is accepted (here,
// without that device, it reports itself unhealthy instead of running candidates elsewhere).
TEST(ServicePersistence, AWorkerOnADeviceOtherThanZeroIsAccepted) {
  ScratchDir state;
  ServiceOptions options = options_for(state.path());
  options.gpus = {1};
  auto service = Service::start(*tools().checker, *tools().suite, options);
  ASSERT_TRUE(service) << service.error().message;
  const Health health = (*service)->health();
  ASSERT_EQ(health.workers.size(), 1u);
  EXPECT_EQ(health.workers[0].device, "cuda:1");
  (*service)->stop();
}

TEST(ServicePersistence, FewerThanOneWorkerPerDeviceIsRefused) {
  ScratchDir state;
  ServiceOptions options = options_for(state.path());
  options.workers_per_device = 0;
  auto refused = Service::start(*tools().checker, *tools().suite, options);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().kind, util::ErrorKind::invalid_input);
  EXPECT_EQ(refused.error().message, "--workers-per-gpu must be at least 1, not 0");
}

// Two workers take tasks from the one queue: every task is run once, by one of them, and both
// take one (a check compiles for seconds: while the first worker compiles the first task, the
// second task, submitted right after, can only go to the other).
TEST(ServicePersistence, TwoWorkersShareOneQueueAndOneHealth) {
  ScratchDir state;
  ServiceOptions options = options_for(state.path());
  options.workers_per_device = 2;
  auto service = Service::start(*tools().checker, *tools().suite, options);
  ASSERT_TRUE(service) << service.error().message;
  const Health idle = (*service)->health();
  ASSERT_EQ(idle.workers.size(), 2u);
  EXPECT_EQ(idle.workers[0].device, "cpu/0");
  EXPECT_EQ(idle.workers[1].device, "cpu/1");
  std::vector<std::string> ids;
  for (int i = 0; i < 2; ++i) {
    auto submitted =
        (*service)->submit(request_for(fill_kernel("two workers " + std::to_string(i))));
    ASSERT_TRUE(submitted) << submitted.error().message;
    ids.push_back(submitted->task_id);
  }
  auto tasks = (*service)->tasks(ids, std::chrono::minutes(5));
  ASSERT_TRUE(tasks) << tasks.error().message;
  std::set<std::string> workers;
  for (const Task& task : *tasks) {
    EXPECT_EQ(task.state, TaskState::completed) << task.id;
    workers.insert(task.device);
  }
  EXPECT_EQ(workers, (std::set<std::string>{"cpu/0", "cpu/1"}));
  const Health done = (*service)->health();
  EXPECT_EQ(done.workers[0].finished, 1);
  EXPECT_EQ(done.workers[1].finished, 1);
  EXPECT_EQ(done.queue_size, 0u);
  (*service)->stop();
}
