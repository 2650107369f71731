// Field access for the schema readers (internal to trace/).
//
// Problem: every schema object is read field by field, and any field can be missing, of the
// wrong type or out of range; each failure must name the origin file, the JSON path and what
// is wrong, and the readers should still read as one line per field.
//
// Approach: a JsonReader carries the origin and the first error. Its accessors take the
// parent object, the parent's path and a key; on failure they record the error and return a
// neutral value, and later calls keep the first error. A reader function reads every field,
// then returns `reader.finish(value)`, which yields the value or the first error. Checks that
// depend on earlier fields run only while ok(), so a cascade never replaces the real cause.
//
// Invariants: a recorded error is never overwritten; the JSON path is "$", ".key" for
// identifier-like keys, "[\"key\"]" otherwise, "[i]" for array elements; unknown keys are
// never looked at.
#pragma once

#include "trace/schema.hpp"
#include "util/error.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ptxbench::trace::detail {

std::string key_path(const std::string& parent, std::string_view key);
std::string index_path(const std::string& parent, std::size_t index);

enum class Emptiness : std::uint8_t { allowed = 1, rejected = 2 };

class JsonReader {
public:
  explicit JsonReader(std::string origin) : m_origin(std::move(origin)) {}

  bool ok() const { return !m_error.has_value(); }
  const std::string& origin() const { return m_origin; }
  void fail(const std::string& path, const std::string& what);

  template <typename T> util::Expected<T> finish(T value) const {
    if (m_error)
      return *m_error;
    return value;
  }

  // False (and an error) unless `value` is an object.
  bool expect_object(const Json& value, const std::string& path);
  // The member, or nullptr after recording "missing required key".
  const Json* required(const Json& object, const std::string& path, std::string_view key);
  // The member, or nullptr; never an error.
  static const Json* optional(const Json& object, std::string_view key);

  std::string string_at(const Json& value, const std::string& path, Emptiness);
  std::string string(const Json& object, const std::string& path, std::string_view key, Emptiness);
  // Missing or null gives nullopt.
  std::optional<std::string> nullable_string(const Json& object, const std::string& path,
                                             std::string_view key);
  std::vector<std::string> string_list(const Json& object, const std::string& path,
                                       std::string_view key, Emptiness);
  double number_at(const Json& value, const std::string& path);
  std::int64_t integer_at(const Json& value, const std::string& path);
  // `fallback` when the key is missing.
  bool boolean(const Json& object, const std::string& path, std::string_view key, bool fallback);
  // A required member that must be an object.
  const Json* object_member(const Json& object, const std::string& path, std::string_view key);

private:
  std::string m_origin;
  std::optional<util::Error> m_error;
};

} // namespace ptxbench::trace::detail
