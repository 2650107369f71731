#include "model/secret.hpp"

namespace ptxbench::model {
namespace {

constexpr std::string_view kRedacted = "REDACTED";
// Shorter "secrets" (a local server's "dummy") would blank out ordinary words.
constexpr std::size_t kMinScrubLength = 8;

std::string redact_query(std::string_view query) {
  std::string out;
  std::size_t start = 0;
  while (start <= query.size()) {
    std::size_t end = query.find('&', start);
    if (end == std::string_view::npos)
      end = query.size();
    std::string_view pair = query.substr(start, end - start);
    if (!out.empty())
      out += '&';
    out += pair.substr(0, pair.find('='));
    if (pair.find('=') != std::string_view::npos)
      out += "=" + std::string(kRedacted);
    start = end + 1;
  }
  return out;
}

} // namespace

std::string redact_url(std::string_view url) {
  std::string_view rest = url;
  std::string out;
  if (auto scheme = rest.find("://"); scheme != std::string_view::npos) {
    out = std::string(rest.substr(0, scheme + 3));
    rest.remove_prefix(scheme + 3);
  }
  std::size_t authority_end = rest.find_first_of("/?#");
  std::string_view authority = rest.substr(0, authority_end);
  if (auto at = authority.rfind('@'); at != std::string_view::npos)
    rest.remove_prefix(at + 1);
  std::size_t query = rest.find('?');
  if (query == std::string_view::npos)
    return out + std::string(rest);
  std::size_t fragment = rest.find('#', query);
  std::string_view query_text = rest.substr(query + 1, fragment - query - 1);
  out += std::string(rest.substr(0, query + 1)) + redact_query(query_text);
  return out;
}

std::string scrub(std::string_view text, const Secret& secret) {
  const std::string& needle = secret.reveal();
  std::string out(text);
  if (needle.size() < kMinScrubLength)
    return out;
  for (std::size_t at = out.find(needle); at != std::string::npos;
       at = out.find(needle, at + kRedacted.size()))
    out.replace(at, needle.size(), kRedacted);
  return out;
}

} // namespace ptxbench::model
