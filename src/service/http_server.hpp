// The HTTP/JSON face of the evaluation service (cpp-httplib), in the FIBServe shape
// (docs/service.md): /health, /definitions, POST /evaluate | /sanitize | /profile | /debug
// returning a task id at once, GET /tasks/{id}?timeout= long-poll, POST /tasks/batch; and GET
// /metrics (Prometheus). It serves this host's own queue or a fleet's broker alike
// (task_service.hpp). Beside FIBServe's API, versioned under /v1/, what a trainer's client needs:
// the first-turn prompt, a finished task's feedback as the agent loop renders it, and rollouts
// (rollout/rollouts.hpp): the agent loop stepped one reply at a time.
//
// Request bodies are untrusted: a size limit (413), JSON and schema errors (400, one
// sentence), unknown problem, task or rollout (404), a request the rollout's state refuses
// (409), a client's fleet queue full (429); every error
// body is {"error": "..."}. With a
// token, every endpoint but / and /health wants `Authorization: Bearer <token>` (401).
#pragma once

#include "exec/check.hpp"
#include "rollout/rollouts.hpp"
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
  // Connections served at once; each long-poll holds one for its wait, each rollout step one
  // for its evaluation.
  int threads = 64;
  // The rollout endpoints (/v1/prompt, /v1/rollouts…; docs/service.md "Rollouts"); null: they
  // answer 404 saying so.
  rollout::Rollouts* rollouts = nullptr;
  // POST /v1/feedback renders a finished task's feedback with it; null: 404.
  const exec::Checker* checker = nullptr;
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
