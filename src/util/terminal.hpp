// Untrusted text (a candidate's bytes echoed by nvcc, a model's reply) made safe to print.
#pragma once

#include <string>
#include <string_view>

namespace ptxbench::util {

// `text` with its control characters other than newline and tab (C0, DEL, and the C1 range
// U+0080..U+009F in UTF-8) as visible escapes ("\x1b", "\u009b"), so that printed text cannot
// move the cursor, recolour or retitle a terminal. Every other byte is kept.
std::string printable(std::string_view text);

// The share of `text`'s bytes that no source file holds: control characters other than tab,
// newline, carriage return, form feed and vertical tab, DEL, and bytes that are no part of a
// well-formed UTF-8 sequence. 0 for empty text. A source file with a Latin-1 string literal
// scores a few per cent; an executable, an archive or random bytes score well over a third.
double non_text_fraction(std::string_view text);

} // namespace ptxbench::util
