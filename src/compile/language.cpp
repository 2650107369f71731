#include "compile/language.hpp"

#include "util/enum_table.hpp"

#include <array>

namespace ptxbench::compile {
namespace {

struct LanguageInfo {
  Language language;
  std::string_view name;
  trace::Language trace;
  std::string_view file;
  std::string_view entry;
};

constexpr std::array kLanguages{
    LanguageInfo{Language::cuda, "cuda", trace::Language::cuda, "kernel.cu", "kernel.cu::run"},
    LanguageInfo{Language::triton, "triton", trace::Language::triton, "kernel.py",
                 "kernel.py::run"},
};

consteval bool languages_in_order() {
  for (std::size_t i = 0; i < kLanguages.size(); ++i)
    if (static_cast<std::size_t>(kLanguages[i].language) != i + 1)
      return false;
  return true;
}
static_assert(languages_in_order(), "kLanguages must list every Language in value order");
static_assert(util::no_enumerator_after<Language, kLanguages.size()>(),
              "kLanguages lacks a row for an enumerator after its last");

const LanguageInfo& info(Language language) {
  return kLanguages.at(static_cast<std::size_t>(language) - 1);
}

} // namespace

std::string_view to_string(Language language) {
  return info(language).name;
}

std::optional<Language> parse_language(std::string_view text) {
  for (const auto& row : kLanguages)
    if (row.name == text)
      return row.language;
  return std::nullopt;
}

trace::Language to_trace(Language language) {
  return info(language).trace;
}

std::optional<Language> from_trace(trace::Language language) {
  for (const auto& row : kLanguages)
    if (row.trace == language)
      return row.language;
  return std::nullopt;
}

std::string_view kernel_file_name(Language language) {
  return info(language).file;
}

std::string_view entry_point(Language language) {
  return info(language).entry;
}

} // namespace ptxbench::compile
