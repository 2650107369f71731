#include "adapt/tokenizer.hpp"

#include "pack/compose.hpp"

#include <fmt/core.h>

namespace ptxbench::adapt {

util::Expected<std::int64_t> ApproxTokenizer::count(std::string_view text) {
  return static_cast<std::int64_t>(pack::measure(text).approx_tokens);
}

Json ApproxTokenizer::describe() const {
  return Json{{"kind", "approx"}, {"approximate", true}, {"note", pack::kTokenNote}};
}

std::optional<TokenizeApi> tokenize_api_from_string(std::string_view name) {
  if (name == "vllm" || name == "sglang")
    return TokenizeApi::vllm;
  if (name == "llamacpp" || name == "llama.cpp")
    return TokenizeApi::llamacpp;
  if (name == "llama-cpp-python")
    return TokenizeApi::llama_cpp_python;
  return std::nullopt;
}

EndpointTokenizer::EndpointTokenizer(model::HttpTransport& transport, std::string url,
                                     std::string model, TokenizeApi api)
    : m_transport(transport), m_url(std::move(url)), m_model(std::move(model)), m_api(api) {
  while (!m_url.empty() && m_url.back() == '/')
    m_url.pop_back();
  if (!m_url.ends_with("/tokenize"))
    m_url += "/tokenize";
}

std::string EndpointTokenizer::body(std::string_view text) const {
  Json request;
  switch (m_api) {
  case TokenizeApi::vllm:
    request = Json{{"model", m_model}, {"prompt", text}};
    break;
  case TokenizeApi::llamacpp:
    request = Json{{"content", text}};
    break;
  case TokenizeApi::llama_cpp_python:
    request = Json{{"input", text}};
    if (!m_model.empty())
      request["model"] = m_model;
    break;
  }
  return request.dump(-1, ' ', false, Json::error_handler_t::replace);
}

util::Expected<std::int64_t> EndpointTokenizer::count(std::string_view text) {
  model::HttpRequest request;
  request.url = m_url;
  request.headers.push_back({"Content-Type", "application/json"});
  request.body = body(text);
  request.timeout = std::chrono::minutes(2);
  auto response = m_transport.send(request);
  PTXBENCH_TRY(response);
  if (response->status != 200)
    return util::make_error(
        util::ErrorKind::http_status,
        fmt::format("{}: HTTP {}: {}", m_url, response->status, response->body.substr(0, 200)));
  auto count = parse_tokenize_reply(response->body);
  if (!count)
    return util::make_error(count.error().kind, m_url + ": " + count.error().message);
  return count;
}

Json EndpointTokenizer::describe() const {
  return Json{{"kind", "endpoint"},
              {"approximate", false},
              {"url", m_url},
              {"model", m_model},
              {"api", m_api == TokenizeApi::vllm       ? "vllm"
                      : m_api == TokenizeApi::llamacpp ? "llamacpp"
                                                       : "llama-cpp-python"}};
}

util::Expected<std::int64_t> parse_tokenize_reply(std::string_view body) {
  const Json reply = Json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (reply.is_object()) {
    auto count = reply.find("count");
    if (count != reply.end() && count->is_number_integer() && count->get<std::int64_t>() >= 0)
      return count->get<std::int64_t>();
    auto tokens = reply.find("tokens");
    if (tokens != reply.end() && tokens->is_array())
      return static_cast<std::int64_t>(tokens->size());
  }
  return util::make_error(util::ErrorKind::bad_response,
                          "tokenize reply has neither \"count\" nor a \"tokens\" array");
}

} // namespace ptxbench::adapt
