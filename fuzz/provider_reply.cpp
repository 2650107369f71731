// Model API responses (untrusted bytes from a remote server): each provider protocol (OpenAI
// chat completions, Anthropic Messages, Gemini) reads the fuzzer's bytes as the HTTP body of
// one exchange, with the status and a Retry-After header also taken from the input. The whole
// client path runs: status handling, JSON parsing, the provider's reply shape, UTF-8 repair,
// usage and cost accounting. A reply that is accepted must carry valid UTF-8 text.
#include "model/http_client.hpp"
#include "model/providers.hpp"
#include "model/utf8.hpp"

#include <cstdint>
#include <cstdlib>
#include <string>

namespace {

using namespace ptxbench;
using namespace ptxbench::model;

class FixedTransport final : public HttpTransport {
public:
  explicit FixedTransport(HttpResponse response) : m_response(std::move(response)) {}
  util::Expected<HttpResponse> send(const HttpRequest&) override { return m_response; }

private:
  HttpResponse m_response;
};

class NoSleep final : public Sleeper {
public:
  void sleep_for(std::chrono::milliseconds) override {}
};

ModelSpec spec_for(const char* provider) {
  ModelSpec spec;
  spec.name = "fuzz";
  spec.provider = provider;
  spec.base_url = "http://127.0.0.1:9";
  spec.model = "fuzz-model";
  spec.prices = Prices{1.0, 2.0};
  return spec;
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2)
    return 0;
  static const int kStatuses[] = {200, 200, 200, 200, 400, 401, 429, 500, 503, 529};
  HttpResponse response;
  response.status = kStatuses[data[0] % 10];
  if (data[1] & 1)
    response.headers.emplace_back("retry-after", std::to_string(data[1] >> 1));
  response.body.assign(reinterpret_cast<const char*>(data) + 2, size - 2);

  FixedTransport transport(response);
  NoSleep sleeper;
  HttpClientOptions options;
  options.retry.max_attempts = 2;
  ChatRequest request;
  request.messages = {{Role::system, "system"}, {Role::user, "task"}};
  for (const char* provider : {"openai", "anthropic", "gemini"}) {
    const ModelSpec spec = spec_for(provider);
    const std::string name = provider;
    auto protocol = name == "openai"      ? make_openai_chat(spec, Secret("k"))
                    : name == "anthropic" ? make_anthropic_messages(spec, Secret("k"))
                                          : make_gemini(spec, Secret("k"));
    HttpModelClient client(spec, std::move(protocol), transport, sleeper, Secret("k"), options);
    auto reply = client.complete(request);
    if (reply &&
        (!is_valid_utf8(reply->text) || (reply->reasoning && !is_valid_utf8(*reply->reasoning))))
      std::abort();
    if (!reply && reply.error().message.empty())
      std::abort();
  }
  return 0;
}
