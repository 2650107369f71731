// Persisted-enum encoding for the store's SQL (internal to store/).
#pragma once

#include "store/enums.hpp"
#include "util/error.hpp"

#include <cstdint>
#include <string>
#include <string_view>

namespace ptxbench::store::detail {

template <typename Enum> std::int64_t raw(Enum value) {
  return static_cast<std::int64_t>(value);
}

// The enumerator stored as `value` in `column`; invalid_input for a value this build does not
// know (a database written by a newer build, or edited by hand).
template <typename Enum, std::size_t N>
util::Expected<Enum> decode(const std::array<EnumInfo<Enum>, N>& table, std::int64_t value,
                            std::string_view column) {
  if (auto decoded = enum_from_value(table, value))
    return *decoded;
  return util::make_error(util::ErrorKind::invalid_input,
                          std::string(column) + ": unknown value " + std::to_string(value));
}

} // namespace ptxbench::store::detail
