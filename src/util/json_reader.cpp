#include "util/json_reader.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <fmt/core.h>
#include <limits>

namespace ptxbench::util {
namespace {

bool is_identifier(std::string_view key) {
  if (key.empty() || std::isdigit(static_cast<unsigned char>(key.front())))
    return false;
  for (char c : key)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_')
      return false;
  return true;
}

std::string type_name(const Json& value) {
  if (value.is_number_integer())
    return "integer";
  if (value.is_number_float())
    return "number";
  return value.type_name();
}

// What was found, for "expected …, got …": the value itself for a number, else its type.
std::string found(const Json& value) {
  return value.is_number() ? value.dump() : type_name(value);
}

std::optional<std::int64_t> as_integer(const Json& value) {
  if (value.is_number_integer() &&
      !(value.is_number_unsigned() &&
        value.get<std::uint64_t>() > std::uint64_t{std::numeric_limits<std::int64_t>::max()}))
    return value.get<std::int64_t>();
  if (value.is_number_float()) {
    double x = value.get<double>();
    if (std::trunc(x) == x && std::fabs(x) < 9.0e18)
      return static_cast<std::int64_t>(x);
  }
  return std::nullopt;
}

} // namespace

std::string key_path(const std::string& parent, std::string_view key) {
  if (is_identifier(key))
    return parent + "." + std::string(key);
  return parent + "[" + Json(std::string(key)).dump() + "]";
}

std::string index_path(const std::string& parent, std::size_t index) {
  return parent + "[" + std::to_string(index) + "]";
}

void JsonReader::fail(const std::string& path, const std::string& what) {
  if (m_error)
    return;
  m_error = make_error(ErrorKind::invalid_input, m_origin + ": " + path + ": " + what);
}

void JsonReader::allow_only(const Json& object, const std::string& path,
                            std::span<const std::string_view> keys) {
  if (!object.is_object())
    return;
  for (const auto& [key, value] : object.items())
    if (key != "notes" && std::find(keys.begin(), keys.end(), key) == keys.end())
      fail(key_path(path, key), "unknown key");
}

bool JsonReader::expect_object(const Json& value, const std::string& path) {
  if (value.is_object())
    return true;
  fail(path, "expected an object, got " + type_name(value));
  return false;
}

const Json* JsonReader::optional(const Json& object, std::string_view key) {
  if (!object.is_object())
    return nullptr;
  auto it = object.find(key);
  return it == object.end() ? nullptr : &*it;
}

const Json* JsonReader::required(const Json& object, const std::string& path,
                                 std::string_view key) {
  const Json* member = optional(object, key);
  if (!member)
    fail(path, "missing required key \"" + std::string(key) + "\"");
  return member;
}

std::string JsonReader::string_at(const Json& value, const std::string& path, Emptiness empty) {
  if (!value.is_string()) {
    fail(path, "expected a string, got " + type_name(value));
    return {};
  }
  const auto& text = value.get_ref<const std::string&>();
  if (text.empty() && empty == Emptiness::rejected)
    fail(path, "must not be empty");
  return text;
}

double JsonReader::number_at(const Json& value, const std::string& path) {
  if (value.is_number())
    return value.get<double>();
  fail(path, "expected a number, got " + type_name(value));
  return 0.0;
}

double JsonReader::number_or_nonfinite_at(const Json& value, const std::string& path,
                                          NonFiniteSpelling spelling) {
  if (auto number = number_from_json(value, spelling))
    return *number;
  fail(path, "expected a number, NaN or Infinity, got " +
                 (value.is_string() ? value.dump() : type_name(value)));
  return 0.0;
}

std::optional<std::int64_t> JsonReader::checked_integer(const Json& value, const std::string& path,
                                                        const std::string& expected) {
  auto integer = as_integer(value);
  if (!integer)
    fail(path, "expected " + expected + ", got " + found(value));
  return integer;
}

std::int64_t JsonReader::integer_at(const Json& value, const std::string& path) {
  return checked_integer(value, path, "an integer").value_or(0);
}

bool JsonReader::boolean_at(const Json& value, const std::string& path) {
  if (value.is_boolean())
    return value.get<bool>();
  fail(path, "expected a boolean, got " + type_name(value));
  return false;
}

std::string JsonReader::string(const Json& object, const std::string& path, std::string_view key,
                               Emptiness empty) {
  const Json* member = required(object, path, key);
  return member ? string_at(*member, key_path(path, key), empty) : std::string();
}

const Json* JsonReader::object_member(const Json& object, const std::string& path,
                                      std::string_view key) {
  const Json* member = required(object, path, key);
  if (!member || !expect_object(*member, key_path(path, key)))
    return nullptr;
  return member;
}

std::optional<std::string> JsonReader::optional_string(const Json& object, const std::string& path,
                                                       std::string_view key, Emptiness empty) {
  const Json* member = optional(object, key);
  if (!member)
    return std::nullopt;
  std::string text = string_at(*member, key_path(path, key), empty);
  return member->is_string() && !(text.empty() && empty == Emptiness::rejected)
             ? std::optional<std::string>(std::move(text))
             : std::nullopt;
}

std::optional<double> JsonReader::optional_number(const Json& object, const std::string& path,
                                                  std::string_view key, NumberRange range) {
  const Json* member = optional(object, key);
  if (!member)
    return std::nullopt;
  if (member->is_number() && member->get<double>() >= range.min &&
      member->get<double>() <= range.max)
    return member->get<double>();
  fail(key_path(path, key), fmt::format("expected a number in [{:g}, {:g}], got {}", range.min,
                                        range.max, found(*member)));
  return std::nullopt;
}

std::optional<std::int64_t> JsonReader::optional_integer(const Json& object,
                                                         const std::string& path,
                                                         std::string_view key, std::int64_t min) {
  const Json* member = optional(object, key);
  if (!member)
    return std::nullopt;
  std::string expected = "an integer >= " + std::to_string(min);
  auto integer = checked_integer(*member, key_path(path, key), expected);
  if (integer && *integer < min) {
    fail(key_path(path, key), "expected " + expected + ", got " + found(*member));
    return std::nullopt;
  }
  return integer;
}

std::optional<bool> JsonReader::optional_boolean(const Json& object, const std::string& path,
                                                 std::string_view key) {
  const Json* member = optional(object, key);
  if (!member)
    return std::nullopt;
  bool value = boolean_at(*member, key_path(path, key));
  return member->is_boolean() ? std::optional<bool>(value) : std::nullopt;
}

const Json* JsonReader::optional_object(const Json& object, const std::string& path,
                                        std::string_view key) {
  const Json* member = optional(object, key);
  if (!member || !expect_object(*member, key_path(path, key)))
    return nullptr;
  return member;
}

std::optional<std::vector<std::string>>
JsonReader::optional_strings(const Json& object, const std::string& path, std::string_view key) {
  const Json* member = optional(object, key);
  if (!member)
    return std::nullopt;
  std::string list_path = key_path(path, key);
  if (member->is_string()) {
    std::string text = string_at(*member, list_path, Emptiness::rejected);
    return text.empty() ? std::nullopt : std::optional(std::vector<std::string>{text});
  }
  if (!member->is_array() || member->empty()) {
    fail(list_path, "expected a non-empty list of non-empty strings, got " +
                        (member->is_array() ? std::string("[]") : type_name(*member)));
    return std::nullopt;
  }
  std::vector<std::string> items;
  for (std::size_t i = 0; i < member->size(); ++i)
    items.push_back(string_at((*member)[i], index_path(list_path, i), Emptiness::rejected));
  return items;
}

std::optional<std::string> JsonReader::nullable_string(const Json& object, const std::string& path,
                                                       std::string_view key) {
  const Json* member = optional(object, key);
  if (!member || member->is_null())
    return std::nullopt;
  return string_at(*member, key_path(path, key), Emptiness::allowed);
}

std::vector<std::string> JsonReader::string_list(const Json& object, const std::string& path,
                                                 std::string_view key, Emptiness empty) {
  std::vector<std::string> items;
  const Json* member = optional(object, key);
  if (!member || member->is_null())
    return items;
  std::string list_path = key_path(path, key);
  if (!member->is_array()) {
    fail(list_path, "expected an array, got " + type_name(*member));
    return items;
  }
  for (std::size_t i = 0; i < member->size(); ++i)
    items.push_back(string_at((*member)[i], index_path(list_path, i), empty));
  return items;
}

} // namespace ptxbench::util
