// Anticipated failures are values: an Error with a kind that code can switch on, and
// Expected<T> that holds either a value or an Error. Bugs and broken set-up throw instead.
//
// One idiom propagates an error to the caller:
//   PTXBENCH_TRY(write_file(path, text));               // a Status, or an Expected whose value
//                                                       // is not needed
//   PTXBENCH_TRY_ASSIGN(auto text, read_file(path));    // `text` is the value, a std::string
// Each returns the error from the enclosing function when the expression holds one; that
// function may return any Expected (or Status), since an Error converts to each. Code that
// handles an error instead of passing it on (retries it, wraps it, inspects its kind) keeps the
// Expected and says so: `if (!x) ... x.error() ...`.
#pragma once

#include "util/enum_table.hpp"

#include <array>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>

namespace ptxbench::util {

// Persisted (run store, JSON output): values are explicit and never reused.
enum class ErrorKind : std::uint8_t {
  invalid_input = 1, // a file, request or reply that does not satisfy its schema
  not_found = 2,     // a named thing (problem, file, key) that does not exist
  io = 3,            // the filesystem refused
  timeout = 4,       // a deadline passed
  subprocess = 5,    // a child process could not be started or died abnormally
  // 6 was compile_error, never produced (a failed build is an evaluation status, not an
  // Error); retired, see kRetiredErrorKinds.
  banned_library = 7, // the candidate uses a library it may not use
  extraction = 8,     // no candidate code could be taken from a model reply
  unsupported = 9,    // valid request that this build or machine cannot serve (e.g. no GPU)
  transport = 10,     // network failure before an HTTP status
  http_status = 11,   // an HTTP status other than success
  rate_limited = 12,  // HTTP 429 or provider equivalent
  bad_response = 13,  // a peer answered with something we cannot parse
  conflict = 14,      // a valid request that the named thing's state refuses (HTTP 409)
};

struct ErrorKindInfo {
  ErrorKind kind;
  std::string_view name;
};

inline constexpr std::array kErrorKinds{
    ErrorKindInfo{ErrorKind::invalid_input, "invalid_input"},
    ErrorKindInfo{ErrorKind::not_found, "not_found"},
    ErrorKindInfo{ErrorKind::io, "io"},
    ErrorKindInfo{ErrorKind::timeout, "timeout"},
    ErrorKindInfo{ErrorKind::subprocess, "subprocess"},
    ErrorKindInfo{ErrorKind::banned_library, "banned_library"},
    ErrorKindInfo{ErrorKind::extraction, "extraction"},
    ErrorKindInfo{ErrorKind::unsupported, "unsupported"},
    ErrorKindInfo{ErrorKind::transport, "transport"},
    ErrorKindInfo{ErrorKind::http_status, "http_status"},
    ErrorKindInfo{ErrorKind::rate_limited, "rate_limited"},
    ErrorKindInfo{ErrorKind::bad_response, "bad_response"},
    ErrorKindInfo{ErrorKind::conflict, "conflict"},
};

// Values that once named a kind and are never reused: a stored one reads back as bad data.
inline constexpr std::array<std::uint8_t, 1> kRetiredErrorKinds{6};

// Every value from 1 to the last row is either a row or retired, in increasing order: a
// missing row or one out of order fails to compile, and so does a new kind after the last
// row without its row, or an enumerator named on a retired value.
consteval bool error_kinds_complete() {
  std::size_t row = 0;
  std::size_t retired = 0;
  for (std::size_t value = 1; row < kErrorKinds.size(); ++value) {
    if (retired < kRetiredErrorKinds.size() && kRetiredErrorKinds[retired] == value) {
      ++retired;
      continue;
    }
    if (static_cast<std::size_t>(kErrorKinds[row].kind) != value)
      return false;
    ++row;
  }
  return retired == kRetiredErrorKinds.size();
}
static_assert(error_kinds_complete(),
              "kErrorKinds and kRetiredErrorKinds must cover every ErrorKind value in order");
static_assert(no_enumerator_after<ErrorKind, static_cast<std::size_t>(kErrorKinds.back().kind)>(),
              "kErrorKinds lacks a row for an enumerator after its last");
static_assert(!names_an_enumerator<static_cast<ErrorKind>(kRetiredErrorKinds[0])>(),
              "an ErrorKind enumerator reuses a retired value");

// The kind a persisted value names, or nothing for a retired or unknown value.
constexpr std::optional<ErrorKind> error_kind_from_value(std::int64_t value) {
  for (const auto& info : kErrorKinds)
    if (static_cast<std::int64_t>(info.kind) == value)
      return info.kind;
  return std::nullopt;
}

// The kind a name (as to_string writes it) names, or nothing.
constexpr std::optional<ErrorKind> error_kind_from_name(std::string_view name) {
  for (const auto& info : kErrorKinds)
    if (info.name == name)
      return info.kind;
  return std::nullopt;
}

// "unknown" only for a value no enumerator names, which no Error carries: values read from
// storage go through error_kind_from_value.
constexpr std::string_view to_string(ErrorKind kind) {
  for (const auto& info : kErrorKinds)
    if (info.kind == kind)
      return info.name;
  return "unknown";
}

struct Error {
  ErrorKind kind;
  std::string message;
};

inline Error make_error(ErrorKind kind, std::string message) {
  return Error{kind, std::move(message)};
}

// Thrown for bugs and broken set-up (a missing tool, a violated invariant); caught only at
// main() and at request/turn boundaries.
struct Fatal : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// [[nodiscard]]: an Expected or a Status dropped on the floor is an error ignored, so it does
// not compile (-Werror); `(void)` says it is meant.
template <typename T> class [[nodiscard]] Expected {
public:
  Expected(T value) : m_state(std::in_place_index<0>, std::move(value)) {}
  Expected(Error error) : m_state(std::in_place_index<1>, std::move(error)) {}

  [[nodiscard]] bool has_value() const { return m_state.index() == 0; }
  explicit operator bool() const { return has_value(); }

  T& value() & { return checked_value(); }
  const T& value() const& { return const_cast<Expected*>(this)->checked_value(); }
  T&& value() && { return std::move(checked_value()); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  const Error& error() const { return std::get<1>(m_state); }
  Error&& take_error() { return std::move(std::get<1>(m_state)); }

private:
  T& checked_value() {
    if (!has_value())
      throw Fatal("Expected::value() on an error: " + error().message);
    return std::get<0>(m_state);
  }
  std::variant<T, Error> m_state;
};

// Expected<void>: success or an Error.
struct Ok {};
using Status = Expected<Ok>;

namespace detail {

// The error of a failed result, moved out unless the result is const.
template <typename Result> Error propagated_error(Result&& result) {
  if constexpr (std::is_const_v<std::remove_reference_t<Result>>)
    return result.error();
  else
    return result.take_error();
}

} // namespace detail

// NOLINTBEGIN(bugprone-macro-parentheses): `result` is a name and `decl` a declaration, neither
// an expression that parentheses could group.
#define PTXBENCH_CONCAT_INNER(a, b) a##b
#define PTXBENCH_CONCAT(a, b) PTXBENCH_CONCAT_INNER(a, b)

// Evaluates an expression yielding an Expected or a Status once and returns its error from the
// enclosing function when it holds one.
#define PTXBENCH_TRY(...)                                                                          \
  PTXBENCH_TRY_IMPL(PTXBENCH_CONCAT(ptxbench_try_, __COUNTER__), __VA_ARGS__)
#define PTXBENCH_TRY_IMPL(result, ...)                                                             \
  do {                                                                                             \
    auto&& result = (__VA_ARGS__);                                                                 \
    if (!result)                                                                                   \
      return ::ptxbench::util::detail::propagated_error(std::forward<decltype(result)>(result));   \
  } while (false)

// `PTXBENCH_TRY_ASSIGN(auto x, f());`: evaluates f() once, returns its error from the enclosing
// function when it holds one, else declares (or assigns) `x` from its value, moved out. Several
// statements, not one: it cannot be the body of an unbraced if or loop.
#define PTXBENCH_TRY_ASSIGN(decl, ...)                                                             \
  PTXBENCH_TRY_ASSIGN_IMPL(PTXBENCH_CONCAT(ptxbench_try_, __COUNTER__), decl, __VA_ARGS__)
#define PTXBENCH_TRY_ASSIGN_IMPL(result, decl, ...)                                                \
  auto&& result = (__VA_ARGS__);                                                                   \
  if (!result)                                                                                     \
    return ::ptxbench::util::detail::propagated_error(std::forward<decltype(result)>(result));     \
  decl = std::move(*result)
// NOLINTEND(bugprone-macro-parentheses)

} // namespace ptxbench::util
