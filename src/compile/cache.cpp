// Problem: nvcc costs seconds per candidate, and agent loops, re-evaluations and reports
// compile the same source again and again; a stale or half-written entry must never be
// served in place of a real build.
//
// Approach: the key is sha256 over everything that decides the output — candidate source,
// shim source, nvcc flags, target arch and the `nvcc --version` text — each part
// length-prefixed so no two part lists serialise alike. A build happens in a private staging
// folder next to the entries; its files (kernel.cu, ptxbench_shim.cu, kernel.so when linked,
// compile.log, ptxas.json, result.json) are complete before one rename() publishes the folder
// as <root>/<key>. A reader therefore sees a whole entry or none.
//
// Invariants: failed compiles are cached (the same inputs fail the same way); timeouts are
// not (a slow machine is not a property of the source). If two processes build one key, the
// first rename wins and the loser returns the winner's entry. An unreadable entry counts as a
// miss and is replaced.
#include "compile/cache.hpp"

#include "util/fs.hpp"
#include "util/hash.hpp"
#include "util/json_reader.hpp"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

namespace ptxbench::compile {
namespace fs = std::filesystem;

namespace {

constexpr int kEntryFormat = 1;

void add_part(std::string& buffer, std::string_view part) {
  buffer += std::to_string(part.size());
  buffer += ':';
  buffer += part;
  buffer += '\n';
}

util::Expected<CompileResult> read_entry(const fs::path& dir) {
  PTXBENCH_TRY_ASSIGN(auto meta, util::read_file(dir / "result.json"));
  PTXBENCH_TRY_ASSIGN(auto log, util::read_file(dir / "compile.log"));
  PTXBENCH_TRY_ASSIGN(auto ptxas, util::read_file(dir / "ptxas.json"));
  PTXBENCH_TRY_ASSIGN(auto result, parse_cache_result(meta, (dir / "result.json").string()));
  const util::Json kernels = util::Json::parse(ptxas, nullptr, false);
  PTXBENCH_TRY_ASSIGN(auto read, kernels_from_json(kernels, (dir / "ptxas.json").string()));
  result.kernels = std::move(read);
  result.log = std::move(log);
  if (result.ok)
    result.library = dir / "kernel.so";
  if (result.ok && !fs::exists(result.library))
    return util::make_error(util::ErrorKind::not_found, result.library.string() + ": missing");
  return result;
}

util::Status write_entry_files(const fs::path& dir, const CompileResult& result) {
  PTXBENCH_TRY(util::write_file_atomic(dir / "compile.log", result.log));
  // nvcc echoes source lines byte for byte: invalid UTF-8 in them is stored as U+FFFD (the raw
  // log is compile.log).
  constexpr auto kReplaceInvalid = nlohmann::json::error_handler_t::replace;
  PTXBENCH_TRY(util::write_file_atomic(
      dir / "ptxas.json", to_json(result.kernels).dump(2, ' ', false, kReplaceInvalid)));
  return util::write_file_atomic(dir / "result.json",
                                 cache_result_json(result).dump(2, ' ', false, kReplaceInvalid));
}

} // namespace

std::string compile_cache_key(const CompileKeyParts& parts) {
  // The entry keeps what was read out of the log (first_errors, diagnostic), so the version
  // changes when that reading does. v2: ptxas errors located in the generated PTX are listed.
  std::string buffer = "ptxbench-compile-cache-v2\n";
  add_part(buffer, parts.source);
  add_part(buffer, parts.shim);
  add_part(buffer, std::to_string(parts.flags.size()));
  for (const auto& flag : parts.flags)
    add_part(buffer, flag);
  add_part(buffer, to_string(parts.arch));
  add_part(buffer, parts.toolchain);
  return util::sha256_hex(buffer);
}

util::Json cache_result_json(const CompileResult& result) {
  return {{"format", kEntryFormat},
          {"ok", result.ok},
          {"diagnostic", result.diagnostic},
          {"first_errors", result.first_errors},
          {"compile_time_ms", result.compile_time.count()}};
}

util::Expected<CompileResult> parse_cache_result(std::string_view text, const std::string& origin) {
  const util::Json json = util::Json::parse(text, nullptr, false);
  util::JsonReader in(origin);
  if (json.is_discarded())
    in.fail("$", "not JSON");
  CompileResult result;
  if (!in.expect_object(json, "$"))
    return in.finish(std::move(result));
  if (const auto format = in.integer(json, "$", "format"); in.ok() && format != kEntryFormat)
    in.fail("$.format", fmt::format("format {}, not this build's {}", format, kEntryFormat));
  result.ok = in.boolean(json, "$", "ok");
  result.diagnostic = in.string(json, "$", "diagnostic", util::Emptiness::allowed);
  result.first_errors = in.strings(json, "$", "first_errors", util::Emptiness::allowed);
  result.compile_time = std::chrono::milliseconds(in.integer(json, "$", "compile_time_ms"));
  return in.finish(std::move(result));
}

std::optional<CompileResult> CompileCache::lookup(const std::string& key) const {
  auto result = read_entry(entry_dir(key));
  if (!result)
    return std::nullopt;
  result->cache_key = key;
  result->cache_hit = true;
  return std::move(*result);
}

util::Expected<fs::path> CompileCache::make_staging_dir() const {
  fs::path parent = m_root / ".staging";
  std::error_code ec;
  fs::create_directories(parent, ec);
  if (ec)
    return util::make_error(util::ErrorKind::io, parent.string() + ": " + ec.message());
  std::string pattern = (parent / "build-XXXXXX").string();
  if (::mkdtemp(pattern.data()) == nullptr)
    return util::make_error(util::ErrorKind::io, pattern + ": " + std::strerror(errno));
  return fs::path(pattern);
}

util::Expected<CompileResult> CompileCache::publish(const std::string& key, const fs::path& staging,
                                                    CompileResult result) const {
  if (auto written = write_entry_files(staging, result); !written) {
    discard(staging);
    return written.take_error();
  }
  fs::path entry = entry_dir(key);
  std::error_code ec;
  fs::rename(staging, entry, ec);
  if (ec) {
    if (auto existing = lookup(key)) {
      discard(staging);
      return *existing;
    }
    fs::remove_all(entry, ec);
    fs::rename(staging, entry, ec);
  }
  if (ec) {
    discard(staging);
    return util::make_error(util::ErrorKind::io,
                            fmt::format("cannot publish {}: {}", entry.string(), ec.message()));
  }
  result.cache_key = key;
  if (result.ok)
    result.library = entry / "kernel.so";
  return result;
}

void CompileCache::discard(const fs::path& staging) const {
  std::error_code ec;
  fs::remove_all(staging, ec);
}

} // namespace ptxbench::compile
