#include "service/http_server.hpp"

#include "rollout/rollout_json.hpp"
#include "service/task_executor.hpp"
#include "trace/json_io.hpp"
#include "util/json_reader.hpp"
#include "util/strings.hpp"

#include <atomic>
#include <charconv>
#include <cmath>
#include <fmt/format.h>
#include <httplib.h>
#include <optional>
#include <thread>
#include <utility>

#ifndef PTXBENCH_VERSION
#define PTXBENCH_VERSION "unknown"
#endif

namespace ptxbench::service {
namespace {

using Request = httplib::Request;
using Response = httplib::Response;

constexpr double kMaxWaitS = 3600; // FIBServe's long-poll bound

// A fleet client's fairness unit (task.hpp TaskRequest::run).
constexpr const char* kRunHeader = "X-Ptxbench-Run";
constexpr std::size_t kMaxRunChars = 200;

constexpr std::array<std::string_view, 19> kEndpoints{"GET /health",
                                                      "GET /metrics",
                                                      "GET /definitions",
                                                      "GET /definitions/{name}",
                                                      "GET /definitions/{name}/workloads",
                                                      "POST /evaluate",
                                                      "POST /sanitize",
                                                      "POST /profile",
                                                      "POST /debug",
                                                      "GET /tasks/{id}?timeout=s",
                                                      "POST /tasks/batch",
                                                      "POST /v1/prompt",
                                                      "POST /v1/feedback",
                                                      "POST /v1/rollouts",
                                                      "GET /v1/rollouts/{id}",
                                                      "POST /v1/rollouts/{id}/step",
                                                      "POST /v1/rollouts/{id}/retry",
                                                      "POST /v1/rollouts/{id}/close",
                                                      "GET /"};

void reply(Response& response, const Json& body, int status = 200) {
  response.status = status;
  response.set_content(dump_json(body), "application/json");
}

int status_of(util::ErrorKind kind) {
  switch (kind) {
  case util::ErrorKind::invalid_input:
    return 400;
  case util::ErrorKind::not_found:
    return 404;
  case util::ErrorKind::rate_limited:
    return 429;
  case util::ErrorKind::conflict:
    return 409;
  case util::ErrorKind::unsupported:
  case util::ErrorKind::transport:
    return 503;
  default:
    return 500;
  }
}

void reply_error(Response& response, const util::Error& error) {
  if (error.kind == util::ErrorKind::rate_limited)
    response.set_header("Retry-After", "1");
  reply(response, Json{{"error", error.message}}, status_of(error.kind));
}

// Long-poll wait in seconds, from a query parameter or a JSON member; 0 when absent.
util::Expected<std::chrono::milliseconds> wait_of(std::optional<double> seconds) {
  const double value = seconds.value_or(0.0);
  if (!std::isfinite(value) || value < 0 || value > kMaxWaitS)
    return util::make_error(util::ErrorKind::invalid_input,
                            fmt::format("\"timeout\" must be seconds from 0 to {}", kMaxWaitS));
  return std::chrono::milliseconds(static_cast<long long>(value * 1000));
}

// A POST /tasks/batch body: {"task_ids": [ID, ...], "timeout": seconds}.
struct BatchRequest {
  std::vector<std::string> task_ids;
  std::optional<double> timeout_s;
};

util::Expected<BatchRequest> read_batch(const Json& body) {
  util::JsonReader in("request body");
  BatchRequest out;
  if (in.expect_object(body, "$")) {
    if (const Json* ids = in.array_member(body, "$", "task_ids")) {
      out.task_ids = in.strings_at(*ids, "$.task_ids", util::Emptiness::allowed);
      if (in.ok() && out.task_ids.empty())
        in.fail("$.task_ids", "expected at least one task id");
    }
    if (const Json* timeout = util::JsonReader::optional(body, "timeout"))
      out.timeout_s = in.number_at(*timeout, "$.timeout");
  }
  auto read = in.finish(std::move(out));
  if (!read)
    return util::make_error(read.error().kind,
                            read.error().message +
                                " (expected {\"task_ids\": [ID, ...], \"timeout\": seconds})");
  return read;
}

util::Expected<std::chrono::milliseconds> query_wait(const Request& request) {
  if (!request.has_param("timeout"))
    return wait_of(std::nullopt);
  const std::string text = request.get_param_value("timeout");
  double value = 0;
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc{} || end != text.data() + text.size())
    return util::make_error(util::ErrorKind::invalid_input,
                            "\"timeout\" must be a number of seconds");
  return wait_of(value);
}

bool same_secret(std::string_view a, std::string_view b) {
  unsigned char differ = a.size() == b.size() ? 0 : 1;
  for (std::size_t i = 0; i < a.size(); ++i)
    differ |= static_cast<unsigned char>(a[i] ^ (i < b.size() ? b[i] : 0));
  return differ == 0;
}

// Every endpoint but / and /health wants the token when one is set. The scheme name is
// case-insensitive (RFC 7235 §2.1): "bearer", "Bearer" and "BEARER" are the same.
bool authorized(const Request& request, const std::string& token) {
  if (token.empty() || request.path == "/" || request.path == "/health")
    return true;
  constexpr std::string_view kScheme = "bearer ";
  const std::string header = request.get_header_value("Authorization");
  if (!util::starts_with_ci(header, kScheme))
    return false;
  return same_secret(util::trim(std::string_view(header).substr(kScheme.size())), token);
}

// Why a POST's body is refused before it is read (status and sentence), or nothing: a body
// must be JSON (415 for another declared type; none declared is accepted) and must be there.
std::optional<std::pair<std::string, int>> body_refusal(const Request& request) {
  const std::string type = request.get_header_value("Content-Type");
  if (!type.empty() && !util::starts_with_ci(type, "application/json"))
    return std::pair{fmt::format("the body must be JSON sent as Content-Type: application/json, "
                                 "not {} (curl: -H 'Content-Type: application/json')",
                                 type),
                     415};
  const bool chunked =
      request.get_header_value("Transfer-Encoding").find("chunked") != std::string::npos;
  const std::string length = request.get_header_value("Content-Length");
  if (!chunked && (length.empty() || length == "0"))
    return std::pair{fmt::format("POST {} needs a JSON body; the request has none", request.path),
                     400};
  return std::nullopt;
}

Json health_json(const Health& health) {
  Json workers = Json::array();
  bool all_healthy = true;
  for (const WorkerHealth& w : health.workers) {
    Json worker{{"device", w.device},
                {"healthy", w.healthy},
                {"busy", !w.task_id.empty()},
                {"finished", w.finished}};
    if (!w.name.empty())
      worker["name"] = w.name;
    if (!w.task_id.empty())
      worker["task_id"] = w.task_id;
    if (!w.note.empty())
      worker["note"] = w.note;
    workers.push_back(std::move(worker));
    all_healthy = all_healthy && w.healthy;
  }
  Json out{{"status", health.stopping                       ? "stopping"
                      : all_healthy && health.error.empty() ? "ok"
                                                            : "degraded"},
           {"workers", workers},
           {"queue_size", health.queue_size}};
  if (!health.error.empty())
    out["error"] = health.error;
  return out;
}

} // namespace

