// A restart loses nothing: queued tasks of a stopped server run at the next start, running
// tasks of a killed one are re-queued (and given up after TaskStore::kMaxAttempts), finished
// results are served from the state folder, and two servers never share one.
#include "service_test_support.hpp"

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

} // namespace

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

TEST(ServicePersistence, AWorkerOnADeviceOtherThanZeroIsRefusedWithTheWayOut) {
  ScratchDir state;
  ServiceOptions options = options_for(state.path());
  options.gpus = {1};
  auto refused = Service::start(*tools().checker, *tools().suite, options);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().kind, util::ErrorKind::unsupported);
  EXPECT_NE(refused.error().message.find("CUDA_VISIBLE_DEVICES=1 ptxbench serve"),
            std::string::npos)
      << refused.error().message;
}
