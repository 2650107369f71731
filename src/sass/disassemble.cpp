#include "sass/disassemble.hpp"

#include "sass/families.hpp"
#include "util/fs.hpp"
#include "util/hash.hpp"
#include "util/paths.hpp"
#include "util/strings.hpp"
#include "util/temp_folder.hpp"

#include <algorithm>
#include <cstdlib>
#include <cxxabi.h>
#include <memory>
#include <optional>
#include <sstream>
#include <unistd.h>

namespace ptxbench::sass {
namespace {

bool is_hex(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

bool is_opcode_char(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '.';
}

std::string_view next_token(std::string_view& rest) {
  rest = util::trim(rest);
  std::size_t end = 0;
  while (end < rest.size() && rest[end] != ' ' && rest[end] != '\t' && rest[end] != ';')
    ++end;
  std::string_view token = rest.substr(0, end);
  rest.remove_prefix(end);
  return token;
}

// "/*0110*/ <rest>": the address, with `line` advanced past it; nullopt for any other line
// (including the encoding lines "/* 0x... */").
std::optional<std::uint32_t> take_address(std::string_view& line) {
  if (!line.starts_with("/*"))
    return std::nullopt;
  std::size_t end = 2;
  while (end < line.size() && is_hex(line[end]))
    ++end;
  if (end == 2 || line.substr(end, 2) != "*/")
    return std::nullopt;
  const std::string digits(line.substr(2, end - 2));
  line.remove_prefix(end + 2);
  return static_cast<std::uint32_t>(std::strtoul(digits.c_str(), nullptr, 16));
}

std::optional<Instruction> parse_instruction(std::string_view line) {
  const std::optional<std::uint32_t> address = take_address(line);
  if (!address)
    return std::nullopt;
  Instruction insn;
  insn.address = *address;
  std::string_view token = next_token(line);
  if (token.starts_with("@")) {
    insn.predicate = std::string(token);
    token = next_token(line);
  }
  if (token.empty() || token.front() < 'A' || token.front() > 'Z')
    return std::nullopt;
  for (char c : token) {
    if (!is_opcode_char(c))
      return std::nullopt;
  }
  insn.opcode = std::string(token);
  insn.root = std::string(root_opcode(token));
  return insn;
}

// Applies one non-instruction line (arch or function header) to the parse state.
void apply_header(std::string_view line, std::string& arch, Disassembly& out) {
  constexpr std::string_view kCodeFor = "code for ";
  constexpr std::string_view kFunction = "Function : ";
  if (line.starts_with(kCodeFor)) {
    arch = std::string(util::trim(line.substr(kCodeFor.size())));
    if (std::find(out.arches.begin(), out.arches.end(), arch) == out.arches.end())
      out.arches.push_back(arch);
  } else if (line.starts_with(kFunction)) {
    const std::string name(util::trim(line.substr(kFunction.size())));
    out.functions.push_back(Function{name, demangle(name), arch, {}});
  }
}

bool is_executable(const std::filesystem::path& path) {
  return !path.empty() && std::filesystem::is_regular_file(path) &&
         ::access(path.c_str(), X_OK) == 0;
}

std::filesystem::path env_path(const char* name) {
  const char* value = std::getenv(name);
  return value != nullptr ? std::filesystem::path(value) : std::filesystem::path();
}

} // namespace

Disassembly parse_cuobjdump_sass(std::string_view text) {
  Disassembly out;
  std::string arch;
  for (const std::string& raw : util::split_lines(text)) {
    const std::string_view line = util::trim(raw);
    if (std::optional<Instruction> insn = parse_instruction(line)) {
      if (!out.functions.empty())
        out.functions.back().instructions.push_back(std::move(*insn));
    } else {
      apply_header(line, arch, out);
    }
  }
  return out;
}

std::string demangle(std::string_view mangled) {
  const std::string name(mangled);
  int status = 0;
  std::unique_ptr<char, decltype(&std::free)> text(
      abi::__cxa_demangle(name.c_str(), nullptr, nullptr, &status), &std::free);
  return status == 0 && text ? std::string(text.get()) : name;
}

ToolSearch ToolSearch::from_environment() {
  ToolSearch search;
  search.env_override = env_path("PTXBENCH_CUOBJDUMP");
  if (const std::filesystem::path nvcc = util::find_on_path("nvcc"); !nvcc.empty())
    search.nvcc_dir = nvcc.parent_path();
  std::stringstream dirs(env_path("PATH").string());
  for (std::string dir; std::getline(dirs, dir, ':');) {
    if (!dir.empty())
      search.path_dirs.emplace_back(dir);
  }
  search.deps_bin = util::data_root() / ".deps" / "nvidia" / "cu13" / "bin";
  return search;
}

util::Expected<std::filesystem::path> locate_cuobjdump(const ToolSearch& search) {
  if (!search.env_override.empty()) {
    if (is_executable(search.env_override))
      return search.env_override;
    return util::make_error(util::ErrorKind::not_found,
                            "PTXBENCH_CUOBJDUMP=" + search.env_override.string() +
                                " is not an executable file");
  }
  std::vector<std::filesystem::path> candidates;
  if (!search.nvcc_dir.empty())
    candidates.push_back(search.nvcc_dir / "cuobjdump");
  for (const std::filesystem::path& dir : search.path_dirs)
    candidates.push_back(dir / "cuobjdump");
  if (!search.deps_bin.empty())
    candidates.push_back(search.deps_bin / "cuobjdump");
  std::string searched;
  for (const std::filesystem::path& candidate : candidates) {
    if (is_executable(candidate))
      return candidate;
    searched += "\n  " + candidate.string();
  }
  return util::make_error(
      util::ErrorKind::not_found,
      "cuobjdump not found (set PTXBENCH_CUOBJDUMP, or run scripts/setup.sh to install it into "
      ".deps/nvidia/cu13/bin); searched: <dir of nvcc>, $PATH, .deps:" +
          (searched.empty() ? std::string("\n  (no candidate folders)") : searched));
}

Disassembler::Disassembler(util::ProcessRunner& runner, std::filesystem::path cuobjdump,
                           std::chrono::milliseconds timeout, std::filesystem::path cache_dir)
    : m_runner(runner), m_cuobjdump(std::move(cuobjdump)), m_timeout(timeout),
      m_cache_dir(std::move(cache_dir)) {}

util::Expected<std::string> Disassembler::dump(const std::filesystem::path& binary) const {
  util::ProcessOptions options;
  options.timeout = m_timeout;
  PTXBENCH_TRY_ASSIGN(
      util::ProcessResult result,
      m_runner.run({m_cuobjdump.string(), "--dump-sass", binary.string()}, options));
  if (result.timed_out)
    return util::make_error(util::ErrorKind::timeout, "cuobjdump timed out on " + binary.string());
  if (result.err.find("does not contain device code") != std::string::npos)
    return std::string();
  if (!result.succeeded())
    return util::make_error(util::ErrorKind::subprocess,
                            "cuobjdump --dump-sass " + binary.string() +
                                " failed: " + util::head_lines(result.err, 20));
  return std::move(result.out);
}

util::Expected<std::vector<std::string>>
Disassembler::cubin_hashes(const std::filesystem::path& binary) const {
  PTXBENCH_TRY_ASSIGN(
      auto folder, util::TempFolder::make("ptxbench-cubins", "the cubins of " + binary.string()));
  util::ProcessOptions options;
  options.timeout = m_timeout;
  options.working_dir = folder.path();
  PTXBENCH_TRY_ASSIGN(auto result, m_runner.run({m_cuobjdump.string(), "-xelf", "all",
                                                 std::filesystem::absolute(binary).string()},
                                                options));
  if (!result.succeeded())
    return util::make_error(util::ErrorKind::subprocess,
                            "cuobjdump -xelf all " + binary.string() +
                                " failed: " + util::head_lines(result.err, 20));
  std::vector<std::string> hashes;
  for (const auto& entry : std::filesystem::directory_iterator(folder.path())) {
    if (entry.path().extension() != ".cubin")
      continue;
    PTXBENCH_TRY_ASSIGN(auto image, util::read_file(entry.path()));
    hashes.push_back(util::sha256_hex(image));
  }
  std::sort(hashes.begin(), hashes.end());
  return hashes;
}

util::Expected<Disassembly> Disassembler::disassemble(const std::filesystem::path& binary) const {
  if (!std::filesystem::is_regular_file(binary))
    return util::make_error(util::ErrorKind::not_found, "no such binary: " + binary.string());
  if (m_cache_dir.empty()) {
    PTXBENCH_TRY_ASSIGN(auto text, dump(binary));
    return parse_cuobjdump_sass(text);
  }
  PTXBENCH_TRY_ASSIGN(auto content, util::read_file(binary));
  std::error_code ec;
  // The key: what was disassembled and which cuobjdump build did it.
  std::string key =
      util::sha256_hex(util::sha256_hex(content) + "\n" + m_cuobjdump.string() + "\n" +
                       std::to_string(std::filesystem::file_size(m_cuobjdump, ec)));
  std::filesystem::path cached = m_cache_dir / (key + ".sass");
  if (auto hit = util::read_file(cached))
    return parse_cuobjdump_sass(*hit);
  PTXBENCH_TRY_ASSIGN(auto text, dump(binary));
  (void)util::write_file_atomic(cached, text); // a cache that cannot be written only costs time
  return parse_cuobjdump_sass(text);
}

} // namespace ptxbench::sass
