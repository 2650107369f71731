// JSON Lines files of the data directory, the one reader and writer every stage uses: whole-file
// reads that name the bad line, and appends of one whole line that is on disk (fsync) before the
// call returns, so a process killed at any moment leaves every earlier line intact and at most
// one torn last line — which readers ignore with a warning instead of refusing the file.
#pragma once

#include "util/error.hpp"

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fmt/core.h>
#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace ptxbench::adapt {

using Json = nlohmann::ordered_json;

// One parsed line and its 1-based number in the file.
struct JsonlLine {
  std::int64_t number = 0;
  Json json;
};

// One JSON value per non-blank line. not_found when the file is missing; invalid_input naming
// "path:line" for a line that is not JSON — except a last line without a newline (a writer
// killed mid-append), which is skipped with a warning on `warnings` (null: silent).
util::Expected<std::vector<JsonlLine>> read_jsonl_lines(const std::filesystem::path& path,
                                                        std::FILE* warnings = stderr);

// Every line parsed by `parse`; an error names "path:line".
template <typename T> using RecordParser = std::function<util::Expected<T>(const Json&)>;
template <typename T>
util::Expected<std::vector<T>> read_jsonl(const std::filesystem::path& path,
                                          const RecordParser<T>& parse,
                                          std::FILE* warnings = stderr) {
  PTXBENCH_TRY_ASSIGN(auto lines, read_jsonl_lines(path, warnings));
  std::vector<T> records;
  records.reserve(lines.size());
  for (const JsonlLine& line : lines) {
    auto record = parse(line.json);
    if (!record)
      return util::make_error(
          util::ErrorKind::invalid_input,
          fmt::format("{}:{}: {}", path.string(), line.number, record.error().message));
    records.push_back(std::move(*record));
  }
  return records;
}

// Appends `value` as one line (a newline first when the file does not end in one) and fsyncs.
util::Status append_jsonl(const std::filesystem::path& path, const Json& value);

// The lines as one file's text, for an atomic rewrite.
std::string to_jsonl(const std::vector<Json>& values);

// The resumable stages' output (synthesize, notes): the ids of the lines `done_id` accepts, one
// line per id (the first); the file is rewritten to hold only those lines when it holds anything
// else (failed records, a torn last line, a repeated id). A missing file holds none.
using DoneId = std::function<std::optional<std::string>(const Json&)>;
util::Expected<std::set<std::string>> keep_done_lines(const std::filesystem::path& path,
                                                      const DoneId& done_id);

} // namespace ptxbench::adapt
