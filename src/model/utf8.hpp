// Model replies are untrusted bytes. Decision: invalid UTF-8 is replaced, not kept — each
// run of bytes that starts no valid sequence becomes one U+FFFD, so every text the agent hands on
// (to JSON, to SQLite, to the next prompt) is valid UTF-8 and no later serializer can throw on it.
// The replacement happens on the raw HTTP body before JSON parsing, so a reply with stray bytes is
// still parsed (its JSON structure is ASCII) instead of failing as a bad response.
#pragma once

#include <string>
#include <string_view>

namespace ptxbench::model {

// `text` with each run of invalid bytes (stray continuation bytes, truncated or overlong
// sequences, surrogates, code points above U+10FFFF) replaced by one U+FFFD.
std::string sanitize_utf8(std::string_view text);

bool is_valid_utf8(std::string_view text);

} // namespace ptxbench::model
