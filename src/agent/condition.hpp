// A condition of a run plan (plan.hpp): what the model is given at inference time besides the
// task — the expert guidance (guidance.hpp) or not, and retrieved repair notes or not — the
// dimension the paper's Table 4 compares with fine-tuning (§5.3).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ptxbench::agent {

// Whether a condition gives the model the expert guidance.
enum class Guidance : std::uint8_t { off = 1, on = 2 };
// What a condition retrieves for a failed turn: nothing, repair notes, or notes and the best
// fixed kernel (NotesSettings::mode 1 and 2). Spelled "none", "notes", "notes+kernel".
enum class Retrieval : std::uint8_t { none = 0, notes = 1, notes_and_kernel = 2 };
std::string_view to_string(Retrieval retrieval);
std::optional<Retrieval> parse_retrieval(std::string_view name);

struct Condition {
  std::string name; // empty only for the implicit condition of a plan without "conditions"
  Guidance guidance = Guidance::off;
  Retrieval retrieval = Retrieval::none;
  std::vector<std::string> models; // empty: every model of the plan
  friend bool operator==(const Condition&, const Condition&) = default;
};

} // namespace ptxbench::agent
