#include "agent/guidance.hpp"

#include "util/fs.hpp"
#include "util/hash.hpp"

#include <cctype>
#include <fmt/core.h>

namespace ptxbench::agent {
namespace {

// The length of the UTF-8 sequence that starts with `lead` (1-4), or 0 for a byte that cannot
// start one (a continuation byte, C0/C1 overlongs, F5..FF).
std::size_t sequence_length(unsigned char lead) {
  if (lead < 0x80)
    return 1;
  if (lead >= 0xC2 && lead <= 0xDF)
    return 2;
  if (lead >= 0xE0 && lead <= 0xEF)
    return 3;
  if (lead >= 0xF0 && lead <= 0xF4)
    return 4;
  return 0;
}

// Whether the continuation bytes of the sequence at `at` are valid, overlongs and surrogates
// excluded (RFC 3629 table).
bool valid_sequence(std::string_view text, std::size_t at, std::size_t length) {
  if (at + length > text.size())
    return false;
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[at + i]); };
  for (std::size_t i = 1; i < length; ++i)
    if ((byte(i) & 0xC0) != 0x80)
      return false;
  if (length == 3 && byte(0) == 0xE0 && byte(1) < 0xA0)
    return false;
  if (length == 3 && byte(0) == 0xED && byte(1) > 0x9F)
    return false;
  if (length == 4 && byte(0) == 0xF0 && byte(1) < 0x90)
    return false;
  return !(length == 4 && byte(0) == 0xF4 && byte(1) > 0x8F);
}

} // namespace

std::size_t first_invalid_utf8(std::string_view text) {
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t length = sequence_length(static_cast<unsigned char>(text[at]));
    if (length == 0 || !valid_sequence(text, at, length))
      return at;
    at += length;
  }
  return std::string_view::npos;
}

util::Expected<GuidanceText> load_guidance(const std::filesystem::path& path) {
  const auto bad = [&](const std::string& why) {
    return util::make_error(util::ErrorKind::invalid_input,
                            fmt::format("guidance file {}: {}", path.string(), why));
  };
  std::error_code error;
  if (!std::filesystem::is_regular_file(path, error))
    return util::make_error(util::ErrorKind::not_found,
                            fmt::format("guidance file {}: no such file", path.string()));
  const auto size = std::filesystem::file_size(path, error);
  if (!error && size > kMaxGuidanceBytes)
    return bad(fmt::format("{} bytes, more than the {} a guidance file may have", size,
                           kMaxGuidanceBytes));
  PTXBENCH_TRY_ASSIGN(auto bytes, util::read_file(path));
  if (bytes.size() > kMaxGuidanceBytes)
    return bad(fmt::format("{} bytes, more than the {} a guidance file may have", bytes.size(),
                           kMaxGuidanceBytes));
  if (const std::size_t at = first_invalid_utf8(bytes); at != std::string_view::npos)
    return bad(fmt::format("not UTF-8 (byte {} is no part of a UTF-8 character)", at));
  GuidanceText guidance{bytes, util::sha256_hex(bytes)};
  while (!guidance.text.empty() && std::isspace(static_cast<unsigned char>(guidance.text.back())))
    guidance.text.pop_back();
  if (guidance.text.empty())
    return bad("empty");
  return guidance;
}

} // namespace ptxbench::agent
