#include "measure/cubin_symbols.hpp"

#include <cstring>
#include <elf.h>
#include <optional>

namespace ptxbench::measure {
namespace {

// Copies a T out of `image` at `offset` (the image need not be aligned); nullopt past the end.
template <typename T>
std::optional<T> read_at(std::span<const std::byte> image, std::size_t offset) {
  if (offset > image.size() || image.size() - offset < sizeof(T))
    return std::nullopt;
  T value;
  std::memcpy(&value, image.data() + offset, sizeof(T));
  return value;
}

std::optional<Elf64_Shdr> section(std::span<const std::byte> image, const Elf64_Ehdr& header,
                                  std::size_t index) {
  if (index >= header.e_shnum)
    return std::nullopt;
  return read_at<Elf64_Shdr>(image, header.e_shoff + index * sizeof(Elf64_Shdr));
}

std::string string_at(std::span<const std::byte> image, const Elf64_Shdr& strtab,
                      std::size_t offset) {
  if (offset >= strtab.sh_size || strtab.sh_offset + strtab.sh_size > image.size())
    return {};
  const char* begin = reinterpret_cast<const char*>(image.data() + strtab.sh_offset + offset);
  return std::string(begin, strnlen(begin, strtab.sh_size - offset));
}

void append_functions(std::span<const std::byte> image, const Elf64_Shdr& symtab,
                      const Elf64_Shdr& strtab, std::vector<std::string>& names) {
  const std::size_t count = symtab.sh_size / sizeof(Elf64_Sym);
  for (std::size_t i = 0; i < count; ++i) {
    auto symbol = read_at<Elf64_Sym>(image, symtab.sh_offset + i * sizeof(Elf64_Sym));
    if (!symbol)
      return;
    if (ELF64_ST_TYPE(symbol->st_info) != STT_FUNC)
      continue;
    std::string name = string_at(image, strtab, symbol->st_name);
    if (!name.empty())
      names.push_back(std::move(name));
  }
}

} // namespace

std::vector<std::string> cubin_function_names(std::span<const std::byte> image) {
  std::vector<std::string> names;
  auto header = read_at<Elf64_Ehdr>(image, 0);
  if (!header || std::memcmp(header->e_ident, ELFMAG, SELFMAG) != 0 ||
      header->e_ident[EI_CLASS] != ELFCLASS64 || header->e_shentsize != sizeof(Elf64_Shdr))
    return names;
  for (std::size_t i = 0; i < header->e_shnum; ++i) {
    auto symtab = section(image, *header, i);
    if (!symtab || symtab->sh_type != SHT_SYMTAB)
      continue;
    auto strtab = section(image, *header, symtab->sh_link);
    if (strtab)
      append_functions(image, *symtab, *strtab, names);
  }
  return names;
}

} // namespace ptxbench::measure
