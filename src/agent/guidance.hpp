// Expert guidance (paper §5.3, Figure 16): a short text of rules a person distilled from failed
// trajectories, given to the model at inference time. The original ships it as one more
// fragment of the prompt tag's document (`qwen36-27b-mha-patch.md` in the `-mha-patched`
// configs), so it sits in the system message right after the knowledge pack; build_prompts puts
// it there, as the knowledge section's last part "## Expert guidance", for the problems the
// plan says it applies to (plan.hpp, GuidanceSettings). knowledge/guidance/ holds the paper's
// MHA text.
//
// A guidance file is user input: it must exist, be UTF-8 and at most kMaxGuidanceBytes; its
// sha256 goes into the run's stored plan, and a resumed run whose file changed is refused.
#pragma once

#include "util/error.hpp"

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>

namespace ptxbench::agent {

inline constexpr std::size_t kMaxGuidanceBytes = std::size_t{64} * 1024;
inline constexpr std::string_view kGuidanceHeading = "## Expert guidance";

struct GuidanceText {
  std::string text;   // as read, trailing whitespace removed
  std::string sha256; // of the file's bytes
};

// not_found for a missing file; invalid_input for an empty file, one over kMaxGuidanceBytes, or
// one that is not UTF-8 (naming the byte offset); each message names the file.
util::Expected<GuidanceText> load_guidance(const std::filesystem::path& path);

// The offset of the first byte that is no part of a well-formed UTF-8 sequence; npos if none.
std::size_t first_invalid_utf8(std::string_view text);

} // namespace ptxbench::agent
