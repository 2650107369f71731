// Checked reading of JSON configuration objects (the model registry, run plans): every error
// names the file and the JSON path, and unknown keys are errors so that typos do not pass.
#pragma once

#include "model/chat.hpp"
#include "util/error.hpp"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <fmt/core.h>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ptxbench::model {

// `parent` extended by `key`: ".key" for identifiers, "[\"key\"]" otherwise.
inline std::string key_path(const std::string& parent, std::string_view key) {
  bool identifier = !key.empty() && std::all_of(key.begin(), key.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
  if (identifier)
    return parent + "." + std::string(key);
  return parent + "[" + Json(std::string(key)).dump() + "]";
}

// Reads fields of one object, keeping the first error (origin: JSON path: what).
class Fields {
public:
  Fields(const Json& object, std::string path, std::string origin)
      : m_object(object), m_path(std::move(path)), m_origin(std::move(origin)) {}

  void fail(const std::string& path, const std::string& what) {
    if (!m_error)
      m_error =
          util::make_error(util::ErrorKind::invalid_input, m_origin + ": " + path + ": " + what);
  }
  const std::optional<util::Error>& error() const { return m_error; }
  const std::string& path() const { return m_path; }

  // Any key outside `keys` (and "notes", free text anywhere) is an error: typos do not pass.
  void allow_only(std::span<const std::string_view> keys) {
    for (const auto& [key, value] : m_object.items())
      if (key != "notes" && std::find(keys.begin(), keys.end(), key) == keys.end())
        fail(key_path(m_path, key), "unknown key");
  }
  // A non-empty array of non-empty strings; a single string is taken as a one-element array.
  std::optional<std::vector<std::string>> strings(std::string_view key) {
    const Json* value = find(key);
    if (value == nullptr)
      return std::nullopt;
    if (value->is_string() && !value->get<std::string>().empty())
      return std::vector<std::string>{value->get<std::string>()};
    std::vector<std::string> out;
    if (value->is_array())
      for (const auto& item : *value)
        if (item.is_string() && !item.get<std::string>().empty())
          out.push_back(item.get<std::string>());
    if (!value->is_array() || out.empty() || out.size() != value->size()) {
      fail(key_path(m_path, key), "expected a non-empty list of non-empty strings");
      return std::nullopt;
    }
    return out;
  }
  std::optional<std::string> text(std::string_view key) {
    const Json* value = find(key);
    if (value == nullptr)
      return std::nullopt;
    if (!value->is_string() || value->get<std::string>().empty()) {
      fail(key_path(m_path, key), "expected a non-empty string");
      return std::nullopt;
    }
    return value->get<std::string>();
  }
  std::optional<double> number(std::string_view key, double min, double max) {
    const Json* value = find(key);
    if (value == nullptr)
      return std::nullopt;
    if (!value->is_number() || value->get<double>() < min || value->get<double>() > max) {
      fail(key_path(m_path, key), "expected a number in [" + show(min) + ", " + show(max) + "]");
      return std::nullopt;
    }
    return value->get<double>();
  }
  std::optional<std::int64_t> integer(std::string_view key, std::int64_t min) {
    const Json* value = find(key);
    if (value == nullptr)
      return std::nullopt;
    if (!value->is_number_integer() || value->get<std::int64_t>() < min) {
      fail(key_path(m_path, key), "expected an integer >= " + std::to_string(min));
      return std::nullopt;
    }
    return value->get<std::int64_t>();
  }
  std::optional<bool> boolean(std::string_view key) {
    const Json* value = find(key);
    if (value == nullptr)
      return std::nullopt;
    if (!value->is_boolean())
      fail(key_path(m_path, key), "expected true or false");
    return value->is_boolean() ? std::optional<bool>(value->get<bool>()) : std::nullopt;
  }
  // A member that must be an object; nullptr when absent or wrong.
  const Json* object(std::string_view key) {
    const Json* value = find(key);
    if (value != nullptr && !value->is_object()) {
      fail(key_path(m_path, key), "expected an object");
      return nullptr;
    }
    return value;
  }

private:
  static std::string show(double v) { return fmt::format("{:g}", v); }
  const Json* find(std::string_view key) const {
    auto it = m_object.find(std::string(key));
    return it == m_object.end() ? nullptr : &*it;
  }
  const Json& m_object;
  std::string m_path;
  std::string m_origin;
  std::optional<util::Error> m_error;
};

} // namespace ptxbench::model
