// Shared pieces of the service tests: the real checker (nvcc, cuobjdump) with a compile cache
// per test process, the real suite, a service with its HTTP server on loopback, a small HTTP
// client, and candidate sources that compile in seconds.
#pragma once

#include "service/http_server.hpp"
#include "service/service.hpp"
#include "suite/suite.hpp"
#include "support/fill_kernel.hpp"
#include "support/real_checker.hpp"
#include "support/scratch_dir.hpp"

#include <chrono>
#include <gtest/gtest.h>
#include <httplib.h>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>

namespace ptxbench::service::testing {

using test_support::fill_kernel;
using test_support::ScratchDir;

// One per test process: the compile and SASS caches make a second check of a source a cache
// hit, as in `ptxbench serve`.
struct Tools : test_support::RealChecker {
  std::unique_ptr<suite::Suite> suite;

  Tools() : RealChecker(cache_dir(), test_support::SassCache::on) {
    auto loaded = suite::Suite::load_default();
    if (!loaded)
      throw std::runtime_error(loaded.error().message);
    suite = std::make_unique<suite::Suite>(std::move(*loaded));
  }
  ~Tools() {
    std::error_code error;
    std::filesystem::remove_all(cache_dir(), error);
  }

private:
  static std::filesystem::path cache_dir() {
    return std::filesystem::temp_directory_path() /
           ("ptxbench_service_test_" + std::to_string(::getpid()));
  }
};

inline Tools& tools() {
  static Tools instance;
  return instance;
}

inline ServiceOptions options_for(const std::filesystem::path& state) {
  ServiceOptions options;
  options.state_dir = state;
  options.reference_cache = std::filesystem::path(); // in memory
  return options;
}

// A service and its HTTP server on 127.0.0.1 (any port), stopped on destruction.
class LiveService {
public:
  explicit LiveService(const std::filesystem::path& state, HttpOptions http = {}) {
    auto started = Service::start(*tools().checker, *tools().suite, options_for(state));
    if (!started)
      throw std::runtime_error(started.error().message);
    m_service = std::move(*started);
    m_server = std::make_unique<HttpServer>(*m_service, std::move(http));
    auto url = m_server->start();
    if (!url)
      throw std::runtime_error(url.error().message);
    m_url = *url;
  }
  ~LiveService() { stop(); }
  LiveService(const LiveService&) = delete;
  LiveService& operator=(const LiveService&) = delete;

  void stop() {
    if (m_server)
      m_server->stop();
    if (m_service)
      m_service->stop();
    m_server.reset();
    m_service.reset();
  }
  Service& service() { return *m_service; }
  const std::string& url() const { return m_url; }

private:
  std::unique_ptr<Service> m_service;
  std::unique_ptr<HttpServer> m_server;
  std::string m_url;
};

struct Answer {
  int status = 0;
  nlohmann::ordered_json json;
  std::string body;
};

// One request with httplib's client; a transport failure fails the test.
inline Answer http(const std::string& url, const std::string& method, const std::string& path,
                   const std::string& body = "", const httplib::Headers& headers = {}) {
  httplib::Client client(url);
  client.set_read_timeout(std::chrono::seconds(300));
  auto result = method == "GET" ? client.Get(path.c_str(), headers)
                                : client.Post(path.c_str(), headers, body, "application/json");
  if (!result) {
    ADD_FAILURE() << method << " " << path << ": " << httplib::to_string(result.error());
    return {};
  }
  Answer answer{result->status, {}, result->body};
  answer.json = nlohmann::ordered_json::parse(result->body, nullptr, false);
  return answer;
}

inline nlohmann::ordered_json evaluate_body(const std::string& source,
                                            const std::string& problem = "gemm_n7168_k5120") {
  return {{"solution",
           {{"definition", problem}, {"sources", {{{"path", "kernel.cu"}, {"content", source}}}}}}};
}

// Submits and returns the task id (fails the test otherwise).
inline std::string submit(const std::string& url, const std::string& source,
                          const std::string& endpoint = "/evaluate") {
  Answer answer = http(url, "POST", endpoint, evaluate_body(source).dump());
  EXPECT_EQ(answer.status, 200) << answer.body;
  return answer.json.value("task_id", "");
}

} // namespace ptxbench::service::testing
