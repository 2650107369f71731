// Reasoning-teacher replies (untrusted text from a remote model): <think> stripping and the
// <my_reasoning> extraction with its checks. Invariants beyond "no crash": an accepted monologue
// is within the limits, trimmed, holds no <think> tag (every block is stripped before the
// extraction) nor the closing </my_reasoning>, and names none of the shown-kernel phrases
// (checked here independently of the extractor); a refusal is a bad_response that says why.
#include "adapt/rationale_prompt.hpp"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

namespace {

// Whether `text` holds one of kKernelMentions, compared as extract_rationale promises:
// case-insensitively, with a typographic apostrophe (U+2019) read as '.
bool names_the_shown_kernel(std::string_view text) {
  constexpr std::string_view kRightQuote = "\xe2\x80\x99";
  std::string folded;
  for (std::size_t i = 0; i < text.size(); ++i) {
    if (text.substr(i).starts_with(kRightQuote)) {
      folded += '\'';
      i += kRightQuote.size() - 1;
      continue;
    }
    folded += static_cast<char>(std::tolower(static_cast<unsigned char>(text[i])));
  }
  return std::ranges::any_of(ptxbench::adapt::kKernelMentions, [&](std::string_view phrase) {
    return folded.find(phrase) != std::string::npos;
  });
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view reply(reinterpret_cast<const char*>(data), size);
  const ptxbench::adapt::RationaleLimits limits{4, 4096};
  auto rationale = ptxbench::adapt::extract_rationale(reply, limits);
  if (rationale) {
    if (rationale->reasoning.size() < limits.min_chars ||
        rationale->reasoning.size() > limits.max_chars)
      std::abort();
    const std::string& text = rationale->reasoning;
    if (text.find("<think>") != std::string::npos ||
        text.find("</my_reasoning>") != std::string::npos)
      std::abort();
    if (std::isspace(static_cast<unsigned char>(text.front())) ||
        std::isspace(static_cast<unsigned char>(text.back())))
      std::abort();
    if (names_the_shown_kernel(rationale->reasoning))
      std::abort();
  } else if (rationale.error().kind != ptxbench::util::ErrorKind::bad_response ||
             rationale.error().message.empty()) {
    std::abort();
  }
  return 0;
}
