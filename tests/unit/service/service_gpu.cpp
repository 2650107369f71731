// The service on a real GPU (label gpu): the wgmma+TMA GEMM passes through HTTP with GMMA
// executed, twice back to back (the second with warm references), a crashing kernel is
// RUNTIME_ERROR, and the same worker passes the good kernel again. Each evaluation prints one
// `SERVICE_BENCH {json}` line — wall time from submit to completed, and the evaluation's
// phases — for bench/results/service_h200.md.
#include "cuda/device.hpp"
#include "service_test_support.hpp"
#include "util/fs.hpp"

#include <cstdio>
#include <string>
#include <vector>

using namespace ptxbench;
using namespace ptxbench::service;
using namespace ptxbench::service::testing;

namespace {

std::string kernel(const std::string& name, int variant = 0) {
  auto text = util::read_file(std::string(PTXBENCH_TEST_KERNELS) + "/" + name);
  if (!text)
    throw std::runtime_error(text.error().message);
  return variant == 0 ? *text
                      : "#define PTXBENCH_VARIANT " + std::to_string(variant) + "\n" + *text;
}

// Submits with the paper's protocol (3 sets, 3 trials of 10 + 50 calls), the reference latency
// reused once measured, waits for the result and prints the bench line.
nlohmann::ordered_json evaluate(const std::string& url, const std::string& source,
                                const std::string& label) {
  auto body = evaluate_body(source);
  body["baseline_cache_mode"] = "reuse";
  body["timeout"] = 30;
  const auto start = std::chrono::steady_clock::now();
  Answer submitted = http(url, "POST", "/evaluate", body.dump());
  EXPECT_EQ(submitted.status, 200) << submitted.body;
  Answer done = http(url, "GET", "/tasks/" + submitted.json.value("task_id", "") + "?timeout=600");
  const double wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(done.json["status"], "completed") << done.body.substr(0, 4000);
  const auto& result = done.json["result"];
  const auto& extras = result["trace"]["evaluation"]["ptxbench"];
  nlohmann::ordered_json line{
      {"case", label},
      {"status", result["status"]},
      {"wall_s", wall_s},
      {"queued_at", done.json["submitted_at"]},
      {"started_at", done.json["started_at"]},
      {"finished_at", done.json["finished_at"]},
      {"phases_ms", extras.value("phases", nlohmann::ordered_json::object())}};
  if (extras.contains("timing")) {
    line["candidate_ms"] = extras["timing"]["candidate_ms"];
    line["reference_ms"] = extras["timing"]["reference_ms"];
    line["reference_cached"] = extras["timing"]["reference_cached"];
  }
  std::printf("SERVICE_BENCH %s\n", line.dump().c_str());
  std::fflush(stdout);
  return result;
}

void expect_gmma_executed(const nlohmann::ordered_json& result) {
  const auto& dynamic = result["trace"]["evaluation"]["ptxbench"]["dynamic"];
  ASSERT_TRUE(dynamic.is_object()) << result.dump().substr(0, 2000);
  EXPECT_EQ(dynamic["verdict"], "present") << dynamic.dump();
  EXPECT_EQ(dynamic["families"]["GMMA"]["state"], "present") << dynamic.dump();
  EXPECT_GT(dynamic["families"]["GMMA"]["executed"].get<double>(), 0.0);
}

} // namespace

TEST(ServiceGpu, WgmmaPassesTwiceACrashIsARuntimeErrorAndTheWorkerPassesAgain) {
  ASSERT_GT(cuda::device_count(), 0);
  ScratchDir state;
  auto started = Service::start(*tools().checker, *tools().suite, [&] {
    ServiceOptions options = options_for(state.path());
    options.gpus = {0};
    return options;
  }());
  ASSERT_TRUE(started) << started.error().message;
  HttpServer server(**started, {});
  auto url = server.start();
  ASSERT_TRUE(url) << url.error().message;
  Answer health = http(*url, "GET", "/health");
  EXPECT_EQ(health.json["workers"][0]["device"], "cuda:0") << health.body;
  std::printf("workers: %s\n", health.json["workers"].dump().c_str());

  const std::string good = kernel("sm90_wgmma_tma_gemm.cu");
  for (const char* label : {"wgmma first (cold)", "wgmma second (warm)"}) {
    auto result = evaluate(*url, good, label);
    ASSERT_EQ(result["status"], "PASSED") << result["trace"]["evaluation"].value("log", "");
    expect_gmma_executed(result);
  }
  auto crash = evaluate(*url, kernel("gemm_bad_variants.cu", 5), "trap (variant 5)");
  EXPECT_EQ(crash["status"], "RUNTIME_ERROR");
  auto again = evaluate(*url, good, "wgmma after the crash");
  ASSERT_EQ(again["status"], "PASSED") << again["trace"]["evaluation"].value("log", "");
  expect_gmma_executed(again);
  EXPECT_EQ((*started)->health().workers[0].finished, 4);
  server.stop();
  (*started)->stop();
}

// The protocol of `--gpus all` on a many-GPU machine, run on one GPU: two supervisors (one
// exec::Evaluator each, the way two devices get them) take tasks from one queue and report in
// one /health. `--gpus 0,0` is refused (a GPU's timing lock and counter session belong to one
// supervisor), so the list is given directly; the two supervisors' evaluations overlap on the
// one GPU, so only the dispatch is checked here, not timings or counts.
TEST(ServiceGpu, TwoSupervisorsTakeTasksFromOneQueueAndShowInOneHealth) {
  ASSERT_GT(cuda::device_count(), 0);
  ScratchDir state;
  auto started = Service::start(*tools().checker, *tools().suite, [&] {
    ServiceOptions options = options_for(state.path());
    options.gpus = {0, 0};
    return options;
  }());
  ASSERT_TRUE(started) << started.error().message;
  HttpServer server(**started, {});
  auto url = server.start();
  ASSERT_TRUE(url) << url.error().message;
  Answer health = http(*url, "GET", "/health");
  ASSERT_EQ(health.json["workers"].size(), 2U) << health.body;
  auto body = evaluate_body(kernel("sm90_wgmma_tma_gemm.cu"));
  body["baseline_cache_mode"] = "reuse";
  body["timeout"] = 60;
  std::vector<std::string> tasks;
  for (int i = 0; i < 4; ++i) { // all queued before the first finishes
    Answer submitted = http(*url, "POST", "/evaluate", body.dump());
    ASSERT_EQ(submitted.status, 200) << submitted.body;
    tasks.push_back(submitted.json.value("task_id", ""));
  }
  for (const std::string& task : tasks) {
    Answer done = http(*url, "GET", "/tasks/" + task + "?timeout=600");
    EXPECT_EQ(done.json["status"], "completed") << done.body.substr(0, 2000);
    std::printf("task %s: %s\n", task.c_str(),
                done.json["result"].value("status", std::string("?")).c_str());
  }
  const Health after = (*started)->health();
  ASSERT_EQ(after.workers.size(), 2U);
  EXPECT_EQ(after.workers[0].finished + after.workers[1].finished, 4);
  EXPECT_GE(after.workers[0].finished, 1) << "both supervisors took tasks from the one queue";
  EXPECT_GE(after.workers[1].finished, 1);
  EXPECT_EQ(after.queue_size, 0U);
  server.stop();
  (*started)->stop();
}
