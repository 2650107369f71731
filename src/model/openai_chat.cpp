// OpenAI Chat Completions, and every server that speaks it: vLLM, SGLang, OpenRouter, Together,
// local servers. POST {base}/chat/completions, "Authorization: Bearer <key>" when a key is set.
//
// Request: model, messages, temperature, top_p, presence_penalty, max tokens under
// `max_tokens_field` (OpenAI's reasoning models take only max_completion_tokens), top_k at the
// top level (the vLLM/SGLang extension; OpenAI itself rejects it, so leave it unset there),
// reasoning.effort as reasoning_effort, then extra_body merged over all of it (RFC 7386: a null
// removes a field) for server-specific knobs such as min_p, repetition_penalty,
// chat_template_kwargs or OpenRouter's provider routing.
// Reply: choices[0].message.content (a string, or a list of text parts), reasoning from
// message.reasoning_content (vLLM, SGLang, DeepSeek) or message.reasoning (OpenRouter);
// usage.prompt_tokens, completion_tokens (reasoning included) and
// completion_tokens_details.reasoning_tokens; OpenRouter's usage.cost is taken as the cost;
// llama.cpp's timings.prompt_ms and timings.predicted_ms as the server's prompt and generation
// time (other servers send no timings).
#include "model/providers.hpp"

namespace ptxbench::model {
namespace {

class OpenAiChat final : public ProviderProtocol {
public:
  OpenAiChat(const ModelSpec& spec, const Secret& key) : m_spec(spec), m_key(key) {}

  std::string_view name() const override { return "openai"; }

  HttpRequest build(const ChatRequest& request) const override {
    HttpRequest http;
    http.url = m_spec.base_url + "/chat/completions";
    http.headers.push_back({"Content-Type", "application/json", Sensitivity::plain});
    if (!m_key.empty())
      http.headers.push_back({"Authorization", "Bearer " + m_key.reveal(), Sensitivity::secret});
    http.body = dump_body(body(request));
    return http;
  }

  util::Expected<ParsedReply> parse(const Json& body) const override {
    auto choices = body.find("choices");
    if (choices == body.end() || !choices->is_array() || choices->empty())
      return bad_shape(name(), "no choices" + error_detail(body));
    const Json& choice = choices->front();
    auto message = choice.find("message");
    if (message == choice.end() || !message->is_object())
      return bad_shape(name(), "choices[0] has no message");
    ParsedReply reply;
    reply.text = content_text(*message);
    reply.reasoning = reasoning_text(*message);
    reply.finish_reason = string_or_empty(choice, "finish_reason");
    read_usage(body, reply);
    reply.timings = read_timings(body);
    return reply;
  }

private:
  Json body(const ChatRequest& request) const {
    Json body = Json::object();
    body["model"] = m_spec.model;
    Json messages = Json::array();
    for (const auto& m : request.messages)
      messages.push_back({{"role", to_string(m.role)}, {"content", m.content}});
    body["messages"] = std::move(messages);
    const auto& s = request.sampling;
    put_optional(body, "temperature", s.temperature);
    put_optional(body, "top_p", s.top_p);
    put_optional(body, "presence_penalty", s.presence_penalty);
    put_optional(body, "top_k", s.top_k);
    put_optional(body, m_spec.max_tokens_field.c_str(), s.max_output_tokens);
    if (request.reasoning.effort)
      body["reasoning_effort"] = *request.reasoning.effort;
    body["stream"] = false;
    body.merge_patch(request.extra_body);
    return body;
  }

  static std::string content_text(const Json& message) {
    auto content = message.find("content");
    if (content == message.end() || content->is_null())
      return {};
    if (content->is_string())
      return content->get<std::string>();
    std::string text;
    if (content->is_array())
      for (const auto& part : *content)
        text += string_or_empty(part, "text");
    return text;
  }

  static std::optional<std::string> reasoning_text(const Json& message) {
    for (const char* key : {"reasoning_content", "reasoning"}) {
      std::string text = string_or_empty(message, key);
      if (!text.empty())
        return text;
    }
    return std::nullopt;
  }

  static ServerTimings read_timings(const Json& body) {
    ServerTimings timings;
    auto found = body.find("timings");
    if (found == body.end() || !found->is_object())
      return timings;
    auto number = [&](const char* key) -> std::optional<double> {
      auto it = found->find(key);
      if (it == found->end() || !it->is_number() || it->get<double>() < 0)
        return std::nullopt;
      return it->get<double>();
    };
    timings.prompt_ms = number("prompt_ms");
    timings.generation_ms = number("predicted_ms");
    return timings;
  }

  static void read_usage(const Json& body, ParsedReply& reply) {
    auto usage = body.find("usage");
    if (usage == body.end() || !usage->is_object())
      return;
    reply.usage.input_tokens = integer_or_zero(*usage, "prompt_tokens");
    reply.usage.output_tokens = integer_or_zero(*usage, "completion_tokens");
    if (auto details = usage->find("completion_tokens_details");
        details != usage->end() && details->is_object())
      reply.usage.reasoning_tokens = integer_or_zero(*details, "reasoning_tokens");
    if (auto cost = usage->find("cost"); cost != usage->end() && cost->is_number())
      reply.provider_cost_usd = cost->get<double>();
  }

  static std::string error_detail(const Json& body) {
    auto error = body.find("error");
    if (error == body.end())
      return "";
    if (error->is_object())
      return ": " + string_or_empty(*error, "message");
    return ": " + error->dump();
  }

  ModelSpec m_spec;
  Secret m_key;
};

} // namespace

std::unique_ptr<ProviderProtocol> make_openai_chat(const ModelSpec& spec, const Secret& key) {
  return std::make_unique<OpenAiChat>(spec, key);
}

} // namespace ptxbench::model