struct HttpServer::Impl {
  TaskService& service;
  HttpOptions options;
  httplib::Server server;
  std::thread thread;
  std::atomic<bool> listen_returned{false};
  bool started = false;

  Impl(TaskService& s, HttpOptions o) : service(s), options(std::move(o)) {}
  void routes();
  void guards();
  void submit(TaskKind kind, const Request& request, Response& response);
  void get_task(const Request& request, Response& response);
  void batch(const Request& request, Response& response);
  void definition(const Request& request, Response& response, bool workloads);
  void rollout_routes();
  template <typename Read, typename Act>
  void rollout_post(const Request& request, Response& response, Read read, Act act);
  void feedback(const Request& request, Response& response);
  // The rollouts, or a 404 answered saying there are none.
  rollout::Rollouts* rollouts(Response& response);
};

void HttpServer::Impl::guards() {
  server.set_payload_max_length(options.max_body_bytes);
  const int threads = options.threads;
  server.new_task_queue = [threads] {
    return new httplib::ThreadPool(static_cast<std::size_t>(threads));
  };
  // Runs on the headers, before cpp-httplib reads the body: a form-typed body (curl's default
  // for -d) would otherwise be parsed as a form and refused with 413 past 8 KiB.
  server.set_pre_routing_handler([this](const Request& request, Response& response) {
    if (!authorized(request, options.token)) {
      reply(response, Json{{"error", "missing or wrong bearer token (Authorization: Bearer ...)"}},
            401);
      return httplib::Server::HandlerResponse::Handled;
    }
    if (request.method == "POST") {
      if (auto refusal = body_refusal(request)) {
        reply(response, Json{{"error", refusal->first}}, refusal->second);
        return httplib::Server::HandlerResponse::Handled;
      }
    }
    return httplib::Server::HandlerResponse::Unhandled;
  });
  server.set_error_handler([this](const Request& request, Response& response) {
    if (!response.body.empty())
      return;
    std::string what =
        response.status == 413
            ? fmt::format("request body larger than {} bytes", options.max_body_bytes)
        : response.status == 404 ? fmt::format("no endpoint {} {}", request.method, request.path)
                                 : fmt::format("HTTP {}", response.status);
    reply(response, Json{{"error", what}}, response.status);
  });
  server.set_exception_handler([](const Request&, Response& response, std::exception_ptr error) {
    std::string what = "unknown exception";
    try {
      std::rethrow_exception(std::move(error));
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
    }
    reply(response, Json{{"error", "internal error: " + what}}, 500);
  });
}

