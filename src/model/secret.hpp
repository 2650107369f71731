// Secrets (API keys) and the redaction that keeps them out of logs and error messages.
#pragma once

#include <string>
#include <string_view>

namespace ptxbench::model {

// An API key. It has no stream operator or implicit conversion: the only way to the bytes is
// reveal(), used where a request header is built.
class Secret {
public:
  Secret() = default;
  explicit Secret(std::string value) : m_value(std::move(value)) {}
  const std::string& reveal() const { return m_value; }
  bool empty() const { return m_value.empty(); }

private:
  std::string m_value;
};

// `url` with user-info and the values of query parameters dropped:
// https://u:p@h/x?key=abc&alt=json -> https://h/x?key=REDACTED&alt=REDACTED
std::string redact_url(std::string_view url);

// `text` with every occurrence of the secret replaced (no-op for an empty or very short secret).
std::string scrub(std::string_view text, const Secret& secret);

} // namespace ptxbench::model
