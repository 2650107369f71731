// The compile cache: one folder per distinct build under <root>/<key>/.
#pragma once

#include "compile/nvcc.hpp"
#include "util/error.hpp"
#include "util/json.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ptxbench::compile {

struct CompileKeyParts {
  std::string_view source;
  std::string_view shim;
  const std::vector<std::string>& flags;
  Arch arch;
  std::string_view toolchain; // nvcc --version
};

// sha256 over the length-prefixed parts; any change to any part changes the key.
std::string compile_cache_key(const CompileKeyParts& parts);

// An entry's result.json as written by publish() and its reading: ok, diagnostic, first_errors
// and compile_time (log, kernels and library live in the entry's other files). A missing or
// wrong-typed field, or another build's format, is an invalid_input error naming `origin` and
// the JSON path; lookup() counts such an entry as a miss.
util::Json cache_result_json(const CompileResult& result);
util::Expected<CompileResult> parse_cache_result(std::string_view text, const std::string& origin);

class CompileCache {
public:
  explicit CompileCache(std::filesystem::path root) : m_root(std::move(root)) {}

  // The stored result, with cache_hit set; nullopt when absent or unreadable.
  std::optional<CompileResult> lookup(const std::string& key) const;
  // A fresh private folder on the cache's filesystem to build in.
  util::Expected<std::filesystem::path> make_staging_dir() const;
  // Writes the result's files into `staging` and renames it to the entry for `key`. When
  // another process published the key first, its entry wins and is returned.
  util::Expected<CompileResult>
  publish(const std::string& key, const std::filesystem::path& staging, CompileResult result) const;
  void discard(const std::filesystem::path& staging) const;

  std::filesystem::path entry_dir(const std::string& key) const { return m_root / key; }

private:
  std::filesystem::path m_root;
};

} // namespace ptxbench::compile
