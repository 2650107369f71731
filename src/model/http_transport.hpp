// One HTTP exchange, behind an interface: the model clients and the evaluation-service client
// build requests, a transport sends them. The real implementation is libcurl
// (curl_transport.cpp).
#pragma once

#include "util/error.hpp"

#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace ptxbench::model {

enum class Sensitivity : std::uint8_t { plain = 1, secret = 2 };

struct HttpHeader {
  std::string name;
  std::string value;
  Sensitivity sensitivity = Sensitivity::plain; // secret values are never logged or echoed
};

enum class HttpMethod : std::uint8_t { post = 1, get = 2 };

struct HttpRequest {
  HttpMethod method = HttpMethod::post; // a GET sends no body
  std::string url; // may carry no secret: errors quote it (redacted all the same)
  std::vector<HttpHeader> headers;
  std::string body;
  std::chrono::milliseconds timeout{std::chrono::minutes(30)}; // whole exchange
  std::chrono::milliseconds connect_timeout{std::chrono::seconds(30)};
  std::size_t max_response_bytes = std::size_t{64} << 20;
};

struct HttpResponse {
  int status = 0;
  std::vector<std::pair<std::string, std::string>> headers; // names lower-cased
  std::string body;
  std::chrono::duration<double, std::milli> elapsed{0};

  // The first header named `name` (lower-case).
  std::optional<std::string> header(std::string_view name) const;
};

class HttpTransport {
public:
  virtual ~HttpTransport() = default;
  // A response of any status is a value; errors are the exchange failing: timeout (deadline
  // passed), transport (DNS, refused, reset, TLS) or bad_response (the body exceeded
  // max_response_bytes). Safe to call from several threads at once.
  virtual util::Expected<HttpResponse> send(const HttpRequest& request) = 0;
};

std::unique_ptr<HttpTransport> make_curl_transport();

} // namespace ptxbench::model
