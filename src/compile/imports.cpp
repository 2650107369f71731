// Reading a kernel.so's imports from its ELF file, and the import rule.
//
// Problem: the guarantee that a candidate computed its result with its own kernels must not
// depend on how the source spells things. What a shared object can reach at run time is fixed
// when it is linked: the libraries in its DT_NEEDED entries and the undefined symbols of its
// dynamic symbol table (.dynsym), which the dynamic linker binds when it is loaded.
//
// Approach: parse the file with the structures of <elf.h> — section headers, the SHT_DYNSYM
// table and its linked string table, the SHT_DYNAMIC section and its string table — checking
// every offset and size against the file before it is read, so a malformed or hostile file is
// an error, never a crash. Then apply the rule: needed libraries only from an allow-list (the
// CUDA runtime and driver, the C and C++ runtimes that nvcc's host compiler links), and no
// undefined symbol of the loader, of CUDA's run-time code loading, of process control or of a
// vendor library.
//
// Invariants: the first forbidden import in a fixed order (needed libraries, then symbols in
// table order) is reported, so the same binary always gets the same message.
#include "compile/imports.hpp"

#include "util/enum_table.hpp"
#include "util/fs.hpp"

#include <array>
#include <cstring>
#include <elf.h>
#include <fmt/format.h>

namespace ptxbench::compile {
namespace {

util::Error malformed(std::string_view what) {
  return util::make_error(util::ErrorKind::invalid_input,
                          fmt::format("not a readable ELF64 shared object: {}", what));
}

// Bounds-checked access to the bytes of the file.
class Image {
public:
  explicit Image(std::span<const std::byte> bytes) : m_bytes(bytes) {}

