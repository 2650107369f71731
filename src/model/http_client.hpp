// The machinery every HTTP provider shares (internal to model/): a provider file supplies a
// ProviderProtocol — how to build its request and read its reply — and HttpModelClient does
// the rest: timeouts, retries (retry.hpp), UTF-8 repair, cost, attempt reports and the
// scrubbing of the API key from every error text.
#pragma once

#include "model/chat.hpp"
#include "model/http_transport.hpp"
#include "model/registry.hpp"
#include "model/retry.hpp"
#include "model/secret.hpp"

#include <memory>
#include <mutex>
#include <random>

namespace ptxbench::model {

// What a provider reads out of a successful response body.
struct ParsedReply {
  std::string text;
  std::optional<std::string> reasoning;
  Usage usage;
  std::string finish_reason;
  std::optional<double> provider_cost_usd; // when the provider reports what it charged
  ServerTimings timings;                   // when the server reports them
};

class ProviderProtocol {
public:
  virtual ~ProviderProtocol() = default;
  virtual std::string_view name() const = 0;
  // URL, headers (the key header marked secret) and JSON body; timeouts are set by the client.
  virtual HttpRequest build(const ChatRequest& request) const = 0;
  // bad_response when the body is not the provider's reply shape.
  virtual util::Expected<ParsedReply> parse(const Json& body) const = 0;
};

struct HttpClientOptions {
  RetryPolicy retry;
  std::size_t max_response_bytes = std::size_t{64} << 20;
};

class HttpModelClient final : public ModelClient {
public:
  HttpModelClient(ModelSpec spec, std::unique_ptr<ProviderProtocol> protocol,
                  HttpTransport& transport, Sleeper& sleeper, Secret key,
                  HttpClientOptions options);

  util::Expected<ChatResponse> complete(const ChatRequest& request) override;
  std::string_view provider() const override { return m_protocol->name(); }
  const std::string& model_name() const override { return m_spec.name; }

private:
  struct Attempt;
  Attempt attempt_once(const HttpRequest& http);
  Attempt from_response(HttpResponse response, const std::string& url);
  void price(ChatResponse& reply, std::optional<double> provider_cost) const;
  util::Error describe(util::ErrorKind kind, const std::string& what) const;
  void report(const ChatRequest& request, const Attempt& attempt, int number,
              const std::string& hash, std::chrono::system_clock::time_point started) const;
  std::chrono::milliseconds delay_after(int failed_attempts, const Attempt& attempt);

  ModelSpec m_spec;
  std::unique_ptr<ProviderProtocol> m_protocol;
  HttpTransport& m_transport;
  Sleeper& m_sleeper;
  Secret m_key;
  HttpClientOptions m_options;
  std::mutex m_rng_mutex;
  std::mt19937_64 m_rng;
};

// Tokens × $/M-token prices; output tokens include reasoning tokens.
double cost_usd(const Usage& usage, const Prices& prices);

// Shared request-building helpers for the provider files.
std::string dump_body(const Json& body); // invalid UTF-8 in message texts is replaced
void put_optional(Json& object, const char* key, const std::optional<double>& value);
void put_optional(Json& object, const char* key, const std::optional<std::int64_t>& value);
// The system messages joined by blank lines ("" when none).
std::string system_text(const std::vector<Message>& messages);
// The texts of `key`'s string members, or "" (for optional reply fields).
std::string string_or_empty(const Json& object, const char* key);
std::int64_t integer_or_zero(const Json& object, const char* key);
util::Error bad_shape(std::string_view provider, const std::string& what);

} // namespace ptxbench::model
