// HttpTransport over libcurl's easy interface: one handle per request (thread-safe without
// sharing), no signals, no redirects, nothing verbose. Error texts name the redacted URL and
// curl's error, never a header.
#include "model/http_transport.hpp"
#include "model/secret.hpp"
#include "util/sigpipe.hpp"

#include <cctype>
#include <curl/curl.h>
#include <memory>
#include <mutex>

namespace ptxbench::model {

std::optional<std::string> HttpResponse::header(std::string_view name) const {
  for (const auto& [key, value] : headers)
    if (key == name)
      return value;
  return std::nullopt;
}

namespace {

struct EasyDeleter {
  void operator()(CURL* handle) const { curl_easy_cleanup(handle); }
};
struct ListDeleter {
  void operator()(curl_slist* list) const { curl_slist_free_all(list); }
};
using EasyHandle = std::unique_ptr<CURL, EasyDeleter>;
using HeaderList = std::unique_ptr<curl_slist, ListDeleter>;

struct Sink {
  HttpResponse response;
  std::size_t max_bytes = 0;
  bool overflow = false;
};

std::size_t on_body(char* data, std::size_t size, std::size_t count, void* user) {
  auto* sink = static_cast<Sink*>(user);
  std::size_t bytes = size * count;
  if (sink->response.body.size() + bytes > sink->max_bytes) {
    sink->overflow = true;
    return 0; // makes curl stop with CURLE_WRITE_ERROR
  }
  sink->response.body.append(data, bytes);
  return bytes;
}

std::string trim_copy(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())))
    s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())))
    s.remove_suffix(1);
  return std::string(s);
}

std::size_t on_header(char* data, std::size_t size, std::size_t count, void* user) {
  auto* sink = static_cast<Sink*>(user);
  std::string_view line(data, size * count);
  if (line.starts_with("HTTP/"))
    sink->response.headers.clear(); // a new response (after 100)
  auto colon = line.find(':');
  if (colon != std::string_view::npos) {
    std::string name(line.substr(0, colon));
    for (auto& c : name)
      c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    sink->response.headers.emplace_back(std::move(name), trim_copy(line.substr(colon + 1)));
  }
  return size * count;
}

HeaderList build_headers(const HttpRequest& request) {
  curl_slist* list = nullptr;
  for (const auto& header : request.headers)
    list = curl_slist_append(list, (header.name + ": " + header.value).c_str());
  list = curl_slist_append(list, "Expect:"); // no 100-continue round trip for large bodies
  return HeaderList(list);
}

void set_options(CURL* curl, const HttpRequest& request, curl_slist* headers, Sink& sink,
                 char* error_buffer) {
  curl_easy_setopt(curl, CURLOPT_URL, request.url.c_str());
  if (request.method == HttpMethod::get) {
    curl_easy_setopt(curl, CURLOPT_HTTPGET, 1L);
  } else {
    curl_easy_setopt(curl, CURLOPT_POST, 1L);
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, request.body.data());
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE,
                     static_cast<curl_off_t>(request.body.size()));
  }
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &sink);
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, &sink);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(request.timeout.count()));
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS,
                   static_cast<long>(request.connect_timeout.count()));
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(curl, CURLOPT_VERBOSE, 0L);
  curl_easy_setopt(curl, CURLOPT_ACCEPT_ENCODING, ""); // any encoding curl can decode
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, error_buffer);
}

util::Error classify(CURLcode code, const Sink& sink, const HttpRequest& request,
                     const char* detail) {
  std::string where =
      (request.method == HttpMethod::get ? "GET " : "POST ") + redact_url(request.url);
  std::string what = detail[0] != '\0' ? detail : curl_easy_strerror(code);
  if (sink.overflow)
    return util::make_error(util::ErrorKind::bad_response, where + ": response larger than " +
                                                               std::to_string(sink.max_bytes) +
                                                               " bytes");
  if (code == CURLE_OPERATION_TIMEDOUT)
    return util::make_error(util::ErrorKind::timeout, where + ": " + what);
  return util::make_error(util::ErrorKind::transport, where + ": " + what);
}

class CurlTransport final : public HttpTransport {
public:
  CurlTransport() {
    static std::once_flag once;
    std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
  }

  util::Expected<HttpResponse> send(const HttpRequest& request) override {
    EasyHandle curl(curl_easy_init());
    if (!curl)
      throw util::Fatal("curl_easy_init failed");
    HeaderList headers = build_headers(request);
    Sink sink;
    sink.max_bytes = request.max_response_bytes;
    char error_buffer[CURL_ERROR_SIZE] = {};
    set_options(curl.get(), request, headers.get(), sink, error_buffer);
    auto start = std::chrono::steady_clock::now();
    CURLcode code = [&] {
      const util::SigpipeBlock no_sigpipe; // a peer gone mid-request is an error value
      return curl_easy_perform(curl.get());
    }();
    sink.response.elapsed = std::chrono::steady_clock::now() - start;
    if (code != CURLE_OK)
      return classify(code, sink, request, error_buffer);
    long status = 0;
    curl_easy_getinfo(curl.get(), CURLINFO_RESPONSE_CODE, &status);
    sink.response.status = static_cast<int>(status);
    return std::move(sink.response);
  }
};

} // namespace

std::unique_ptr<HttpTransport> make_curl_transport() {
  return std::make_unique<CurlTransport>();
}

} // namespace ptxbench::model
