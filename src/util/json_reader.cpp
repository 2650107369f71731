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

std::optional<std::uint64_t> as_unsigned(const Json& value) {
  if (value.is_number_unsigned())
    return value.get<std::uint64_t>();
  if (value.is_number_integer())
    return value.get<std::int64_t>() >= 0
               ? std::optional<std::uint64_t>(static_cast<std::uint64_t>(value.get<std::int64_t>()))
               : std::nullopt;
  if (value.is_number_float()) {
    double x = value.get<double>();
    if (std::trunc(x) == x && x >= 0.0 && x < 1.8e19)
      return static_cast<std::uint64_t>(x);
  }
  return std::nullopt;
}

// "an integer", "an integer >= min" or "an integer in [min, max]".
std::string expected_integer(IntegerRange range) {
  constexpr IntegerRange kAll{};
  if (range.max == kAll.max)
    return range.min == kAll.min ? "an integer" : fmt::format("an integer >= {}", range.min);
  return fmt::format("an integer in [{}, {}]", range.min, range.max);
}

std::string quoted_list(std::span<const std::string_view> names) {
  std::string out;
  for (std::string_view name : names)
    out += (out.empty() ? "" : ", ") + Json(std::string(name)).dump();
  return out;
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
  const std::string prefix = m_origin.empty() ? std::string() : m_origin + ": ";
  m_error = make_error(m_kind, prefix + path + ": " + what);
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

bool JsonReader::expect_array(const Json& value, const std::string& path) {
  if (value.is_array())
    return true;
  fail(path, "expected an array, got " + type_name(value));
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

std::int64_t JsonReader::integer_at(const Json& value, const std::string& path,
                                    IntegerRange range) {
  const std::string expected = expected_integer(range);
  auto integer = checked_integer(value, path, expected);
  if (integer && (*integer < range.min || *integer > range.max)) {
    fail(path, "expected " + expected + ", got " + found(value));
    return 0;
  }
  return integer.value_or(0);
}

std::uint64_t JsonReader::unsigned_at(const Json& value, const std::string& path) {
  auto integer = as_unsigned(value);
  if (!integer)
    fail(path, "expected a non-negative 64-bit integer, got " + found(value));
  return integer.value_or(0);
}

bool JsonReader::boolean_at(const Json& value, const std::string& path) {
  if (value.is_boolean())
    return value.get<bool>();
  fail(path, "expected a boolean, got " + type_name(value));
  return false;
}

std::vector<std::string> JsonReader::strings_at(const Json& value, const std::string& path,
                                                Emptiness empty) {
  std::vector<std::string> items;
  if (!expect_array(value, path))
    return items;
  for (std::size_t i = 0; i < value.size(); ++i)
    items.push_back(string_at(value[i], index_path(path, i), empty));
  return items;
}

std::optional<std::size_t> JsonReader::choice_at(const Json& value, const std::string& path,
                                                 std::span<const std::string_view> names) {
  if (value.is_string()) {
    const auto& text = value.get_ref<const std::string&>();
    for (std::size_t i = 0; i < names.size(); ++i)
      if (names[i] == text)
        return i;
  }
  fail(path, "expected one of " + quoted_list(names) + ", got " +
                 (value.is_string() ? value.dump() : type_name(value)));
  return std::nullopt;
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

std::vector<std::string> JsonReader::strings(const Json& object, const std::string& path,
                                             std::string_view key, Emptiness empty) {
  const Json* member = required(object, path, key);
  return member ? strings_at(*member, key_path(path, key), empty) : std::vector<std::string>();
}

std::int64_t JsonReader::integer(const Json& object, const std::string& path, std::string_view key,
                                 IntegerRange range) {
  const Json* member = required(object, path, key);
  return member ? integer_at(*member, key_path(path, key), range) : 0;
}

std::uint64_t JsonReader::unsigned_integer(const Json& object, const std::string& path,
                                           std::string_view key) {
  const Json* member = required(object, path, key);
  return member ? unsigned_at(*member, key_path(path, key)) : 0;
}

bool JsonReader::boolean(const Json& object, const std::string& path, std::string_view key) {
  const Json* member = required(object, path, key);
  return member ? boolean_at(*member, key_path(path, key)) : false;
}

const Json* JsonReader::array_member(const Json& object, const std::string& path,
                                     std::string_view key) {
  const Json* member = required(object, path, key);
  if (!member || !expect_array(*member, key_path(path, key)))
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

std::optional<std::int64_t> JsonReader::optional_integer(const Json& object,
                                                         const std::string& path,
                                                         std::string_view key, IntegerRange range) {
  const Json* member = optional(object, key);
  if (!member)
    return std::nullopt;
  std::int64_t value = integer_at(*member, key_path(path, key), range);
  const auto integer = as_integer(*member);
  return integer && *integer >= range.min && *integer <= range.max
             ? std::optional<std::int64_t>(value)
             : std::nullopt;
}

std::optional<std::uint64_t>
JsonReader::optional_unsigned(const Json& object, const std::string& path, std::string_view key) {
  const Json* member = optional(object, key);
  if (!member)
    return std::nullopt;
  std::uint64_t value = unsigned_at(*member, key_path(path, key));
  return as_unsigned(*member) ? std::optional<std::uint64_t>(value) : std::nullopt;
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

const Json* JsonReader::optional_array(const Json& object, const std::string& path,
                                       std::string_view key) {
  const Json* member = optional(object, key);
  if (!member || !expect_array(*member, key_path(path, key)))
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

std::optional<double> JsonReader::nullable_number(const Json& object, const std::string& path,
                                                  std::string_view key) {
  const Json* member = optional(object, key);
  if (!member || member->is_null())
    return std::nullopt;
  if (member->is_number())
    return member->get<double>();
  fail(key_path(path, key), "expected a number or null, got " + type_name(*member));
  return std::nullopt;
}

std::optional<bool> JsonReader::nullable_boolean(const Json& object, const std::string& path,
                                                 std::string_view key) {
  const Json* member = optional(object, key);
  if (!member || member->is_null())
    return std::nullopt;
  if (member->is_boolean())
    return member->get<bool>();
  fail(key_path(path, key), "expected a boolean or null, got " + type_name(*member));
  return std::nullopt;
}

std::vector<std::string> JsonReader::string_list(const Json& object, const std::string& path,
                                                 std::string_view key, Emptiness empty) {
  const Json* member = optional(object, key);
  if (!member || member->is_null())
    return {};
  return strings_at(*member, key_path(path, key), empty);
}

} // namespace ptxbench::util
