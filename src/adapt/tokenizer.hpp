// Token counts for the SFT build's length filter, behind one interface: a serving engine's
// tokenizer over HTTP (exact for the model it serves) or an approximation when none is at
// hand (ceil(UTF-8 bytes / 4), pack/compose.hpp), which every manifest labels as approximate.
//
// Endpoint dialects (POST <base>/tokenize):
//   vllm      {"model": M, "prompt": TEXT} → {"count": n, "tokens": [...], ...} (vLLM; SGLang
//             serves the same shape, not verified here)
//   llamacpp  {"content": TEXT} → {"tokens": [...]} (llama.cpp server)
//   llama-cpp-python  {"input": TEXT[, "model": M]} → {"tokens": [...]} (its server's
//             POST /extras/tokenize)
// A reply with "count" is read from it, otherwise from the length of "tokens".
#pragma once

#include "adapt/records.hpp"
#include "model/http_transport.hpp"
#include "util/error.hpp"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace ptxbench::adapt {

class Tokenizer {
public:
  virtual ~Tokenizer() = default;
  virtual util::Expected<std::int64_t> count(std::string_view text) = 0;
  virtual bool approximate() const = 0;
  // What the manifest records about it.
  virtual Json describe() const = 0;
};

class ApproxTokenizer final : public Tokenizer {
public:
  util::Expected<std::int64_t> count(std::string_view text) override;
  bool approximate() const override { return true; }
  Json describe() const override;
};

enum class TokenizeApi : std::uint8_t { vllm = 1, llamacpp = 2, llama_cpp_python = 3 };
std::optional<TokenizeApi> tokenize_api_from_string(std::string_view name);

class EndpointTokenizer final : public Tokenizer {
public:
  // `url`: the server's base URL or its /tokenize URL.
  EndpointTokenizer(model::HttpTransport& transport, std::string url, std::string model,
                    TokenizeApi api);
  util::Expected<std::int64_t> count(std::string_view text) override;
  bool approximate() const override { return false; }
  Json describe() const override;

private:
  std::string body(std::string_view text) const;

  model::HttpTransport& m_transport;
  std::string m_url;
  std::string m_model;
  TokenizeApi m_api;
};

// The count read out of a /tokenize reply body; bad_response naming the JSON path when it is
// not one of the two shapes ("tokenize reply: $.tokens[3]: expected an integer, got string").
util::Expected<std::int64_t> parse_tokenize_reply(std::string_view body);

} // namespace ptxbench::adapt
