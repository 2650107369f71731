// Composing a prompt variant into one text, and sizing it.
//
// Each component becomes a section: a level-2 heading naming its kind and the path a kernel
// would #include ("knowledge/sm100a/tcgen05.cuh"), then the file; headers (.cuh/.h/.hpp) go in
// a fenced ```cpp block, Markdown verbatim. Sections follow the variant's component order.
//
// Token counts are APPROXIMATE: there is no tokenizer library in this C++ build, so a count is
// ceil(UTF-8 bytes / 4) (close to BPE tokenizers on English prose; code tokenizes somewhat
// denser), reported next to the whitespace-separated word count. Every output that shows a
// count says it is approximate.
#pragma once

#include "pack/manifest.hpp"
#include "util/error.hpp"

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace ptxbench::pack {

struct TextSize {
  std::size_t bytes = 0;
  std::size_t words = 0;
  std::size_t approx_tokens = 0; // ceil(bytes / 4)

  TextSize& operator+=(const TextSize& other);
};

// One line that every count-bearing output carries.
inline constexpr std::string_view kTokenNote =
    "token counts are approximate: ceil(UTF-8 bytes / 4), no tokenizer";

TextSize measure(std::string_view text);

struct Section {
  const Component* component = nullptr;
  std::string text; // heading + body as composed
  TextSize size;    // of `text`
};

struct Composition {
  const Variant* variant = nullptr;
  std::vector<Section> sections;
  std::string text; // all sections
  TextSize size;    // of `text`
};

// io / not_found when a component file cannot be read.
util::Expected<Composition> compose(const Manifest& manifest, const Variant& variant);

// The size each component contributes to any variant (its composed section).
util::Expected<TextSize> component_size(const Manifest& manifest, const Component& component);

} // namespace ptxbench::pack