void HttpServer::Impl::routes() {
  server.Get("/", [](const Request&, Response& response) {
    reply(
        response,
        Json{{"name", "ptxbench serve"}, {"version", PTXBENCH_VERSION}, {"endpoints", kEndpoints}});
  });
  server.Get("/health", [this](const Request&, Response& response) {
    reply(response, health_json(service.health()));
  });
  server.Get("/metrics", [this](const Request&, Response& response) {
    auto text = service.metrics();
    if (!text)
      return reply_error(response, text.error());
    response.set_content(*text, "text/plain; version=0.0.4");
  });
  server.Get("/definitions", [this](const Request&, Response& response) {
    Json out = Json::array();
    for (const suite::Problem& problem : service.suite().problems())
      out.push_back({{"name", problem.name()},
                     {"description", problem.definition.description.value_or("")},
                     {"op_type", problem.definition.op_type},
                     {"suite", problem.suite}});
    reply(response, out);
  });
  server.Get(R"(/definitions/([^/]+))", [this](const Request& request, Response& response) {
    definition(request, response, false);
  });
  server.Get(
      R"(/definitions/([^/]+)/workloads)",
      [this](const Request& request, Response& response) { definition(request, response, true); });
  for (const TaskKindInfo& info : kTaskKinds) // POST /evaluate, /sanitize, /profile, /debug
    server.Post(fmt::format("/{}", info.name),
                [this, kind = info.kind](const Request& request, Response& response) {
                  submit(kind, request, response);
                });
  server.Post("/tasks/batch",
              [this](const Request& request, Response& response) { batch(request, response); });
  server.Get(R"(/tasks/([^/]+))",
             [this](const Request& request, Response& response) { get_task(request, response); });
  server.Post("/v1/feedback",
              [this](const Request& request, Response& response) { feedback(request, response); });
  rollout_routes();
}

rollout::Rollouts* HttpServer::Impl::rollouts(Response& response) {
  if (options.rollouts == nullptr)
    reply(response,
          Json{{"error", "this server keeps no rollouts (`ptxbench serve` keeps them unless "
                         "started with --no-rollouts)"}},
          404);
  return options.rollouts;
}

namespace {

// The JSON body of a request, or its error answered.
std::optional<Json> json_body(const Request& request, Response& response) {
  auto body = trace::parse_json_text(request.body, "request body");
  if (!body) {
    reply_error(response, body.error());
    return std::nullopt;
  }
  return std::move(*body);
}

void reply_view(Response& response, const util::Expected<rollout::RolloutView>& view) {
  if (!view)
    return reply_error(response, view.error());
  reply(response, rollout::to_json(*view));
}

} // namespace

