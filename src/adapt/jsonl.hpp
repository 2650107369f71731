// JSON Lines files of the data directory: whole-file reads that name the bad line, and
// appends of one whole line that is on disk (fsync) before the call returns, so a process
// killed at any moment leaves every earlier line intact and at most one torn last line.
#pragma once

#include "adapt/records.hpp"
#include "util/error.hpp"

#include <filesystem>
#include <vector>

namespace ptxbench::adapt {

// What to do with a last line that does not end in a newline and does not parse: the trace of
// a writer killed mid-append (`skip`), or an error like any other bad line (`refuse`).
enum class TornTail : std::uint8_t { refuse = 1, skip = 2 };

// One JSON value per non-empty line. not_found when the file is missing; invalid_input naming
// "path:line" for a line that is not JSON.
util::Expected<std::vector<Json>> read_jsonl(const std::filesystem::path& path,
                                             TornTail torn = TornTail::refuse);

// Appends `value` as one line (a newline first when the file does not end in one) and fsyncs.
util::Status append_jsonl(const std::filesystem::path& path, const Json& value);

// The lines as one file's text, for an atomic rewrite.
std::string to_jsonl(const std::vector<Json>& values);

} // namespace ptxbench::adapt
