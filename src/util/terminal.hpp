// Untrusted text (a candidate's bytes echoed by nvcc, a model's reply) made safe to print.
#pragma once

#include <string>
#include <string_view>

namespace ptxbench::util {

// `text` with its control characters other than newline and tab (C0, DEL, and the C1 range
// U+0080..U+009F in UTF-8) as visible escapes ("\x1b", "\u009b"), so that printed text cannot
// move the cursor, recolour or retitle a terminal. Every other byte is kept.
std::string printable(std::string_view text);

} // namespace ptxbench::util
