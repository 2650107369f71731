// Compile-time completeness of the enum name tables. Every persisted or printed enum here has
// explicit values 1, 2, … and a descriptor table, one row per value in order. Rows in order are
// checked next to each table; `no_enumerator_after<Enum, N>()` adds what such a check cannot
// see on its own: that the enum names no value N + 1, so an enumerator appended without its
// row fails to compile. The compiler itself says whether a value is named: a function
// template's signature spells a named value `E::x` and any other value `(E)7`.
#pragma once

#include <cstddef>
#include <string_view>

namespace ptxbench::util {

template <auto Value> consteval bool names_an_enumerator() {
  const std::string_view signature = __PRETTY_FUNCTION__;
  const std::size_t at = signature.find("Value = ");
  return at != std::string_view::npos && signature[at + 8] != '(';
}

template <typename Enum, std::size_t Rows> consteval bool no_enumerator_after() {
  return !names_an_enumerator<static_cast<Enum>(Rows + 1)>();
}

} // namespace ptxbench::util
