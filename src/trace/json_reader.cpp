#include "trace/json_reader.hpp"

#include <cctype>
#include <cmath>
#include <cstdint>
#include <limits>

namespace ptxbench::trace::detail {
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
  m_error = util::make_error(util::ErrorKind::invalid_input, m_origin + ": " + path + ": " + what);
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

std::string JsonReader::string(const Json& object, const std::string& path, std::string_view key,
                               Emptiness empty) {
  const Json* member = required(object, path, key);
  return member ? string_at(*member, key_path(path, key), empty) : std::string();
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

double JsonReader::number_at(const Json& value, const std::string& path) {
  if (value.is_number())
    return value.get<double>();
  fail(path, "expected a number, got " + type_name(value));
  return 0.0;
}

std::int64_t JsonReader::integer_at(const Json& value, const std::string& path) {
  if (value.is_number_integer() &&
      !(value.is_number_unsigned() &&
        value.get<std::uint64_t>() > std::uint64_t{std::numeric_limits<std::int64_t>::max()}))
    return value.get<std::int64_t>();
  if (value.is_number_float()) {
    double x = value.get<double>();
    if (std::trunc(x) == x && std::fabs(x) < 9.0e18)
      return static_cast<std::int64_t>(x);
  }
  fail(path, "expected an integer, got " + (value.is_number() ? value.dump() : type_name(value)));
  return 0;
}

bool JsonReader::boolean(const Json& object, const std::string& path, std::string_view key,
                         bool fallback) {
  const Json* member = optional(object, key);
  if (!member)
    return fallback;
  if (member->is_boolean())
    return member->get<bool>();
  fail(key_path(path, key), "expected a boolean, got " + type_name(*member));
  return fallback;
}

const Json* JsonReader::object_member(const Json& object, const std::string& path,
                                      std::string_view key) {
  const Json* member = required(object, path, key);
  if (!member || !expect_object(*member, key_path(path, key)))
    return nullptr;
  return member;
}

} // namespace ptxbench::trace::detail
