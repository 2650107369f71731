#include "model/http_client.hpp"

#include "model/utf8.hpp"
#include "util/hash.hpp"

#include <fmt/core.h>

namespace ptxbench::model {
namespace {

constexpr std::size_t kErrorBodyChars = 400;

std::string snippet(std::string_view body) {
  std::string text = sanitize_utf8(body.substr(0, kErrorBodyChars));
  if (body.size() > kErrorBodyChars)
    text += "…";
  return text;
}

} // namespace

struct HttpModelClient::Attempt {
  std::optional<ChatResponse> response;
  std::optional<util::Error> error;
  std::optional<int> http_status;
  Retry retry = Retry::no;
  std::optional<std::chrono::milliseconds> retry_after;
  std::chrono::duration<double, std::milli> latency{0};
};

HttpModelClient::HttpModelClient(ModelSpec spec, std::unique_ptr<ProviderProtocol> protocol,
                                 HttpTransport& transport, Sleeper& sleeper, Secret key,
                                 HttpClientOptions options)
    : m_spec(std::move(spec)), m_protocol(std::move(protocol)), m_transport(transport),
      m_sleeper(sleeper), m_key(std::move(key)), m_options(options), m_rng(std::random_device{}()) {
}

util::Expected<ChatResponse> HttpModelClient::complete(const ChatRequest& request) {
  HttpRequest http = m_protocol->build(request);
  http.timeout = m_spec.timeout;
  http.connect_timeout =
      std::min<std::chrono::milliseconds>(std::chrono::seconds(30), http.timeout);
  http.max_response_bytes = m_options.max_response_bytes;
  std::string hash = util::sha256_hex(http.body);
  int attempts = std::max(1, m_options.retry.max_attempts);
  for (int number = 1;; ++number) {
    auto started = std::chrono::system_clock::now();
    if (request.on_attempt_start)
      request.on_attempt_start(
          AttemptStart{number, std::string(m_protocol->name()), m_spec.name, hash, started});
    Attempt attempt = attempt_once(http);
    if (attempt.response)
      attempt.response->attempts = number;
    report(request, attempt, number, hash, started);
    if (attempt.response)
      return std::move(*attempt.response);
    if (attempt.retry == Retry::no || number >= attempts) {
      util::Error error = std::move(*attempt.error);
      if (number > 1)
        error.message = fmt::format("{} (gave up after {} attempts)", error.message, number);
      return error;
    }
    m_sleeper.sleep_for(delay_after(number, attempt));
  }
}

HttpModelClient::Attempt HttpModelClient::attempt_once(const HttpRequest& http) {
  auto result = m_transport.send(http);
  if (result)
    return from_response(std::move(*result), http.url);
  Attempt attempt;
  util::ErrorKind kind = result.error().kind;
  attempt.error = describe(kind, result.error().message);
  bool transient = kind == util::ErrorKind::timeout || kind == util::ErrorKind::transport;
  attempt.retry = transient ? Retry::yes : Retry::no;
  return attempt;
}

HttpModelClient::Attempt HttpModelClient::from_response(HttpResponse response,
                                                        const std::string& url) {
  Attempt attempt;
  attempt.http_status = response.status;
  attempt.latency = response.elapsed;
  if (response.status < 200 || response.status > 299) {
    bool limited = response.status == 429;
    attempt.error = describe(limited ? util::ErrorKind::rate_limited : util::ErrorKind::http_status,
                             fmt::format("HTTP {} from {}: {}", response.status, redact_url(url),
                                         snippet(response.body)));
    attempt.retry = retry_for_status(response.status);
    attempt.retry_after = retry_after(response, std::chrono::system_clock::now());
    return attempt;
  }
  Json body = Json::parse(sanitize_utf8(response.body), nullptr, /*allow_exceptions=*/false);
  if (body.is_discarded()) {
    attempt.error =
        describe(util::ErrorKind::bad_response, "response is not JSON: " + snippet(response.body));
    return attempt;
  }
  auto parsed = m_protocol->parse(body);
  if (!parsed) {
    attempt.error = describe(parsed.error().kind, parsed.error().message);
    return attempt;
  }
  ChatResponse reply;
  reply.text = std::move(parsed->text);
  reply.reasoning = std::move(parsed->reasoning);
  reply.usage = parsed->usage;
  reply.finish_reason = std::move(parsed->finish_reason);
  reply.timings = parsed->timings;
  reply.latency = response.elapsed;
  reply.raw = std::move(body);
  price(reply, parsed->provider_cost_usd);
  attempt.response = std::move(reply);
  return attempt;
}

void HttpModelClient::price(ChatResponse& reply, std::optional<double> provider_cost) const {
  if (provider_cost) {
    reply.cost_usd = *provider_cost;
    reply.cost_source = CostSource::provider_reported;
  } else if (m_spec.prices) {
    reply.cost_usd = cost_usd(reply.usage, *m_spec.prices);
    reply.cost_source = CostSource::registry_prices;
  }
}

double cost_usd(const Usage& usage, const Prices& prices) {
  return (static_cast<double>(usage.input_tokens) * prices.input_per_mtok +
          static_cast<double>(usage.output_tokens) * prices.output_per_mtok) /
         1e6;
}

util::Error HttpModelClient::describe(util::ErrorKind kind, const std::string& what) const {
  std::string message = fmt::format("{} model {}: {}", m_protocol->name(), m_spec.name, what);
  return util::make_error(kind, scrub(message, m_key));
}

void HttpModelClient::report(const ChatRequest& request, const Attempt& attempt, int number,
                             const std::string& hash,
                             std::chrono::system_clock::time_point started) const {
  if (!request.on_attempt)
    return;
  AttemptRecord record;
  record.attempt = number;
  record.provider = std::string(m_protocol->name());
  record.model = m_spec.name;
  record.request_sha256 = hash;
  record.started_at = started;
  record.latency = std::chrono::system_clock::now() - started;
  record.http_status = attempt.http_status;
  record.error = attempt.error;
  record.response = attempt.response ? &*attempt.response : nullptr;
  request.on_attempt(record);
}

std::chrono::milliseconds HttpModelClient::delay_after(int failed_attempts,
                                                       const Attempt& attempt) {
  std::lock_guard lock(m_rng_mutex);
  return next_delay(m_options.retry, failed_attempts, attempt.retry_after, m_rng);
}

std::string dump_body(const Json& body) {
  return body.dump(-1, ' ', false, Json::error_handler_t::replace);
}

void put_optional(Json& object, const char* key, const std::optional<double>& value) {
  if (value)
    object[key] = *value;
}

void put_optional(Json& object, const char* key, const std::optional<std::int64_t>& value) {
  if (value)
    object[key] = *value;
}

std::string system_text(const std::vector<Message>& messages) {
  std::string text;
  for (const auto& message : messages) {
    if (message.role != Role::system)
      continue;
    if (!text.empty())
      text += "\n\n";
    text += message.content;
  }
  return text;
}

std::string string_or_empty(const Json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::int64_t integer_or_zero(const Json& object, const char* key) {
  auto it = object.find(key);
  return it != object.end() && it->is_number_integer() ? it->get<std::int64_t>() : 0;
}

util::Error bad_shape(std::string_view provider, const std::string& what) {
  return util::make_error(util::ErrorKind::bad_response,
                          fmt::format("{} reply: {}", provider, what));
}

bool stopped_at_token_limit(std::string_view finish_reason) {
  return finish_reason == "length" || finish_reason == "max_tokens" ||
         finish_reason == "MAX_TOKENS";
}

std::string_view to_string(Role role) {
  switch (role) {
  case Role::system:
    return "system";
  case Role::user:
    return "user";
  case Role::assistant:
    return "assistant";
  }
  return "user";
}

} // namespace ptxbench::model
