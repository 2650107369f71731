#include "adapt/tokenizer.hpp"

#include "pack/compose.hpp"
#include "util/json_reader.hpp"

#include <fmt/core.h>
#include <limits>

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
  PTXBENCH_TRY_ASSIGN(auto response, m_transport.send(request));
  if (response.status != 200)
    return util::make_error(
        util::ErrorKind::http_status,
        fmt::format("{}: HTTP {}: {}", m_url, response.status, response.body.substr(0, 200)));
  auto count = parse_tokenize_reply(response.body);
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

// vLLM and SGLang send {"count": N, "tokens": [...]}; llama.cpp and llama-cpp-python send
// {"tokens": [...]}. A "count" that is present is the answer; otherwise every token must be an
// id, so a reply of another shape is an error naming its path and not a wrong count.
util::Expected<std::int64_t> parse_tokenize_reply(std::string_view body) {
  util::JsonReader in("tokenize reply", util::ErrorKind::bad_response);
  const Json reply = Json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (reply.is_discarded()) {
    in.fail("$", "not valid JSON");
    return in.finish(std::int64_t{0});
  }
  if (!in.expect_object(reply, "$"))
    return in.finish(std::int64_t{0});
  if (util::JsonReader::optional(reply, "count") != nullptr)
    return in.finish(in.integer(reply, "$", "count",
                                util::IntegerRange{0, std::numeric_limits<std::int64_t>::max()}));
  const Json* tokens = util::JsonReader::optional(reply, "tokens");
  if (tokens == nullptr) {
    in.fail("$", "missing required key \"count\" or \"tokens\"");
    return in.finish(std::int64_t{0});
  }
  if (in.expect_array(*tokens, "$.tokens"))
    for (std::size_t i = 0; i < tokens->size(); ++i)
      in.integer_at((*tokens)[i], util::index_path("$.tokens", i));
  return in.finish(static_cast<std::int64_t>(tokens->size()));
}

} // namespace ptxbench::adapt
