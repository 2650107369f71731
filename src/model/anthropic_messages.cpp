// Anthropic Messages. POST {base}/v1/messages with x-api-key and anthropic-version 2023-06-01.
//
// Request: model, max_tokens (required by the API; the registry insists on it), system as a
// top-level string (all system messages joined), user/assistant messages, temperature, top_p,
// top_k (presence_penalty does not exist here and is not sent). Reasoning: mode "adaptive" →
// thinking {"type":"adaptive"}; "enabled" or a budget → {"type":"enabled","budget_tokens":N};
// "disabled" → {"type":"disabled"}; effort → output_config {"effort": ...}. extra_body is
// merged last.
// Reply: content blocks; "text" blocks joined form the text, "thinking" blocks the reasoning
// (redacted_thinking carries no text). usage.input_tokens (+ cache creation and cache read
// tokens) and usage.output_tokens, which include thinking; the API does not report thinking
// tokens apart, so reasoning_tokens stays 0.
#include "model/providers.hpp"

namespace ptxbench::model {
namespace {

constexpr std::string_view kApiVersion = "2023-06-01";

class AnthropicMessages final : public ProviderProtocol {
public:
  AnthropicMessages(const ModelSpec& spec, const Secret& key) : m_spec(spec), m_key(key) {}

  std::string_view name() const override { return "anthropic"; }

  HttpRequest build(const ChatRequest& request) const override {
    HttpRequest http;
    http.url = m_spec.base_url + "/v1/messages";
    http.headers.push_back({"content-type", "application/json", Sensitivity::plain});
    http.headers.push_back({"anthropic-version", std::string(kApiVersion), Sensitivity::plain});
    if (!m_key.empty())
      http.headers.push_back({"x-api-key", m_key.reveal(), Sensitivity::secret});
    http.body = dump_body(body(request));
    return http;
  }

  util::Expected<ParsedReply> parse(const Json& body) const override {
    if (string_or_empty(body, "type") == "error" || body.contains("error"))
      return bad_shape(name(), "error reply: " + body.value("error", Json::object()).dump());
    auto content = body.find("content");
    if (content == body.end() || !content->is_array())
      return bad_shape(name(), "no content array");
    ParsedReply reply;
    std::string thinking;
    for (const auto& block : *content) {
      std::string type = string_or_empty(block, "type");
      if (type == "text")
        reply.text += string_or_empty(block, "text");
      if (type == "thinking")
        thinking += string_or_empty(block, "thinking");
    }
    if (!thinking.empty())
      reply.reasoning = std::move(thinking);
    reply.finish_reason = string_or_empty(body, "stop_reason");
    if (auto usage = body.find("usage"); usage != body.end() && usage->is_object()) {
      reply.usage.input_tokens = integer_or_zero(*usage, "input_tokens") +
                                 integer_or_zero(*usage, "cache_creation_input_tokens") +
                                 integer_or_zero(*usage, "cache_read_input_tokens");
      reply.usage.output_tokens = integer_or_zero(*usage, "output_tokens");
    }
    return reply;
  }

private:
  Json body(const ChatRequest& request) const {
    Json body = Json::object();
    body["model"] = m_spec.model;
    put_optional(body, "max_tokens", request.sampling.max_output_tokens);
    if (std::string system = system_text(request.messages); !system.empty())
      body["system"] = std::move(system);
    Json messages = Json::array();
    for (const auto& m : request.messages)
      if (m.role != Role::system)
        messages.push_back({{"role", to_string(m.role)}, {"content", m.content}});
    body["messages"] = std::move(messages);
    put_optional(body, "temperature", request.sampling.temperature);
    put_optional(body, "top_p", request.sampling.top_p);
    put_optional(body, "top_k", request.sampling.top_k);
    add_reasoning(body, request.reasoning);
    body.merge_patch(request.extra_body);
    return body;
  }

  static void add_reasoning(Json& body, const ReasoningSettings& r) {
    std::string mode = r.mode.value_or(r.budget_tokens ? "enabled" : "");
    if (mode == "adaptive")
      body["thinking"] = {{"type", "adaptive"}};
    if (mode == "disabled")
      body["thinking"] = {{"type", "disabled"}};
    if (mode == "enabled") {
      body["thinking"] = {{"type", "enabled"}};
      put_optional(body["thinking"], "budget_tokens", r.budget_tokens);
    }
    if (r.effort)
      body["output_config"] = {{"effort", *r.effort}};
  }

  ModelSpec m_spec;
  Secret m_key;
};

} // namespace

std::unique_ptr<ProviderProtocol> make_anthropic_messages(const ModelSpec& spec,
                                                          const Secret& key) {
  return std::make_unique<AnthropicMessages>(spec, key);
}

} // namespace ptxbench::model
