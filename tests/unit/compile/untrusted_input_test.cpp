// Replies and sources are untrusted: random mixes of the tokens the scanners react to must
// never crash them, and comment stripping must keep its length and newline invariant.
#include "compile/extract.hpp"
#include "compile/gate.hpp"
#include "compile/source_text.hpp"

#include <gtest/gtest.h>
#include <random>

using namespace ptxbench::compile;

namespace {

std::string random_text(std::mt19937& rng) {
  static const std::string_view kTokens[] = {
      "```",      "```cpp\n",   "~~~cuda\n",
      "\n",       "\r\n",       "/*",
      "*/",       "//",         "\"",
      "'",        "R\"x(",      ")x\"",
      "\\",       "run(",       ")",
      "{",        "__global__", "<<<",
      "cublasX(", "#include <", ">",
      "cudnn",    "dlopen",     " ",
      "1'0",      "u8R\"",      std::string_view("\xff\0\xc3", 3)};
  std::uniform_int_distribution<std::size_t> length(0, 120);
  std::uniform_int_distribution<std::size_t> pick(0, std::size(kTokens) - 1);
  std::string text;
  for (std::size_t n = length(rng); n > 0; --n)
    text += kTokens[pick(rng)];
  return text;
}

} // namespace

TEST(UntrustedInput, RandomTokenSoupNeverBreaksTheScanners) {
  std::mt19937 rng(20240611);
  for (int i = 0; i < 3000; ++i) {
    std::string text = random_text(rng);
    for (Literals literals : {Literals::keep, Literals::blank}) {
      std::string stripped = strip_comments(text, literals);
      ASSERT_EQ(stripped.size(), text.size());
      for (std::size_t k = 0; k < text.size(); ++k)
        ASSERT_EQ(stripped[k] == '\n', text[k] == '\n') << "offset " << k << " of case " << i;
    }
    (void)find_banned_library(text);
    (void)extract_candidate(text);
    (void)find_includes(strip_comments(text));
  }
}
