#include "pack/compose.hpp"

#include "util/fs.hpp"

#include <cctype>
#include <fmt/core.h>

namespace ptxbench::pack {

TextSize& TextSize::operator+=(const TextSize& other) {
  bytes += other.bytes;
  words += other.words;
  approx_tokens += other.approx_tokens;
  return *this;
}

TextSize measure(std::string_view text) {
  TextSize size;
  size.bytes = text.size();
  size.approx_tokens = (text.size() + 3) / 4;
  bool in_word = false;
  for (const char c : text) {
    const bool space = std::isspace(static_cast<unsigned char>(c)) != 0;
    if (!space && !in_word)
      ++size.words;
    in_word = !space;
  }
  return size;
}

namespace {

bool is_header(const std::filesystem::path& file) {
  const std::string ext = file.extension().string();
  return ext == ".cuh" || ext == ".h" || ext == ".hpp";
}

util::Expected<std::string> section_text(const Manifest& manifest, const Component& component) {
  const std::filesystem::path path = manifest.root() / component.file;
  auto body = util::read_file(path);
  if (!body)
    return util::make_error(body.error().kind,
                            fmt::format("component '{}': {}", component.id, body.error().message));
  const std::string shown =
      (std::filesystem::path(manifest.include_prefix()) / component.file).generic_string();
  std::string text = fmt::format("## {}: `{}`\n\n", info(component.kind).heading, shown);
  const bool fenced = is_header(component.file);
  if (fenced)
    text += "```cpp\n";
  text += *body;
  if (!text.ends_with('\n'))
    text += '\n';
  if (fenced)
    text += "```\n";
  return text;
}

} // namespace

util::Expected<TextSize> component_size(const Manifest& manifest, const Component& component) {
  PTXBENCH_TRY_ASSIGN(auto text, section_text(manifest, component));
  return measure(text + "\n");
}

util::Expected<Composition> compose(const Manifest& manifest, const Variant& variant) {
  Composition composition;
  composition.variant = &variant;
  for (const std::string& id : variant.components) {
    const Component* component = manifest.component(id);
    if (component == nullptr)
      throw util::Fatal("variant '" + variant.name + "' names unvalidated component " + id);
    PTXBENCH_TRY_ASSIGN(auto text, section_text(manifest, *component));
    text += "\n";
    composition.text += text;
    composition.sections.push_back(Section{component, text, measure(text)});
  }
  composition.size = measure(composition.text);
  return composition;
}

} // namespace ptxbench::pack
