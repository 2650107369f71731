// The problem suite: every definition under a problems folder (FlashInfer-Trace layout) with
// its default workload, classified and measured (problem.hpp). Loading is all-or-nothing: a
// malformed file, a definition without a workload or an index blob that cannot be read is an
// error naming the file.
#pragma once

#include "suite/problem.hpp"
#include "util/error.hpp"

#include <filesystem>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace ptxbench::suite {

class Suite {
public:
  // `root` is a problems folder (definitions/, workloads/, blob/).
  static util::Expected<Suite> load(const std::filesystem::path& root);
  // util::data_root() / "problems".
  static util::Expected<Suite> load_default();
  static std::filesystem::path default_root();

  const std::filesystem::path& root() const { return m_root; }
  // Primary problems first, then by kind, then by name.
  std::span<const Problem> problems() const { return m_problems; }
  // not_found for an unknown name, with the closest known name in the message.
  util::Expected<const Problem*> find(std::string_view name) const;

private:
  std::filesystem::path m_root;
  std::vector<Problem> m_problems;
};

// Rewrites every index blob the workloads under `root` reference from the seeded layouts
// (layouts.hpp); returns the paths written, relative to root.
util::Expected<std::vector<std::filesystem::path>>
regenerate_blobs(const std::filesystem::path& root);

// The known name closest to `name` by edit distance, when it is close enough to be a typo (at
// most max(2, length / 3) edits) or `name` is a prefix of it; "" otherwise.
std::string closest_name(std::string_view name, const std::vector<std::string>& names);

} // namespace ptxbench::suite
