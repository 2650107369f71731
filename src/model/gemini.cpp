// Google Gemini (Generative Language API). POST {base}/v1beta/models/{model}:generateContent
// with the key in the x-goog-api-key header (never in the URL, where it would leak into logs).
//
// Request: contents (role "user" or "model", one text part each), systemInstruction from the
// system messages, generationConfig {temperature, topP, topK, presencePenalty,
// maxOutputTokens, thinkingConfig}. thinkingConfig: includeThoughts from
// reasoning.include_thoughts, thinkingBudget from budget_tokens (0 for mode "disabled"),
// thinkingLevel from effort (Gemini 3: "low", "high"; the API cannot switch thinking off
// entirely). extra_body is merged last.
// Reply: candidates[0].content.parts; parts with "thought": true are reasoning, the others the
// text. usageMetadata: promptTokenCount in, candidatesTokenCount + thoughtsTokenCount out
// (Gemini counts thoughts apart; they are billed as output), thoughtsTokenCount reasoning.
// A prompt blocked before generation (no candidates, promptFeedback.blockReason) is a
// bad_response naming the reason.
#include "model/providers.hpp"

namespace ptxbench::model {
namespace {

class Gemini final : public ProviderProtocol {
public:
  Gemini(const ModelSpec& spec, const Secret& key) : m_spec(spec), m_key(key) {}

  std::string_view name() const override { return "gemini"; }

  HttpRequest build(const ChatRequest& request) const override {
    HttpRequest http;
    http.url = m_spec.base_url + "/v1beta/models/" + m_spec.model + ":generateContent";
    http.headers.push_back({"Content-Type", "application/json", Sensitivity::plain});
    if (!m_key.empty())
      http.headers.push_back({"x-goog-api-key", m_key.reveal(), Sensitivity::secret});
    http.body = dump_body(body(request));
    return http;
  }

  util::Expected<ParsedReply> parse(const Json& body) const override {
    auto candidates = body.find("candidates");
    if (candidates == body.end() || !candidates->is_array() || candidates->empty())
      return bad_shape(name(), "no candidates" + block_reason(body));
    const Json& candidate = candidates->front();
    ParsedReply reply;
    std::string thoughts;
    if (auto content = candidate.find("content"); content != candidate.end())
      if (auto parts = content->find("parts"); parts != content->end() && parts->is_array())
        for (const auto& part : *parts) {
          bool thought = part.value("thought", false);
          (thought ? thoughts : reply.text) += string_or_empty(part, "text");
        }
    if (!thoughts.empty())
      reply.reasoning = std::move(thoughts);
    reply.finish_reason = string_or_empty(candidate, "finishReason");
    if (auto usage = body.find("usageMetadata"); usage != body.end() && usage->is_object()) {
      std::int64_t thinking = integer_or_zero(*usage, "thoughtsTokenCount");
      reply.usage.input_tokens = integer_or_zero(*usage, "promptTokenCount");
      reply.usage.output_tokens = integer_or_zero(*usage, "candidatesTokenCount") + thinking;
      reply.usage.reasoning_tokens = thinking;
    }
    return reply;
  }

private:
  Json body(const ChatRequest& request) const {
    Json body = Json::object();
    Json contents = Json::array();
    for (const auto& m : request.messages) {
      if (m.role == Role::system)
        continue;
      std::string role = m.role == Role::assistant ? "model" : "user";
      contents.push_back({{"role", role}, {"parts", Json::array({{{"text", m.content}}})}});
    }
    body["contents"] = std::move(contents);
    if (std::string system = system_text(request.messages); !system.empty())
      body["systemInstruction"] = {{"parts", Json::array({{{"text", system}}})}};
    body["generationConfig"] = generation_config(request);
    body.merge_patch(request.extra_body);
    return body;
  }

  static Json generation_config(const ChatRequest& request) {
    Json config = Json::object();
    const auto& s = request.sampling;
    put_optional(config, "temperature", s.temperature);
    put_optional(config, "topP", s.top_p);
    put_optional(config, "topK", s.top_k);
    put_optional(config, "presencePenalty", s.presence_penalty);
    put_optional(config, "maxOutputTokens", s.max_output_tokens);
    const auto& r = request.reasoning;
    Json thinking = {{"includeThoughts", r.include_thoughts}};
    if (r.mode == "disabled")
      thinking["thinkingBudget"] = 0;
    else
      put_optional(thinking, "thinkingBudget", r.budget_tokens);
    if (r.effort)
      thinking["thinkingLevel"] = *r.effort;
    config["thinkingConfig"] = std::move(thinking);
    return config;
  }

  static std::string block_reason(const Json& body) {
    auto feedback = body.find("promptFeedback");
    if (feedback == body.end() || !feedback->is_object())
      return "";
    std::string reason = string_or_empty(*feedback, "blockReason");
    return reason.empty() ? "" : " (prompt blocked: " + reason + ")";
  }

  ModelSpec m_spec;
  Secret m_key;
};

} // namespace

std::unique_ptr<ProviderProtocol> make_gemini(const ModelSpec& spec, const Secret& key) {
  return std::make_unique<Gemini>(spec, key);
}

} // namespace ptxbench::model
