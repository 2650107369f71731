#include "agent/remote_executor.hpp"

#include "agent/feedback.hpp"

#include <algorithm>
#include <fmt/core.h>
#include <limits>
#include <optional>

namespace ptxbench::agent {
namespace {

using Json = nlohmann::ordered_json;
using Clock = std::chrono::steady_clock;

constexpr std::size_t kMaxErrorChars = 300;

std::string base_of(std::string url) {
  while (!url.empty() && url.back() == '/')
    url.pop_back();
  return url;
}

// The service's {"error": "..."} text, or the start of whatever it sent.
std::string error_text(const std::string& body) {
  Json json = Json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (json.is_object() && json.contains("error") && json["error"].is_string())
    return clip(json["error"].get<std::string>(), kMaxErrorChars);
  return clip(body, kMaxErrorChars);
}

} // namespace

util::Status check_service_urls(const std::vector<std::string>& urls) {
  for (const std::string& url : urls) {
    const bool http = url.starts_with("http://") && url.size() > 7;
    const bool https = url.starts_with("https://") && url.size() > 8;
    if (!http && !https)
      return util::make_error(util::ErrorKind::invalid_input,
                              fmt::format("evaluation service \"{}\": expected an http:// or "
                                          "https:// URL such as http://127.0.0.1:8000",
                                          model::redact_url(url)));
  }
  return util::Ok{};
}

RemoteExecutor::RemoteExecutor(const exec::Checker& checker, model::HttpTransport& transport,
                               RemoteOptions options)
    : m_checker(checker), m_transport(transport), m_options(std::move(options)) {
  if (m_options.urls.empty())
    throw util::Fatal("RemoteExecutor: no service URL");
  for (std::string& url : m_options.urls)
    url = base_of(url);
}

util::Expected<Json> RemoteExecutor::exchange(model::HttpMethod method, const std::string& url,
                                              std::string body, std::chrono::milliseconds timeout) {
  model::HttpRequest request;
  request.method = method;
  request.url = url;
  request.body = std::move(body);
  request.timeout = timeout;
  request.connect_timeout = std::min(timeout, std::chrono::milliseconds(10000));
  if (method == model::HttpMethod::post)
    request.headers.push_back({"Content-Type", "application/json"});
  if (!m_options.token.empty())
    request.headers.push_back(
        {"Authorization", "Bearer " + m_options.token.reveal(), model::Sensitivity::secret});
  PTXBENCH_TRY_ASSIGN(auto response, m_transport.send(request));
  const std::string where = fmt::format("{} {}", method == model::HttpMethod::get ? "GET" : "POST",
                                        model::redact_url(url));
  if (response.status != 200)
    return util::make_error(
        util::ErrorKind::http_status,
        fmt::format("{}: HTTP {}: {}", where, response.status, error_text(response.body)));
  Json json = Json::parse(response.body, nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded())
    return util::make_error(util::ErrorKind::bad_response, where + ": the answer is not JSON");
  return json;
}

util::Expected<std::string> RemoteExecutor::pick_service() {
  if (m_options.urls.size() == 1)
    return m_options.urls.front();
  std::optional<std::string> best;
  std::int64_t best_queue = std::numeric_limits<std::int64_t>::max();
  std::string failures;
  for (const std::string& url : m_options.urls) {
    auto health = exchange(model::HttpMethod::get, url + "/health", "", m_options.request_timeout);
    const bool usable = health && health->is_object() &&
                        health->value("status", "") != "stopping" &&
                        (*health)["queue_size"].is_number_integer();
    if (!usable) {
      failures += fmt::format("; {}: {}", model::redact_url(url),
                              health ? "not taking tasks" : health.error().message);
      continue;
    }
    const auto queue = (*health)["queue_size"].get<std::int64_t>();
    if (queue < best_queue) {
      best = url;
      best_queue = queue;
    }
  }
  if (!best)
    return util::make_error(util::ErrorKind::transport,
                            "no evaluation service is taking tasks" + failures);
  return *best;
}

util::Expected<std::string> RemoteExecutor::submit(const std::string& url,
                                                   const std::string& source,
                                                   const suite::Problem& problem,
                                                   compile::Arch arch) {
  exec::EvalOptions options = m_options.eval;
  options.arch = arch;
  // Memory checking (the run's default) is the service's /sanitize: /evaluate plus memcheck.
  const std::string endpoint =
      options.sanitize == exec::Sanitize::memcheck ? "/sanitize" : "/evaluate";
  PTXBENCH_TRY_ASSIGN(auto reply,
                      exchange(model::HttpMethod::post, url + endpoint,
                               evaluate_request(source, problem, options)
                                   .dump(-1, ' ', false, Json::error_handler_t::replace),
                               m_options.request_timeout));
  if (!reply.is_object() || !reply["task_id"].is_string())
    return util::make_error(util::ErrorKind::bad_response, "POST " + model::redact_url(url) +
                                                               endpoint +
                                                               ": no task_id in the answer");
  return reply["task_id"].get<std::string>();
}

util::Expected<Json> RemoteExecutor::wait(const std::string& url, const std::string& task_id) {
  const auto deadline = Clock::now() + m_options.max_wait;
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0)
      return util::make_error(util::ErrorKind::timeout,
                              fmt::format("task {} on {} did not finish within {} s", task_id,
                                          model::redact_url(url),
                                          m_options.max_wait.count() / 1000));
    const auto poll = std::min<std::chrono::milliseconds>(m_options.poll, left);
    PTXBENCH_TRY_ASSIGN(auto task, exchange(model::HttpMethod::get,
                                            fmt::format("{}/tasks/{}?timeout={:.3f}", url, task_id,
                                                        static_cast<double>(poll.count()) / 1000.0),
                                            "", poll + m_options.request_timeout));
    const std::string status = task.is_object() ? task.value("status", "") : "";
    if (status == "completed" || status == "failed")
      return task;
    if (status != "queued" && status != "running")
      return util::make_error(util::ErrorKind::bad_response,
                              fmt::format("task {}: unknown status \"{}\"", task_id, status));
  }
}

util::Expected<TurnResult> RemoteExecutor::evaluate(const std::string& source,
                                                    const suite::Problem& problem,
                                                    compile::Arch arch) {
  PTXBENCH_TRY_ASSIGN(auto checked, check_before_gpu(m_checker, frontend::of(kServiceLanguage),
                                                     source, problem, arch));
  if (checked.stopped)
    return std::move(*checked.stopped);
  PTXBENCH_TRY_ASSIGN(auto url, pick_service());
  PTXBENCH_TRY_ASSIGN(auto task_id, submit(url, source, problem, arch));
  PTXBENCH_TRY_ASSIGN(auto task, wait(url, task_id));
  if (task["status"] == "failed")
    return util::make_error(
        util::ErrorKind::unsupported,
        fmt::format("the evaluation service {} failed task {}: {}", model::redact_url(url), task_id,
                    clip(task.value("error", "no reason given"), kMaxErrorChars)));
  PTXBENCH_TRY_ASSIGN(auto result,
                      read_result(task.value("result", Json()), task.value("needs_gpu", ""),
                                  std::move(checked.report)));
  return evaluation_turn(result.evaluation, std::move(result.trace), source);
}

} // namespace ptxbench::agent
