// The data directory of one adaptation dataset (briefs: adapt_contract.md): where each stage's
// files live, how a stage writes them (atomically, and not at all when the bytes are already
// there, so a stage run twice changes nothing), and the composition counts every manifest
// carries (records per problem × category × turn, the paper's Table 10 and Figure 4).
#pragma once

#include "adapt/records.hpp"
#include "util/error.hpp"
#include "util/json_reader.hpp"

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

namespace ptxbench::adapt {

enum class DatasetKind : std::uint8_t { fixit = 1, kernelgen = 2 };
std::string_view to_string(DatasetKind kind);

// DIR/<kind>/<stage>/
std::filesystem::path stage_dir(const std::filesystem::path& dir, DatasetKind kind,
                                std::string_view stage);

// Writes `content` to `path` atomically unless the file already holds exactly these bytes.
util::Status write_if_changed(const std::filesystem::path& path, std::string_view content);

// The sha256 of a file's bytes.
util::Expected<std::string> file_sha256(const std::filesystem::path& path);

// A manifest document, pretty-printed with a final newline.
std::string manifest_text(const Json& manifest);

// Records per (problem, category, turn).
using CompositionKey = std::tuple<std::string, std::string, std::int64_t>;
using Composition = std::map<CompositionKey, std::int64_t>;
// [{"problem","category","turn","count"}...] in key order.
Json composition_json(const Composition& counts);
// {"pre": n, "post": m} rows over the union of both compositions.
Json composition_json(const Composition& pre, const Composition& post);
// Reads such rows at `path` into `in`, which keeps the first problem ("manifest.json:
// $.counts[2].turn: expected an integer, got string"); a count is >= 0.
Composition read_composition(util::JsonReader& in, const Json& rows, const std::string& path);
// The same for a document of its own: errors are "$...: what", invalid_input.
util::Expected<Composition> composition_from_json(const Json& rows);

// The problem, category and turn of a record, for counting.
CompositionKey composition_key(const FailureRecord& record);

} // namespace ptxbench::adapt
