// What the fleet's end-to-end tests share: a `ptxbench serve --broker` worker process (a CPU
// worker: its evaluations stop after the static check), and polling until the database, a log
// or anything else shows what a test waits for.
#pragma once

#include "support/postgres_server.hpp"
#include "support/ptxbench_cli.hpp"

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <vector>

namespace ptxbench::test_support {

// A `serve --broker URL --host-name HOST --lease-seconds 3` process, killed on destruction;
// `prefix` runs it through a command (`ip netns exec NAME`).
class FleetWorkerProcess {
public:
  FleetWorkerProcess(const std::string& url, const std::string& host, const ScratchDir& cache,
                     const std::filesystem::path& log, const std::vector<std::string>& prefix = {})
      : m_pid(
            spawn_ptxbench({"serve", "--broker", url, "--host-name", host, "--lease-seconds", "3"},
                           cache, log, prefix)) {}
  ~FleetWorkerProcess() { kill(SIGKILL); }
  FleetWorkerProcess(const FleetWorkerProcess&) = delete;
  FleetWorkerProcess& operator=(const FleetWorkerProcess&) = delete;
  void kill(int signal) {
    if (m_pid <= 0)
      return;
    ::kill(m_pid, signal);
    ::waitpid(m_pid, nullptr, 0);
    m_pid = -1;
  }

private:
  pid_t m_pid;
};

// Polls `done` until it holds or `limit` passes; whether it held.
inline bool wait_until(const std::function<bool()>& done, std::chrono::seconds limit) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    if (done())
      return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

// Polls `sql` until it prints `want` or `limit` passes.
inline bool eventually(const PostgresServer& server, const std::string& sql,
                       const std::string& want, std::chrono::seconds limit) {
  return wait_until([&] { return server.psql(sql) == want; }, limit);
}

// The file's text (empty when it does not exist yet).
inline std::string file_text(const std::filesystem::path& path) {
  std::ifstream file(path);
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

} // namespace ptxbench::test_support