// A rollout endpoint with a JSON body: the rollouts (404 without), the body read by `read`
// (400 naming the JSON path), then `act` on the rollouts and what was read.
template <typename Read, typename Act>
void HttpServer::Impl::rollout_post(const Request& request, Response& response, Read read,
                                    Act act) {
  rollout::Rollouts* all = rollouts(response);
  auto body = all != nullptr ? json_body(request, response) : std::nullopt;
  if (!body)
    return;
  auto value = read(*body);
  if (!value)
    return reply_error(response, value.error());
  act(*all, *value);
}

void HttpServer::Impl::rollout_routes() {
  server.Post("/v1/prompt", [this](const Request& request, Response& response) {
    rollout_post(request, response, rollout::read_prompt_spec,
                 [&](rollout::Rollouts& all, const rollout::PromptSpec& spec) {
                   auto messages = all.prompt(spec);
                   if (!messages)
                     return reply_error(response, messages.error());
                   reply(response, Json{{"messages", rollout::messages_json(*messages)}});
                 });
  });
  server.Post("/v1/rollouts", [this](const Request& request, Response& response) {
    rollout_post(request, response, rollout::read_rollout_spec,
                 [&](rollout::Rollouts& all, const rollout::RolloutSpec& spec) {
                   reply_view(response, all.create(spec));
                 });
  });
  server.Post(R"(/v1/rollouts/([^/]+)/step)", [this](const Request& request, Response& response) {
    rollout_post(request, response, rollout::read_reply,
                 [&](rollout::Rollouts& all, const rollout::Reply& reply_read) {
                   reply_view(response, all.step(request.matches[1].str(), reply_read));
                 });
  });
  // Without a body to read: the rollout named in the path.
  const auto by_id = [this](auto act) {
    return [this, act](const Request& request, Response& response) {
      if (rollout::Rollouts* all = rollouts(response))
        reply_view(response, act(*all, request.matches[1].str()));
    };
  };
  server.Get(R"(/v1/rollouts/([^/]+))",
             by_id([](rollout::Rollouts& all, const std::string& id) { return all.get(id); }));
  server.Post(R"(/v1/rollouts/([^/]+)/retry)",
              by_id([](rollout::Rollouts& all, const std::string& id) { return all.retry(id); }));
  server.Post(R"(/v1/rollouts/([^/]+)/close)",
              by_id([](rollout::Rollouts& all, const std::string& id) { return all.close(id); }));
}

namespace {

// A POST /v1/feedback body: {"task_id", "source", "language"?, "target_speedup"? (null: none)}.
struct FeedbackRequest {
  std::string task_id;
  std::string source;
  compile::Language language = compile::Language::cuda;
  std::optional<double> target_speedup = 1.2;
};

util::Expected<FeedbackRequest> read_feedback_request(const Json& body) {
  static constexpr std::array<std::string_view, 4> kKeys{"task_id", "source", "language",
                                                         "target_speedup"};
  util::JsonReader in("request body");
  FeedbackRequest out;
  if (in.expect_object(body, "$")) {
    in.allow_only(body, "$", kKeys);
    out.task_id = in.string(body, "$", "task_id", util::Emptiness::rejected);
    out.source = in.string(body, "$", "source", util::Emptiness::rejected);
    if (auto language = in.optional_string(body, "$", "language", util::Emptiness::rejected)) {
      if (auto parsed = compile::parse_language(*language))
        out.language = *parsed;
      else
        in.fail("$.language", "expected \"cuda\" or \"triton\"");
    }
    if (const Json* target = util::JsonReader::optional(body, "target_speedup"))
      out.target_speedup = target->is_null() ? std::nullopt
                                             : in.optional_number(body, "$", "target_speedup",
                                                                  util::NumberRange{0, 1000});
  }
  return in.finish(std::move(out));
}

} // namespace

void HttpServer::Impl::feedback(const Request& request, Response& response) {
  if (options.checker == nullptr)
    return reply(response, Json{{"error", "this server renders no feedback (no checker)"}}, 404);
  auto body = json_body(request, response);
  if (!body)
    return;
  auto read = read_feedback_request(*body);
  if (!read)
    return reply_error(response, read.error());
  auto task = service.task(read->task_id, std::chrono::milliseconds(0));
  if (!task)
    return reply_error(response, task.error());
  auto problem = service.suite().find(task->problem);
  if (!problem)
    return reply_error(response, problem.error());
  auto rendered = task_feedback(*options.checker, *task, **problem, read->source, read->language,
                                read->target_speedup);
  if (!rendered)
    return reply_error(response, rendered.error());
  reply(response, Json{{"task_id", task->id},
                       {"category", store::to_string(rendered->category)},
                       {"feedback", rendered->feedback},
                       {"speedup", rendered->speedup ? Json(*rendered->speedup) : Json(nullptr)}});
}

