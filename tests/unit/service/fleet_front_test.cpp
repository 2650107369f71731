// The HTTP service in front of a fleet (`serve --broker URL --port P`): a FIBServe-style client
// submits and long-polls over HTTP exactly as with one host, the tasks go through a real
// PostgreSQL broker to a fleet worker (a CPU worker: static-check evaluations), and /metrics
// and /health show the fleet.
#include "service/broker_service.hpp"
#include "service/fleet_host.hpp"
#include "service_test_support.hpp"
#include "support/postgres_server.hpp"

using namespace ptxbench;
using namespace ptxbench::service;
using namespace ptxbench::service::testing;
using test_support::PostgresServer;

namespace {

// A front (BrokerService and its HTTP server on loopback), stopped on destruction.
class FleetFront {
public:
  explicit FleetFront(const fleet::BrokerOptions& broker) {
    auto connected = BrokerService::connect(*tools().suite, {broker, "http"});
    if (!connected)
      throw std::runtime_error(connected.error().message);
    m_service = std::move(*connected);
    m_server = std::make_unique<HttpServer>(*m_service, HttpOptions{});
    auto url = m_server->start();
    if (!url)
      throw std::runtime_error(url.error().message);
    m_url = *url;
  }
  ~FleetFront() { m_server->stop(); }
  FleetFront(const FleetFront&) = delete;
  FleetFront& operator=(const FleetFront&) = delete;
  const std::string& url() const { return m_url; }

private:
  std::unique_ptr<BrokerService> m_service;
  std::unique_ptr<HttpServer> m_server;
  std::string m_url;
};

// POST /evaluate under the fairness unit `run`.
httplib::Result post_for_run(const std::string& url, const std::string& source,
                             const std::string& run) {
  httplib::Client client(url);
  return client.Post("/evaluate", {{"X-Ptxbench-Run", run}}, evaluate_body(source).dump(),
                     "application/json");
}

} // namespace

TEST(FleetFront, AFibServeClientIsServedByTheFleetThroughTheHttpFront) {
  PostgresServer server;
  fleet::BrokerOptions broker;
  broker.url = server.url();
  broker.lease = std::chrono::seconds(3);
  broker.max_queued_per_run = 2;
  FleetFront front(broker);

  // No worker yet: the tasks wait in the broker, and the run's queue bound answers 429.
  auto first = post_for_run(front.url(), fill_kernel("front 1"), "trainer-1");
  auto second = post_for_run(front.url(), fill_kernel("front 2"), "trainer-1");
  ASSERT_TRUE(first && second);
  ASSERT_EQ(first->status, 200) << first->body;
  ASSERT_EQ(second->status, 200) << second->body;
  auto full = post_for_run(front.url(), fill_kernel("front 3"), "trainer-1");
  ASSERT_TRUE(full);
  EXPECT_EQ(full->status, 429) << full->body;
  EXPECT_EQ(full->get_header_value("Retry-After"), "1");
  auto other_run = post_for_run(front.url(), fill_kernel("front 4"), "trainer-2");
  ASSERT_TRUE(other_run);
  EXPECT_EQ(other_run->status, 200) << "the bound is per run: " << other_run->body;

  const auto submitted = nlohmann::ordered_json::parse(first->body);
  const std::string id = submitted["task_id"];
  Answer queued = http(front.url(), "GET", "/tasks/" + id + "?timeout=0");
  ASSERT_EQ(queued.status, 200) << queued.body;
  EXPECT_EQ(queued.json["status"], "queued");
  EXPECT_EQ(queued.json["definition"], "gemm_n7168_k5120");
  EXPECT_EQ(queued.json["solution"], submitted["normalized_solution_name"]);
  EXPECT_EQ(server.psql("SELECT run FROM ptxbench_tasks WHERE id = " + id), "trainer-1");

  FleetHostOptions host_options;
  host_options.broker = broker;
  host_options.host = "front-test";
  host_options.reference_cache = std::filesystem::path();
  auto host = FleetHost::start(*tools().checker, *tools().suite, host_options);
  ASSERT_TRUE(host) << host.error().message;

  Answer done = http(front.url(), "GET", "/tasks/" + id + "?timeout=120");
  ASSERT_EQ(done.status, 200) << done.body;
  EXPECT_EQ(done.json["status"], "completed") << done.body;
  EXPECT_EQ(done.json["device"], "front-test/cpu");
  EXPECT_EQ(done.json["kind"], "evaluate");
  EXPECT_FALSE(done.json.value("needs_gpu", "").empty()) << "a CPU worker stops after the check";
  EXPECT_TRUE(done.json["result"].is_object());
  EXPECT_FALSE(done.json.value("started_at", "").empty());
  EXPECT_FALSE(done.json.value("finished_at", "").empty());

  const std::string second_id = nlohmann::ordered_json::parse(second->body)["task_id"];
  const std::string other_id = nlohmann::ordered_json::parse(other_run->body)["task_id"];
  Answer batch =
      http(front.url(), "POST", "/tasks/batch",
           nlohmann::ordered_json{{"task_ids", {second_id, other_id}}, {"timeout", 120}}.dump());
  ASSERT_EQ(batch.status, 200) << batch.body;
  ASSERT_EQ(batch.json.size(), 2u);
  for (const auto& task : batch.json)
    EXPECT_EQ(task["status"], "completed") << task.dump();

  // The fleet as an operator sees it: the worker, and each run's tasks.
  Answer metrics = http(front.url(), "GET", "/metrics");
  ASSERT_EQ(metrics.status, 200);
  EXPECT_NE(metrics.body.find("ptxbench_fleet_tasks{run=\"trainer-1\",state=\"completed\"} 2"),
            std::string::npos)
      << metrics.body;
  EXPECT_NE(metrics.body.find("ptxbench_fleet_tasks{run=\"trainer-2\",state=\"completed\"} 1"),
            std::string::npos)
      << metrics.body;
  EXPECT_NE(metrics.body.find("ptxbench_fleet_worker_up{worker=\"front-test/cpu\""),
            std::string::npos)
      << metrics.body;
  Answer health = http(front.url(), "GET", "/health");
  ASSERT_EQ(health.status, 200);
  EXPECT_EQ(health.json["status"], "ok") << health.body;
  ASSERT_EQ(health.json["workers"].size(), 1u) << health.body;
  EXPECT_EQ(health.json["workers"][0]["device"], "front-test/cpu");
  EXPECT_EQ(health.json["workers"][0]["finished"], 3);
  (*host)->stop();

  // Ids the broker never gave out are unknown tasks, as with one host.
  EXPECT_EQ(http(front.url(), "GET", "/tasks/abc").status, 404);
  EXPECT_EQ(http(front.url(), "GET", "/tasks/987654321").status, 404);
  EXPECT_EQ(http(front.url(), "GET", "/tasks/-1").status, 404);
}

TEST(FleetFront, AnUnreachableBrokerIsAClearFailureNotACrash) {
  PostgresServer server;
  fleet::BrokerOptions broker;
  broker.url = server.url();
  broker.reconnect_window = std::chrono::seconds(1);
  FleetFront front(broker);
  server.kill();
  auto posted = post_for_run(front.url(), fill_kernel("front down"), "trainer-1");
  ASSERT_TRUE(posted);
  EXPECT_EQ(posted->status, 503) << posted->body;
  Answer health = http(front.url(), "GET", "/health");
  EXPECT_EQ(health.json["status"], "degraded") << health.body;
  EXPECT_NE(health.json.value("error", "").find("broker"), std::string::npos) << health.body;
  EXPECT_EQ(http(front.url(), "GET", "/metrics").status, 503);
}
