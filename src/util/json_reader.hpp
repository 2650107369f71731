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
// Enumerations are read by name for enums valued 1..N whose to_string names each value, so
// the names a reader accepts are the ones its writer spells.
//
// Invariants: a recorded error is never overwritten; the JSON path is "$", ".key" for
// identifier-like keys (letters, digits and '_', not starting with a digit), "[\"key\"]"
// otherwise, "[i]" for array elements. An empty origin leaves the message "path: what", for
// readers whose caller names the origin (a JSON Lines file and line).
#pragma once

#include "util/error.hpp"
#include "util/json.hpp"
#include "util/json_number.hpp"

#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
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

// The closed interval an integer must lie in; of<T>() is the whole range of T.
struct IntegerRange {
  std::int64_t min = std::numeric_limits<std::int64_t>::min();
  std::int64_t max = std::numeric_limits<std::int64_t>::max();

  template <typename T> static constexpr IntegerRange of() {
    return {static_cast<std::int64_t>(std::numeric_limits<T>::min()),
            static_cast<std::int64_t>(std::numeric_limits<T>::max())};
  }
};

class JsonReader {
public:
  // Errors are invalid_input unless `kind` says otherwise (bad_response for a peer's reply).
  explicit JsonReader(std::string origin, ErrorKind kind = ErrorKind::invalid_input)
      : m_origin(std::move(origin)), m_kind(kind) {}

  bool ok() const { return !m_error.has_value(); }
  const std::string& origin() const { return m_origin; }
  // Records "origin: path: what" unless an error is already recorded.
  void fail(const std::string& path, const std::string& what);

  template <typename T> Expected<T> finish(T value) const {
    if (m_error)
      return *m_error;
    return value;
  }

  // A document whose root must be an object: `fill(reader, root, value)` reads its fields once
  // it is one, then `check(reader, value)` runs on the whole value if every field read (the
  // rules that relate fields: an entry file among the sources, axes the tensors name); the value
  // or the first error.
  template <typename T, typename Fill, typename Check>
  static Expected<T> read_root(const Json& root, const std::string& origin, Fill fill,
                               Check check) {
    JsonReader reader(origin);
    T value{};
    if (reader.expect_object(root, "$"))
      fill(reader, root, value);
    if (reader.ok())
      check(reader, std::as_const(value));
    return reader.finish(std::move(value));
  }
  // The same without a whole-value check.
  template <typename T, typename Fill>
  static Expected<T> read_root(const Json& root, const std::string& origin, Fill fill) {
    return read_root<T>(root, origin, fill, [](JsonReader&, const T&) {});
  }

  // Any key of `object` outside `keys` is an error ("unknown key"), so that typos do not pass;
  // "notes", free text, is allowed everywhere.
  void allow_only(const Json& object, const std::string& path,
                  std::span<const std::string_view> keys);

  // False (and an error) unless `value` is an object / an array.
  bool expect_object(const Json& value, const std::string& path);
  bool expect_array(const Json& value, const std::string& path);
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
  std::int64_t integer_at(const Json& value, const std::string& path, IntegerRange);
  // An integer in [0, 2^64): ids and raw bits.
  std::uint64_t unsigned_at(const Json& value, const std::string& path);
  bool boolean_at(const Json& value, const std::string& path);
  // An array of strings; an error names the element that is wrong.
  std::vector<std::string> strings_at(const Json& value, const std::string& path, Emptiness);
  // The index in `names` of the string at `path`; an error lists the names.
  std::optional<std::size_t> choice_at(const Json& value, const std::string& path,
                                       std::span<const std::string_view> names);
  // The enumerator (of an enum valued 1..N) that `name_of` spells as the string at `path`.
  template <typename Enum, std::size_t N>
  std::optional<Enum> enum_at(const Json& value, const std::string& path,
                              std::string_view (*name_of)(Enum)) {
    std::array<std::string_view, N> names{};
    for (std::size_t i = 0; i < N; ++i)
      names[i] = name_of(static_cast<Enum>(i + 1));
    auto index = choice_at(value, path, names);
    return index ? std::optional<Enum>(static_cast<Enum>(*index + 1)) : std::nullopt;
  }

  // Required members.
  std::string string(const Json& object, const std::string& path, std::string_view key, Emptiness);
  // A required array of strings.
  std::vector<std::string> strings(const Json& object, const std::string& path,
                                   std::string_view key, Emptiness);
  std::int64_t integer(const Json& object, const std::string& path, std::string_view key,
                       IntegerRange = {});
  std::uint64_t unsigned_integer(const Json& object, const std::string& path, std::string_view key);
  bool boolean(const Json& object, const std::string& path, std::string_view key);
  template <typename Enum, std::size_t N>
  std::optional<Enum> enumerator(const Json& object, const std::string& path, std::string_view key,
                                 std::string_view (*name_of)(Enum)) {
    const Json* member = required(object, path, key);
    return member ? enum_at<Enum, N>(*member, key_path(path, key), name_of) : std::nullopt;
  }
  // A required member that must be an object / an array (nullptr otherwise).
  const Json* object_member(const Json& object, const std::string& path, std::string_view key);
  const Json* array_member(const Json& object, const std::string& path, std::string_view key);

  // Optional members.
  std::optional<std::string> optional_string(const Json& object, const std::string& path,
                                             std::string_view key, Emptiness);
  std::optional<double> optional_number(const Json& object, const std::string& path,
                                        std::string_view key, NumberRange);
  std::optional<std::int64_t> optional_integer(const Json& object, const std::string& path,
                                               std::string_view key, std::int64_t min);
  std::optional<std::int64_t> optional_integer(const Json& object, const std::string& path,
                                               std::string_view key, IntegerRange);
  std::optional<std::uint64_t> optional_unsigned(const Json& object, const std::string& path,
                                                 std::string_view key);
  std::optional<bool> optional_boolean(const Json& object, const std::string& path,
                                       std::string_view key);
  template <typename Enum, std::size_t N>
  std::optional<Enum> optional_enumerator(const Json& object, const std::string& path,
                                          std::string_view key, std::string_view (*name_of)(Enum)) {
    const Json* member = optional(object, key);
    return member ? enum_at<Enum, N>(*member, key_path(path, key), name_of) : std::nullopt;
  }
  // nullptr when absent or not an object / an array (an error then).
  const Json* optional_object(const Json& object, const std::string& path, std::string_view key);
  const Json* optional_array(const Json& object, const std::string& path, std::string_view key);
  // A single non-empty string (a one-element list) or a non-empty array of non-empty strings.
  std::optional<std::vector<std::string>>
  optional_strings(const Json& object, const std::string& path, std::string_view key);

  // Nullable members: absent or null read as nullopt / an empty list.
  std::optional<std::string> nullable_string(const Json& object, const std::string& path,
                                             std::string_view key);
  std::optional<double> nullable_number(const Json& object, const std::string& path,
                                        std::string_view key);
  std::optional<bool> nullable_boolean(const Json& object, const std::string& path,
                                       std::string_view key);
  std::vector<std::string> string_list(const Json& object, const std::string& path,
                                       std::string_view key, Emptiness);

private:
  std::optional<std::int64_t> checked_integer(const Json& value, const std::string& path,
                                              const std::string& expected);

  std::string m_origin;
  ErrorKind m_kind;
  std::optional<Error> m_error;
};

} // namespace ptxbench::util
