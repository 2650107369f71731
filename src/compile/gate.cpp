// Problem: a model asked for a hand-written kernel may call a vendor library instead, and the
// result would measure the library, not the model. The original PTXBench greps the source for
// cuBLAS/cuDNN patterns after stripping comments; a grep also fires on string literals
// (printf("no cudnn here")) and on a `//` inside a string.
//
// Approach: two comment-free views of the source with unchanged line structure. The include
// view keeps literals, so `#include "cublas_v2.h"` is still visible; the code view also blanks
// literal contents, so only real tokens remain. Rules:
//   cuBLAS  — an include of cublas*.h; an identifier cublasLt*, cublasHandle_t, or cublas*
//             followed by `(` (a call);
//   cuDNN   — any identifier containing "cudnn", any include naming cudnn;
//   CUTLASS — an include under cutlass/ or cute/ (or of cutlass*.h);
//   dynamic loading — the identifiers dlopen, dlmopen, dlsym, dlvsym: a library reached
//             through the loader could be anything, so the loader itself is banned.
// Identifier rules ignore case, like the original's IGNORECASE patterns.
//
// Decision: a library name inside a string literal (printf("cublas-free kernel")) passes. A
// string cannot call a library on its own; the only way to turn a name into a call is the
// loader, which is banned by identifier. Invariant: the reported line is the smallest line
// that holds a hit, found in one linear pass per view.
#include "compile/gate.hpp"

#include "compile/source_text.hpp"
#include "util/strings.hpp"

#include <algorithm>
#include <fmt/format.h>

namespace ptxbench::compile {
namespace {

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(), [](char c) {
    return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c;
  });
  return out;
}

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.starts_with(prefix);
}

std::optional<BannedLibrary> classify_identifier(std::string_view word, char next) {
  std::string name = lower(word);
  if (util::contains(name, "cudnn"))
    return BannedLibrary::cudnn;
  if (starts_with(name, "cublaslt") || name == "cublashandle_t")
    return BannedLibrary::cublas;
  if (starts_with(name, "cublas") && next == '(')
    return BannedLibrary::cublas;
  if (name == "dlopen" || name == "dlmopen" || name == "dlsym" || name == "dlvsym")
    return BannedLibrary::dynamic_loading;
  return std::nullopt;
}

std::optional<BannedLibrary> classify_include(std::string_view header) {
  std::string path = lower(header);
  std::string_view base(path);
  if (std::size_t slash = base.rfind('/'); slash != std::string_view::npos)
    base.remove_prefix(slash + 1);
  if (starts_with(base, "cublas"))
    return BannedLibrary::cublas;
  if (util::contains(path, "cudnn"))
    return BannedLibrary::cudnn;
  if (starts_with(path, "cutlass/") || starts_with(path, "cute/") || starts_with(base, "cutlass"))
    return BannedLibrary::cutlass;
  return std::nullopt;
}

struct Hit {
  BannedLibrary library;
  std::size_t line;
};

std::optional<Hit> first_identifier_hit(std::string_view code) {
  std::optional<Hit> hit;
  for_each_word(code, [&](const Word& word) {
    if (word.text[0] >= '0' && word.text[0] <= '9')
      return true;
    auto library =
        classify_identifier(word.text, next_non_space(code, word.offset + word.text.size()));
    if (library)
      hit = Hit{*library, word.line};
    return !library;
  });
  return hit;
}

std::optional<Hit> first_include_hit(std::string_view stripped) {
  for (const auto& include : find_includes(stripped))
    if (auto library = classify_include(include.header))
      return Hit{*library, include.line};
  return std::nullopt;
}

} // namespace

std::string_view display_name(BannedLibrary library) {
  switch (library) {
  case BannedLibrary::cublas:
    return "cuBLAS";
  case BannedLibrary::cudnn:
    return "cuDNN";
  case BannedLibrary::cutlass:
    return "CUTLASS/CuTe";
  case BannedLibrary::dynamic_loading:
    return "dynamically loaded (dlopen/dlsym)";
  }
  return "unknown";
}

std::string BannedUse::message() const {
  return fmt::format("ERROR: Your kernel uses {} library calls instead of a hand-written kernel. "
                     "Please implement the kernel using CUDA directly — cuBLAS, cuDNN, and other "
                     "library shortcuts are not allowed.",
                     display_name(library));
}

std::optional<BannedUse> find_banned_library(std::string_view source) {
  std::string with_literals = strip_comments(source, Literals::keep);
  std::optional<Hit> include = first_include_hit(with_literals);
  std::optional<Hit> identifier = first_identifier_hit(strip_comments(source, Literals::blank));
  std::optional<Hit> first = include;
  if (identifier && (!first || identifier->line < first->line))
    first = identifier;
  if (!first)
    return std::nullopt;
  return BannedUse{first->library, first->line, line_excerpt(source, first->line)};
}

util::Status check_banned_libraries(std::string_view source) {
  auto use = find_banned_library(source);
  if (!use)
    return util::Ok{};
  return util::make_error(
      util::ErrorKind::banned_library,
      fmt::format("{}\n(first use on line {}: {})", use->message(), use->line, use->excerpt));
}

} // namespace ptxbench::compile