void HttpServer::Impl::definition(const Request& request, Response& response, bool workloads) {
  auto problem = service.suite().find(request.matches[1].str());
  if (!problem)
    return reply_error(response, problem.error());
  if (workloads)
    return reply(response, Json::array({trace::to_json((*problem)->workload)}));
  reply(response, trace::to_json((*problem)->definition));
}

void HttpServer::Impl::submit(TaskKind kind, const Request& request, Response& response) {
  auto parsed = parse_task_request(request.body, kind, service.suite());
  if (!parsed)
    return reply_error(response, parsed.error());
  parsed->run = request.get_header_value(kRunHeader);
  if (parsed->run.size() > kMaxRunChars)
    return reply_error(response, util::make_error(util::ErrorKind::invalid_input,
                                                  fmt::format("{} is longer than {} characters",
                                                              kRunHeader, kMaxRunChars)));
  auto submitted = service.submit(*parsed);
  if (!submitted)
    return reply_error(response, submitted.error());
  reply(response, Json{{"task_id", submitted->task_id},
                       {"normalized_solution_name", submitted->solution_name}});
}

void HttpServer::Impl::get_task(const Request& request, Response& response) {
  auto wait = query_wait(request);
  if (!wait)
    return reply_error(response, wait.error());
  auto task = service.task(request.matches[1].str(), *wait);
  if (!task)
    return reply_error(response, task.error());
  reply(response, task_json(*task));
}

void HttpServer::Impl::batch(const Request& request, Response& response) {
  auto body = trace::parse_json_text(request.body, "request body");
  if (!body)
    return reply_error(response, body.error());
  auto read = read_batch(*body);
  if (!read)
    return reply_error(response, read.error());
  auto wait = wait_of(read->timeout_s);
  if (!wait)
    return reply_error(response, wait.error());
  const std::vector<std::string>& ids = read->task_ids;
  auto tasks = service.tasks(ids, *wait);
  if (!tasks)
    return reply_error(response, tasks.error());
  Json out = Json::array();
  for (const Task& task : *tasks)
    out.push_back(task_json(task));
  reply(response, out);
}

HttpServer::HttpServer(TaskService& service, HttpOptions options)
    : m_impl(std::make_unique<Impl>(service, std::move(options))) {
  m_impl->guards();
  m_impl->routes();
}

HttpServer::~HttpServer() {
  stop();
}

util::Expected<std::string> HttpServer::start() {
  Impl& impl = *m_impl;
  int port = impl.options.port;
  if (port == 0)
    port = impl.server.bind_to_any_port(impl.options.host);
  else if (!impl.server.bind_to_port(impl.options.host, port))
    port = -1;
  if (port <= 0)
    return util::make_error(util::ErrorKind::io, fmt::format("cannot listen on {}:{}",
                                                             impl.options.host, impl.options.port));
  impl.listen_returned = false;
  impl.thread = std::thread([&impl] {
    impl.server.listen_after_bind();
    impl.listen_returned = true;
  });
  impl.started = true;
  // stop() is a no-op until the accept loop runs.
  while (!impl.server.is_running() && !impl.listen_returned)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  if (impl.listen_returned) {
    stop();
    return util::make_error(util::ErrorKind::io, "the HTTP server stopped at once");
  }
  return fmt::format("http://{}:{}", impl.options.host, port);
}

void HttpServer::stop() {
  if (m_impl->options.rollouts != nullptr)
    m_impl->options.rollouts->stop();
  m_impl->service.stop_accepting();
  if (!m_impl->started)
    return;
  m_impl->server.stop();
  if (m_impl->thread.joinable())
    m_impl->thread.join();
  m_impl->started = false;
}

} // namespace ptxbench::service
