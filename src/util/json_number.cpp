#include "util/json_number.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <string>

namespace ptxbench::util {
namespace {

std::optional<double> exact_nonfinite(std::string_view text) {
  if (text == kNonFiniteSpellings[0])
    return std::numeric_limits<double>::quiet_NaN();
  if (text == kNonFiniteSpellings[1])
    return std::numeric_limits<double>::infinity();
  if (text == kNonFiniteSpellings[2])
    return -std::numeric_limits<double>::infinity();
  return std::nullopt;
}

std::optional<double> any_case_nonfinite(std::string text) {
  std::transform(text.begin(), text.end(), text.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  double sign = 1.0;
  if (!text.empty() && (text.front() == '-' || text.front() == '+')) {
    sign = text.front() == '-' ? -1.0 : 1.0;
    text.erase(0, 1);
  }
  if (text == "nan")
    return std::numeric_limits<double>::quiet_NaN();
  if (text == "inf" || text == "infinity")
    return sign * std::numeric_limits<double>::infinity();
  return std::nullopt;
}

} // namespace

std::string_view nonfinite_spelling(double value) {
  if (std::isnan(value))
    return kNonFiniteSpellings[0];
  if (std::isinf(value))
    return value > 0 ? kNonFiniteSpellings[1] : kNonFiniteSpellings[2];
  return {};
}

Json number_json(double value) {
  std::string_view spelling = nonfinite_spelling(value);
  return spelling.empty() ? Json(value) : Json(std::string(spelling));
}

std::optional<double> number_from_json(const Json& value, NonFiniteSpelling spelling) {
  if (value.is_number())
    return value.get<double>();
  if (!value.is_string())
    return std::nullopt;
  const auto& text = value.get_ref<const std::string&>();
  return spelling == NonFiniteSpelling::exact ? exact_nonfinite(text) : any_case_nonfinite(text);
}

} // namespace ptxbench::util
