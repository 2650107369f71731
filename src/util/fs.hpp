// Whole-file reads and atomic writes: a file is either the old content or the new, never half.
#pragma once

#include "util/error.hpp"

#include <filesystem>
#include <string>
#include <string_view>

namespace ptxbench::util {

Expected<std::string> read_file(const std::filesystem::path& path);

// Writes to a temporary sibling, fsyncs, then renames over `path`; creates parent folders.
Status write_file_atomic(const std::filesystem::path& path, std::string_view content);

// Appends, first adding a newline if the file does not already end in one.
Status append_line(const std::filesystem::path& path, std::string_view line);

} // namespace ptxbench::util
