// The model-client interface every provider implements: a chat request in, a reply (text,
// reasoning, usage, cost, latency, raw JSON) or a classified error out.
#pragma once

#include "util/error.hpp"

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ptxbench::model {

using Json = nlohmann::ordered_json;

enum class Role : std::uint8_t { system = 1, user = 2, assistant = 3 };
std::string_view to_string(Role role);

struct Message {
  Role role = Role::user;
  std::string content;
};

// Unset fields are not sent, so the provider's default applies.
struct SamplingParams {
  std::optional<double> temperature;
  std::optional<double> top_p;
  std::optional<std::int64_t> top_k;
  std::optional<double> presence_penalty;
  std::optional<std::int64_t> max_output_tokens;
};

// Provider-neutral reasoning knobs; each provider maps what it supports (see its file).
struct ReasoningSettings {
  std::optional<std::string> mode;           // "enabled", "adaptive" or "disabled"
  std::optional<std::string> effort;         // "none", "low", "medium", "high", "xhigh"...
  std::optional<std::int64_t> budget_tokens; // thinking budget where the API takes one
  bool include_thoughts = true;              // ask for reasoning text where the API can return it
};

struct Usage {
  std::int64_t input_tokens = 0;
  std::int64_t output_tokens = 0;    // everything generated, reasoning included
  std::int64_t reasoning_tokens = 0; // 0 when the provider does not report it
};

enum class CostSource : std::uint8_t {
  registry_prices = 1,   // tokens × the registry's $/M-token prices
  provider_reported = 2, // the provider said what it charged (OpenRouter usage.cost)
  unpriced = 3,          // no prices known: cost_usd is 0
};

// Whether a finish reason says the output stopped at the token limit, in each provider's
// spelling: "length" (OpenAI-compatible), "max_tokens" (Anthropic), "MAX_TOKENS" (Gemini).
bool stopped_at_token_limit(std::string_view finish_reason);

// Where the server's time went, as the server reports it (llama.cpp's `timings`: prompt_ms,
// predicted_ms); vLLM, SGLang and the hosted APIs report none. The rest of an attempt's latency
// is time queued at the server (a single-slot server serves one request at a time) and transfer.
struct ServerTimings {
  std::optional<double> prompt_ms;     // reading the prompt (prefill)
  std::optional<double> generation_ms; // generating the output (decode)
};

struct ChatResponse {
  std::string text;                     // the assistant's answer (valid UTF-8)
  std::optional<std::string> reasoning; // reasoning / thinking text, when returned
  Usage usage;
  std::chrono::duration<double, std::milli> latency{0}; // the successful attempt
  double cost_usd = 0;
  CostSource cost_source = CostSource::unpriced;
  std::string finish_reason; // the provider's spelling: "stop", "length", "end_turn", "STOP"...
  ServerTimings timings;
  Json raw;         // the provider's response body
  int attempts = 1; // HTTP attempts this reply took
};

// One HTTP attempt, reported as it ends (success or failure) so that the caller can persist
// every paid or failed call, including those of a call that finally fails. Messages never
// contain secrets.
struct AttemptRecord {
  int attempt = 1;
  std::string provider;
  std::string model; // registry name
  std::string request_sha256;
  std::chrono::system_clock::time_point started_at{};
  std::chrono::duration<double, std::milli> latency{0};
  std::optional<int> http_status;
  std::optional<util::Error> error;       // empty on success
  const ChatResponse* response = nullptr; // set on success, valid during the callback
};

using AttemptObserver = std::function<void(const AttemptRecord&)>;

// One HTTP attempt as it starts (AttemptRecord without its outcome), so that an attempt cut off
// by a crash is still on record; the same attempt's AttemptRecord follows when it ends.
struct AttemptStart {
  int attempt = 1;
  std::string provider;
  std::string model; // registry name
  std::string request_sha256;
  std::chrono::system_clock::time_point started_at{};
};
using AttemptStartObserver = std::function<void(const AttemptStart&)>;

struct ChatRequest {
  std::vector<Message> messages;
  SamplingParams sampling;
  ReasoningSettings reasoning;
  Json extra_body = Json::object();      // merged into the provider's request body, last
  AttemptObserver on_attempt;            // optional
  AttemptStartObserver on_attempt_start; // optional; HTTP providers call it, replay does not
};

class ModelClient {
public:
  virtual ~ModelClient() = default;
  // Errors: timeout, transport, http_status, rate_limited (infrastructure: retried and then
  // given up), bad_response (the peer's reply made no sense), invalid_input (our request or
  // setup was refused, e.g. an exhausted replay file).
  virtual util::Expected<ChatResponse> complete(const ChatRequest& request) = 0;
  virtual std::string_view provider() const = 0;
  virtual const std::string& model_name() const = 0; // registry name
};

} // namespace ptxbench::model