  bool holds(std::uint64_t offset, std::uint64_t size) const {
    return offset <= m_bytes.size() && size <= m_bytes.size() - offset;
  }
  template <typename T> bool read(std::uint64_t offset, T& out) const {
    if (!holds(offset, sizeof(T)))
      return false;
    std::memcpy(&out, m_bytes.data() + offset, sizeof(T));
    return true;
  }
  // The NUL-terminated string at `offset` of the string table [table, table + size).
  std::optional<std::string> string_at(std::uint64_t table, std::uint64_t size,
                                       std::uint64_t offset) const {
    if (!holds(table, size) || offset >= size)
      return std::nullopt;
    const char* begin = reinterpret_cast<const char*>(m_bytes.data() + table + offset);
    const void* end = std::memchr(begin, '\0', size - offset);
    if (end == nullptr)
      return std::nullopt;
    return std::string(begin, static_cast<const char*>(end));
  }

private:
  std::span<const std::byte> m_bytes;
};

util::Expected<std::vector<Elf64_Shdr>> section_headers(const Image& image) {
  Elf64_Ehdr header{};
  if (!image.read(0, header))
    return malformed("shorter than an ELF header");
  if (std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0)
    return malformed("no ELF magic");
  if (header.e_ident[EI_CLASS] != ELFCLASS64 || header.e_ident[EI_DATA] != ELFDATA2LSB)
    return malformed("not 64-bit little-endian");
  if (header.e_type != ET_DYN)
    return malformed("not a shared object");
  if (header.e_shentsize != sizeof(Elf64_Shdr) || header.e_shnum == 0)
    return malformed("no section headers");
  std::vector<Elf64_Shdr> sections(header.e_shnum);
  for (std::size_t i = 0; i < sections.size(); ++i)
    if (!image.read(header.e_shoff + i * sizeof(Elf64_Shdr), sections[i]))
      return malformed("section headers outside the file");
  return sections;
}

// The string table a section links to.
util::Expected<Elf64_Shdr> linked_strings(const std::vector<Elf64_Shdr>& sections,
                                          const Elf64_Shdr& section) {
  if (section.sh_link >= sections.size() || sections[section.sh_link].sh_type != SHT_STRTAB)
    return malformed("a table links to no string table");
  return sections[section.sh_link];
}

util::Status read_dynsym(const Image& image, const std::vector<Elf64_Shdr>& sections,
                         const Elf64_Shdr& table, BinaryImports& out) {
  PTXBENCH_TRY_ASSIGN(auto strings, linked_strings(sections, table));
  if (table.sh_entsize != sizeof(Elf64_Sym) || !image.holds(table.sh_offset, table.sh_size))
    return malformed("dynamic symbol table outside the file");
  for (std::uint64_t offset = 0; offset + sizeof(Elf64_Sym) <= table.sh_size;
       offset += sizeof(Elf64_Sym)) {
    Elf64_Sym symbol{};
    image.read(table.sh_offset + offset, symbol);
    if (symbol.st_shndx != SHN_UNDEF || symbol.st_name == 0)
      continue;
    auto name = image.string_at(strings.sh_offset, strings.sh_size, symbol.st_name);
    if (!name)
      return malformed("a symbol name outside its string table");
    out.undefined_symbols.push_back(std::move(*name));
  }
  return util::Ok{};
}

util::Status read_dynamic(const Image& image, const std::vector<Elf64_Shdr>& sections,
                          const Elf64_Shdr& dynamic, BinaryImports& out) {
  PTXBENCH_TRY_ASSIGN(auto strings, linked_strings(sections, dynamic));
  if (!image.holds(dynamic.sh_offset, dynamic.sh_size))
    return malformed("dynamic section outside the file");
  for (std::uint64_t offset = 0; offset + sizeof(Elf64_Dyn) <= dynamic.sh_size;
       offset += sizeof(Elf64_Dyn)) {
    Elf64_Dyn entry{};
    image.read(dynamic.sh_offset + offset, entry);
    if (entry.d_tag == DT_NULL)
      break;
    if (entry.d_tag != DT_NEEDED)
      continue;
    auto name = image.string_at(strings.sh_offset, strings.sh_size, entry.d_un.d_val);
    if (!name)
      return malformed("a needed library's name outside its string table");
    out.needed.push_back(std::move(*name));
  }
  return util::Ok{};
}

// Sonames a kernel.so may need: the CUDA runtime and driver, and what the host compiler links.
bool allowed_library(std::string_view soname) {
  constexpr std::array<std::string_view, 9> kAllowed{
      "libcudart.so.", "libcuda.so.",    "libstdc++.so.", "libm.so.",           "libgcc_s.so.",
      "libc.so.",      "libpthread.so.", "librt.so.",     "ld-linux-x86-64.so."};
  for (std::string_view prefix : kAllowed)
    if (soname.starts_with(prefix))
      return true;
  return false;
}

constexpr std::array<std::string_view, 14> kLoaderSymbols{
    "dlopen",       "dlmopen",       "dlsym",           "dlvsym",
    "dlinfo",       "dladdr1",       "dl_iterate_phdr", "__libc_dlopen_mode",
    "__libc_dlsym", "__libc_dlvsym", "_dl_open",        "_dl_sym",
    "_dl_vsym",     "__libc_dlclose"};

constexpr std::array<std::string_view, 20> kProcessSymbols{"system",
                                                           "popen",
                                                           "fork",
                                                           "vfork",
                                                           "execv",
                                                           "execve",
                                                           "execvp",
                                                           "execvpe",
                                                           "execl",
                                                           "execle",
                                                           "execlp",
                                                           "fexecve",
                                                           "posix_spawn",
                                                           "posix_spawnp",
                                                           "clone",
                                                           "clone3",
                                                           "ptrace",
                                                           "syscall",
                                                           "process_vm_writev",
                                                           "process_vm_readv"};

// A kernel.so prints to stdout and stderr (a log nobody parses) and needs nothing else of the
// file system: these reach the reply pipe (/proc/self/fd), the harness's files and caches,
// the child's own code (mprotect over CUPTI), the driver's device files (ioctl) or another
// process (kill).
constexpr std::array<std::string_view, 58> kFileSymbols{
    "open",          "open64",       "openat",   "openat64",   "creat",
    "creat64",       "fopen",        "fopen64",  "freopen",    "freopen64",
    "fdopen",        "opendir",      "dup",      "dup2",       "dup3",
    "fcntl",         "fcntl64",      "ioctl",    "write",      "writev",
    "pwrite",        "pwrite64",     "pwritev",  "pwritev2",   "send",
    "sendto",        "sendmsg",      "sendmmsg", "splice",     "vmsplice",
    "tee",           "mmap",         "mmap64",   "mremap",     "mprotect",
    "pkey_mprotect", "memfd_create", "unlink",   "unlinkat",   "rename",
    "renameat",      "renameat2",    "remove",   "truncate",   "ftruncate",
    "symlink",       "link",         "chmod",    "kill",       "killpg",
    "tgkill",        "tkill",        "sigqueue", "pidfd_open", "pidfd_send_signal",
    "prctl",         "seccomp",      "socket"};
// C++ file streams and std::filesystem, matched anywhere in the mangled name.
constexpr std::array<std::string_view, 5> kFileManglings{
    "basic_filebuf", "basic_ofstream", "basic_ifstream", "basic_fstream", "St10filesystem"};

// Prefixes of the vendor libraries' symbols (and of the JIT compilers).
constexpr std::array<std::string_view, 12> kVendorPrefixes{
    "cublas",   "cudnn",    "nvrtc", "nvJitLink",     "cufft",    "curand",
    "cusparse", "cusolver", "nccl",  "nvPTXCompiler", "cutensor", "cuDLA"};

template <std::size_t N>
bool listed(const std::array<std::string_view, N>& list, std::string_view name) {
  for (std::string_view entry : list)
    if (entry == name)
      return true;
  return false;
}

std::optional<ImportRule> rule_for_symbol(std::string_view name) {
  if (listed(kLoaderSymbols, name))
    return ImportRule::dynamic_loading;
  if (listed(kProcessSymbols, name))
    return ImportRule::process;
  if (loads_gpu_code(name))
    return ImportRule::module_loading;
  if (listed(kFileSymbols, name))
    return ImportRule::files;
  for (std::string_view mangling : kFileManglings)
    if (name.find(mangling) != std::string_view::npos)
      return ImportRule::files;
  for (std::string_view prefix : kVendorPrefixes)
    if (name.starts_with(prefix))
      return ImportRule::vendor_library;
  return std::nullopt;
}

// Each rule's name and the reason the feedback gives ({} is the soname or symbol).
struct ImportRuleInfo {
  ImportRule rule;
  std::string_view name;
  std::string_view why;
};

constexpr std::array kImportRules{
    ImportRuleInfo{ImportRule::library, "library",
                   "needs the shared library {}; a kernel.so may link only the CUDA runtime and "
                   "driver"},
    ImportRuleInfo{ImportRule::dynamic_loading, "dynamic_loading",
                   "imports `{}`: loading libraries or looking up symbols at run time is not "
                   "allowed"},
    ImportRuleInfo{ImportRule::module_loading, "module_loading",
                   "imports `{}`: loading or linking GPU code at run time, or reaching driver "
                   "functions by name, is not allowed"},
    ImportRuleInfo{ImportRule::process, "process",
                   "imports `{}`: starting programs, tracing processes and raw system calls are "
                   "not allowed"},
    ImportRuleInfo{ImportRule::vendor_library, "vendor_library",
                   "imports `{}` from a vendor library"},
    ImportRuleInfo{ImportRule::files, "files",
                   "imports `{}`: opening files, writing or duplicating file descriptors, "
                   "remapping memory and signalling processes are not allowed (print with "
                   "printf or std::cout)"},
};

consteval bool import_rules_complete() {
  for (std::size_t i = 0; i < kImportRules.size(); ++i)
    if (static_cast<std::size_t>(kImportRules[i].rule) != i + 1)
      return false;
  return true;
}
static_assert(import_rules_complete(), "kImportRules must list every ImportRule in value order");
static_assert(util::no_enumerator_after<ImportRule, kImportRules.size()>(),
              "kImportRules lacks a row for an enumerator after its last");

std::size_t index_of(ImportRule rule) {
  return static_cast<std::size_t>(rule) - 1;
}

} // namespace

util::Expected<BinaryImports> read_imports(std::span<const std::byte> elf) {
  const Image image(elf);
  PTXBENCH_TRY_ASSIGN(auto sections, section_headers(image));
  BinaryImports imports;
  bool has_dynsym = false;
  for (const Elf64_Shdr& section : sections) {
    if (section.sh_type == SHT_DYNSYM) {
      PTXBENCH_TRY(read_dynsym(image, sections, section, imports));
      has_dynsym = true;
    } else if (section.sh_type == SHT_DYNAMIC) {
      PTXBENCH_TRY(read_dynamic(image, sections, section, imports));
    }
  }
  if (!has_dynsym)
    return malformed("no dynamic symbol table");
  return imports;
}

util::Expected<BinaryImports> read_imports(const std::filesystem::path& file) {
  PTXBENCH_TRY_ASSIGN(auto bytes, util::read_file(file));
  auto imports = read_imports(std::as_bytes(std::span(bytes.data(), bytes.size())));
  if (!imports)
    return util::make_error(imports.error().kind,
                            fmt::format("{}: {}", file.string(), imports.error().message));
  return imports;
}

std::string_view to_string(ImportRule rule) {
  return kImportRules[index_of(rule)].name;
}

std::string ForbiddenImport::message() const {
  return "ERROR: banned-library rule: the built kernel.so " +
         fmt::format(fmt::runtime(kImportRules[index_of(rule)].why), name) +
         ". Your kernel must compute the result with its own kernels — cuBLAS, cuDNN, and other "
         "library shortcuts are not allowed.";
}

std::optional<ForbiddenImport> find_forbidden_import(const BinaryImports& imports) {
  for (const std::string& soname : imports.needed)
    if (!allowed_library(soname))
      return ForbiddenImport{ImportRule::library, soname};
  for (const std::string& symbol : imports.undefined_symbols)
    if (auto rule = rule_for_symbol(symbol))
      return ForbiddenImport{*rule, symbol};
  return std::nullopt;
}

} // namespace ptxbench::compile
