// Number formatting and table lookups shared by the Markdown and CSV formats.
#pragma once

#include "report/report.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ptxbench::report {

// How a value is shown: rates as percentages (one decimal), speedups with three decimals.
enum class Unit : std::uint8_t { percent = 1, speedup = 2 };
// Which statistic across prompt variants a table shows.
enum class Statistic : std::uint8_t { mean = 1, range = 2 };

inline constexpr std::string_view kUndefined = "–";

std::string show(std::optional<double> value, Unit unit);
// The value of one spread: its mean, or "min–max".
std::string show(const Spread& spread, Unit unit, Statistic statistic);
// "a / b / c" over the report's turn limits.
std::string triplet(const Report& report, const GroupResult& group, Metric metric, double p,
                    Unit unit, Statistic statistic);
// Paper layout: the target-instruction triplet, then the unrestricted one in parentheses.
std::string paired_triplet(const Report& report, const GroupResult& group, Metric target,
                           Metric plain, double p, Unit unit, Statistic statistic);

std::vector<std::string> report_models(const Report& report);
std::vector<std::string> report_problems(const Report& report);
const GroupResult* find_group(const Report& report, std::string_view model,
                              std::string_view problem);
// A machine-readable number: shortest form with six significant digits, empty when undefined.
std::string csv_number(std::optional<double> value);
// A CSV field, quoted when it holds a comma, quote or newline.
std::string csv_field(std::string_view text);

} // namespace ptxbench::report
