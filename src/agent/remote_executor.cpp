#include "agent/remote_executor.hpp"

#include "agent/feedback.hpp"
#include "util/json_reader.hpp"

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
  const Json json = Json::parse(body, nullptr, /*allow_exceptions=*/false);
  util::JsonReader in("");
  const auto error = in.optional_string(json, "$", "error", util::Emptiness::allowed);
  return clip(error && in.ok() ? *error : body, kMaxErrorChars);
}

// The queue length GET /health reports, or nullopt for a service that is stopping.
util::Expected<std::optional<std::int64_t>> read_health(const Json& health,
                                                        const std::string& origin) {
  util::JsonReader in(origin, util::ErrorKind::bad_response);
  if (!in.expect_object(health, "$"))
    return in.finish(std::optional<std::int64_t>());
  const auto status = in.optional_string(health, "$", "status", util::Emptiness::allowed);
  const std::int64_t queue = in.integer(health, "$", "queue_size");
  return in.finish(status == "stopping" ? std::nullopt : std::optional(queue));
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
    auto queue = health ? read_health(*health, "GET " + model::redact_url(url) + "/health")
                        : util::Expected<std::optional<std::int64_t>>(health.error());
    if (!queue || !*queue) {
      failures += fmt::format("; {}: {}", model::redact_url(url),
                              queue ? "not taking tasks" : queue.error().message);
      continue;
    }
    if (**queue < best_queue) {
      best = url;
      best_queue = **queue;
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
  // The endpoint runs the tool: memory checking (the run's default) is the service's /sanitize,
  // /evaluate plus memcheck; the cuda-gdb pass is /debug. One endpoint runs one tool: a request
  // asking for both is refused by the service, naming the member that belongs elsewhere.
  const std::string endpoint = options.sanitize == exec::Sanitize::memcheck ? "/sanitize"
                               : options.debug == exec::Debug::cuda_gdb     ? "/debug"
                                                                            : "/evaluate";
  PTXBENCH_TRY_ASSIGN(auto reply,
                      exchange(model::HttpMethod::post, url + endpoint,
                               evaluate_request(source, problem, options)
                                   .dump(-1, ' ', false, Json::error_handler_t::replace),
                               m_options.request_timeout));
  util::JsonReader in("POST " + model::redact_url(url) + endpoint, util::ErrorKind::bad_response);
  std::string task_id;
  if (in.expect_object(reply, "$"))
    task_id = in.string(reply, "$", "task_id", util::Emptiness::rejected);
  return in.finish(std::move(task_id));
}

util::Expected<TaskAnswer> read_task_answer(const Json& task, const std::string& origin) {
  util::JsonReader in(origin, util::ErrorKind::bad_response);
  TaskAnswer answer;
  if (!in.expect_object(task, "$"))
    return in.finish(std::move(answer));
  answer.status = in.string(task, "$", "status", util::Emptiness::allowed);
  answer.error =
      in.optional_string(task, "$", "error", util::Emptiness::allowed).value_or("no reason given");
  answer.needs_gpu =
      in.optional_string(task, "$", "needs_gpu", util::Emptiness::allowed).value_or("");
  if (const Json* result = util::JsonReader::optional(task, "result"))
    answer.result = *result;
  return in.finish(std::move(answer));
}

util::Expected<TaskAnswer> RemoteExecutor::wait(const std::string& url,
                                                const std::string& task_id) {
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
    PTXBENCH_TRY_ASSIGN(auto answer, read_task_answer(task, fmt::format("task {} on {}", task_id,
                                                                        model::redact_url(url))));
    const std::string& status = answer.status;
    if (status == "completed" || status == "failed")
      return answer;
    if (status != "queued" && status != "running")
      return util::make_error(util::ErrorKind::bad_response,
                              fmt::format("task {}: unknown status \"{}\"", task_id, status));
  }
}

util::Expected<TurnResult> RemoteExecutor::evaluate(const std::string& source,
                                                    const suite::Problem& problem,
                                                    compile::Arch arch) {
  PTXBENCH_TRY_ASSIGN(
      auto checked,
      check_before_gpu(m_checker, frontend::of(m_options.eval.language), source, problem, arch));
  if (checked.stopped)
    return std::move(*checked.stopped);
  PTXBENCH_TRY_ASSIGN(auto url, pick_service());
  PTXBENCH_TRY_ASSIGN(auto task_id, submit(url, source, problem, arch));
  PTXBENCH_TRY_ASSIGN(auto task, wait(url, task_id));
  if (task.status == "failed")
    return util::make_error(util::ErrorKind::unsupported,
                            fmt::format("the evaluation service {} failed task {}: {}",
                                        model::redact_url(url), task_id,
                                        clip(task.error, kMaxErrorChars)));
  PTXBENCH_TRY_ASSIGN(auto result,
                      read_result(task.result, task.needs_gpu, std::move(checked.report)));
  return evaluation_turn(result.evaluation, std::move(result.trace), source);
}

} // namespace ptxbench::agent
