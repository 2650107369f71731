// The one codec for doubles that may not be finite.
//
// JSON has no NaN or infinities (nlohmann dumps them as null), so every ptxbench writer spells
// them as the strings "NaN", "Infinity" and "-Infinity": the candidate protocol, `ptxbench eval
// --json`, the evaluation service and FlashInfer-Trace files alike. Readers of our own wire
// formats accept exactly those three strings; readers of FlashInfer-Trace files, which other
// writers produce too, also accept them in any case, with an optional sign, and "inf".
#pragma once

#include "util/json.hpp"

#include <array>
#include <cstdint>
#include <optional>
#include <string_view>

namespace ptxbench::util {

inline constexpr std::array<std::string_view, 3> kNonFiniteSpellings{"NaN", "Infinity",
                                                                     "-Infinity"};

// Which strings a reader takes for a non-finite value.
enum class NonFiniteSpelling : std::uint8_t {
  exact = 1,    // "NaN", "Infinity", "-Infinity" only
  any_case = 2, // also "nan", "INF", "+infinity", "-Inf"…
};

// "NaN", "Infinity" or "-Infinity" for a value that is not finite; empty for a finite one.
std::string_view nonfinite_spelling(double value);
// A number, or the value's non-finite spelling as a JSON string.
Json number_json(double value);
// The double a JSON value holds: a number or a non-finite spelling; nullopt for anything else
// (null, other text, an object).
std::optional<double> number_from_json(const Json& value, NonFiniteSpelling spelling);

} // namespace ptxbench::util
