// A real HTTP server on 127.0.0.1 (random port) for the provider conformance tests and the tests
// that run a model over HTTP: it records every request and answers through a handler the test
// supplies.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <httplib.h>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

namespace ptxbench::test_support {

struct RecordedRequest {
  std::string path;
  httplib::Headers headers; // case-insensitive names
  std::string body;

  std::string header(const std::string& name) const {
    auto it = headers.find(name);
    return it == headers.end() ? std::string() : it->second;
  }
  nlohmann::json json() const { return nlohmann::json::parse(body); }
};

class LoopbackServer {
public:
  // `handler` gets the 0-based index of the request among all received.
  using Handler = std::function<void(int index, const httplib::Request&, httplib::Response&)>;

  explicit LoopbackServer(Handler handler) : m_handler(std::move(handler)) {
    m_server.Post(".*", [this](const httplib::Request& request, httplib::Response& response) {
      int index = record(request);
      m_handler(index, request, response);
    });
    m_port = m_server.bind_to_any_port("127.0.0.1");
    if (m_port <= 0)
      throw std::runtime_error("cannot bind a loopback port");
    m_thread = std::thread([this] { m_server.listen_after_bind(); });
    // stop() is a no-op before the accept loop runs: wait for it, or a quick destructor hangs.
    while (!m_server.is_running())
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  ~LoopbackServer() {
    release();
    m_server.stop();
    m_thread.join();
  }
  LoopbackServer(const LoopbackServer&) = delete;
  LoopbackServer& operator=(const LoopbackServer&) = delete;

  std::string base_url() const { return "http://127.0.0.1:" + std::to_string(m_port); }
  int port() const { return m_port; }

  std::vector<RecordedRequest> requests() const {
    std::lock_guard lock(m_mutex);
    return m_requests;
  }
  std::size_t count() const {
    std::lock_guard lock(m_mutex);
    return m_requests.size();
  }

  // For handlers that must outlast a client timeout: waits until release() or `limit`.
  void hold(std::chrono::milliseconds limit) {
    std::unique_lock lock(m_mutex);
    m_released_cv.wait_for(lock, limit, [this] { return m_released; });
  }
  void release() {
    {
      std::lock_guard lock(m_mutex);
      m_released = true;
    }
    m_released_cv.notify_all();
  }

private:
  int record(const httplib::Request& request) {
    std::lock_guard lock(m_mutex);
    m_requests.push_back(RecordedRequest{request.path, request.headers, request.body});
    return static_cast<int>(m_requests.size()) - 1;
  }

  Handler m_handler;
  httplib::Server m_server;
  int m_port = 0;
  std::thread m_thread;
  mutable std::mutex m_mutex;
  std::condition_variable m_released_cv;
  bool m_released = false;
  std::vector<RecordedRequest> m_requests;
};

inline void reply_json(httplib::Response& response, const nlohmann::json& body, int status = 200) {
  response.status = status;
  response.set_content(body.dump(), "application/json");
}

} // namespace ptxbench::test_support
