// The HTTP/JSON face of the evaluation service (cpp-httplib), in the FIBServe shape
// (docs/service.md): /health, /definitions, POST /evaluate | /sanitize | /profile | /debug
// returning a task id at once, GET /tasks/{id}?timeout= long-poll, POST /tasks/batch; and GET
// /metrics (Prometheus). It serves this host's own queue or a fleet's broker alike
// (task_service.hpp).
//
// Request bodies are untrusted: a size limit (413), JSON and schema errors (400, one
// sentence), unknown problem or task (404), a client's fleet queue full (429); every error
// body is {"error": "..."}. With a
// token, every endpoint but / and /health wants `Authorization: Bearer <token>` (401).
#pragma once

#include "service/task_service.hpp"
#include "util/error.hpp"

#include <cstddef>
#include <memory>
#include <string>

namespace ptxbench::service {

struct HttpOptions {
  std::string host = "127.0.0.1";
  int port = 0; // 0: any free port
  std::size_t max_body_bytes = std::size_t{8} << 20;
  std::string token; // empty: no authentication
  // Connections served at once; each long-poll holds one for its wait.
  int threads = 64;
};

class HttpServer {
public:
  HttpServer(TaskService& service, HttpOptions options);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds and serves on a thread of its own; the base URL ("http://127.0.0.1:40123"), or io
  // when the address cannot be bound.
  util::Expected<std::string> start();
  // Stops taking tasks (the service's long-polls return), then stops serving; idempotent.
  void stop();

private:
  struct Impl;
  std::unique_ptr<Impl> m_impl;
};

} // namespace ptxbench::service
