// Field access for every reader of JSON documents: FlashInfer-Trace files, the model registry,
// run plans, `ptxbench eval --json` results.
//
// Problem: every object is read field by field, and any field can be missing, of the wrong
// type or out of range; each failure must name the origin, the JSON path and what is wrong
// ("defs/gemm.json: $.workloads[3].axes.M: expected an integer, got string"), and the readers
// should still read as one line per field.
//
// Approach: a JsonReader carries the origin and the first error. Its accessors take the
// parent object, the parent's path and a key; on failure they record the error and return a
// neutral value (or nullopt), and later calls keep the first error. A reader function reads
// every field, then returns `reader.finish(value)`, which yields the value or the first error.
// Checks that depend on earlier fields run only while ok(), so a cascade never replaces the
// real cause. Nothing here throws on any input.
//
// Three kinds of member: required (absent is "missing required key"), optional (absent gives
// nullopt; present, it must have the right type and range) and nullable (absent or null give
// nullopt or an empty list). Unknown keys are looked at only when a reader calls allow_only.
//
// Invariants: a recorded error is never overwritten; the JSON path is "$", ".key" for
// identifier-like keys (letters, digits and '_', not starting with a digit), "[\"key\"]"
// otherwise, "[i]" for array elements.
#pragma once

#include "util/error.hpp"
#include "util/json.hpp"
#include "util/json_number.hpp"

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ptxbench::util {

std::string key_path(const std::string& parent, std::string_view key);
std::string index_path(const std::string& parent, std::size_t index);

enum class Emptiness : std::uint8_t { allowed = 1, rejected = 2 };

// The closed interval an optional number must lie in.
struct NumberRange {
  double min = 0.0;
  double max = 0.0;
};

class JsonReader {
public:
  explicit JsonReader(std::string origin) : m_origin(std::move(origin)) {}

  bool ok() const { return !m_error.has_value(); }
  const std::string& origin() const { return m_origin; }
  // Records "origin: path: what" unless an error is already recorded.
  void fail(const std::string& path, const std::string& what);

  template <typename T> Expected<T> finish(T value) const {
    if (m_error)
      return *m_error;
    return value;
  }

  // Any key of `object` outside `keys` is an error ("unknown key"), so that typos do not pass;
  // "notes", free text, is allowed everywhere.
  void allow_only(const Json& object, const std::string& path,
                  std::span<const std::string_view> keys);

  // False (and an error) unless `value` is an object.
  bool expect_object(const Json& value, const std::string& path);
  // The member, or nullptr after recording "missing required key".
  const Json* required(const Json& object, const std::string& path, std::string_view key);
  // The member, or nullptr; never an error.
  static const Json* optional(const Json& object, std::string_view key);

  // Values at `path`; the wrong type is an error naming the type found.
  std::string string_at(const Json& value, const std::string& path, Emptiness);
  double number_at(const Json& value, const std::string& path);
  // A number or a non-finite spelling (util/json_number.hpp).
  double number_or_nonfinite_at(const Json& value, const std::string& path, NonFiniteSpelling);
  // An integer, or a float with an integral value.
  std::int64_t integer_at(const Json& value, const std::string& path);
  bool boolean_at(const Json& value, const std::string& path);

  // Required members.
  std::string string(const Json& object, const std::string& path, std::string_view key, Emptiness);
  // A required member that must be an object.
  const Json* object_member(const Json& object, const std::string& path, std::string_view key);

  // Optional members.
  std::optional<std::string> optional_string(const Json& object, const std::string& path,
                                             std::string_view key, Emptiness);
  std::optional<double> optional_number(const Json& object, const std::string& path,
                                        std::string_view key, NumberRange);
  std::optional<std::int64_t> optional_integer(const Json& object, const std::string& path,
                                               std::string_view key, std::int64_t min);
  std::optional<bool> optional_boolean(const Json& object, const std::string& path,
                                       std::string_view key);
  // nullptr when absent or not an object (an error then).
  const Json* optional_object(const Json& object, const std::string& path, std::string_view key);
  // A single non-empty string (a one-element list) or a non-empty array of non-empty strings.
  std::optional<std::vector<std::string>>
  optional_strings(const Json& object, const std::string& path, std::string_view key);

  // Nullable members: absent or null read as nullopt / an empty list.
  std::optional<std::string> nullable_string(const Json& object, const std::string& path,
                                             std::string_view key);
  std::vector<std::string> string_list(const Json& object, const std::string& path,
                                       std::string_view key, Emptiness);

private:
  std::optional<std::int64_t> checked_integer(const Json& value, const std::string& path,
                                              const std::string& expected);

  std::string m_origin;
  std::optional<Error> m_error;
};

} // namespace ptxbench::util
