// broker_throughput: evaluations per second through the fleet's PostgreSQL broker with
// zero-cost evaluations (a worker finishes each task the moment it leases it), and the latency
// the broker adds to one turn: submit → leased → finished → the waiting client woken.
//   broker_throughput --broker postgresql://… [--tasks 2000] [--workers 8] [--clients 4]
// Prints one Markdown table row set (bench/results/broker_throughput.md says how it was run).
#include "fleet/broker.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fmt/format.h>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

using namespace ptxbench;
using Clock = std::chrono::steady_clock;

namespace {

struct Settings {
  std::string url;
  int tasks = 2000;
  int workers = 8;
  int clients = 4;
};

std::unique_ptr<fleet::Broker> connect(const std::string& url) {
  fleet::BrokerOptions options;
  options.url = url;
  options.max_queued_per_run = 1 << 30;
  auto broker = fleet::Broker::connect(options);
  if (!broker)
    throw std::runtime_error(broker.error().message);
  return std::move(*broker);
}

fleet::Submission submission(int client, int index) {
  fleet::Submission out;
  out.run = fmt::format("bench-{}", client);
  out.client_key = fmt::format("{}-{}-{}", client, index, Clock::now().time_since_epoch().count());
  out.request.problem = "gemm_n7168_k5120";
  out.request.source = "__global__ void k() {}";
  return out;
}

// Workers that finish every task at once, until `stop`.
void run_workers(const Settings& s, std::atomic<bool>& stop, std::atomic<int>& finished) {
  std::vector<std::thread> threads;
  for (int w = 0; w < s.workers; ++w)
    threads.emplace_back([&, w] {
      auto broker = connect(s.url);
      const fleet::WorkerInfo info{fmt::format("bench/{}", w), "bench", "cpu", "",
                                   compile::Arch::sm_90a};
      fleet::TaskOutcome outcome;
      outcome.result = {{"status", "PASSED"}};
      while (!stop) {
        auto leased = broker->lease(info);
        if (leased && *leased) {
          if (auto recorded = broker->finish(**leased, outcome); recorded && *recorded)
            ++finished;
        } else {
          (void)broker->wait_for_work(std::chrono::milliseconds(50));
        }
      }
    });
  for (auto& thread : threads)
    thread.join();
}

double percentile(std::vector<double> values, double p) {
  std::sort(values.begin(), values.end());
  const double last = static_cast<double>(values.size() - 1);
  return values.empty() ? 0 : values[static_cast<std::size_t>(p * last)];
}

} // namespace

int main(int argc, char** argv) {
  Settings s;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--broker")
      s.url = argv[i + 1];
    else if (flag == "--tasks")
      s.tasks = std::atoi(argv[i + 1]);
    else if (flag == "--workers")
      s.workers = std::atoi(argv[i + 1]);
    else if (flag == "--clients")
      s.clients = std::atoi(argv[i + 1]);
  }
  if (s.url.empty()) {
    std::fprintf(stderr, "usage: broker_throughput --broker URL [--tasks N] [--workers W] "
                         "[--clients C]\n");
    return 2;
  }
  std::atomic<bool> stop{false};
  std::atomic<int> finished{0};
  std::thread workers([&] { run_workers(s, stop, finished); });

  // Throughput: every client submits its share at once, then waits for all of it.
  const auto start = Clock::now();
  std::vector<std::thread> clients;
  for (int c = 0; c < s.clients; ++c)
    clients.emplace_back([&, c] {
      auto broker = connect(s.url);
      std::vector<std::int64_t> ids;
      for (int i = 0; i < s.tasks / s.clients; ++i)
        ids.push_back(*broker->submit(submission(c, i)));
      (void)broker->wait(ids, std::chrono::minutes(10));
    });
  for (auto& client : clients)
    client.join();
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();

  // Latency: one turn at a time, as one trajectory submits them.
  auto broker = connect(s.url);
  std::vector<double> latencies_ms;
  for (int i = 0; i < 200; ++i) {
    const auto t0 = Clock::now();
    const auto id = broker->submit(submission(99, i));
    (void)broker->wait({*id}, std::chrono::seconds(30));
    latencies_ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
  }
  stop = true;
  workers.join();
  fmt::print(
      "| tasks | workers | clients | wall s | evaluations/s | one-turn latency p50 ms | p90 ms "
      "| p99 ms |\n|---|---|---|---|---|---|---|---|\n");
  fmt::print("| {} | {} | {} | {:.2f} | {:.0f} | {:.2f} | {:.2f} | {:.2f} |\n",
             s.tasks / s.clients * s.clients, s.workers, s.clients, seconds,
             (s.tasks / s.clients * s.clients) / seconds, percentile(latencies_ms, 0.5),
             percentile(latencies_ms, 0.9), percentile(latencies_ms, 0.99));
  return 0;
}
