#include "compile/nvcc_log.hpp"

#include "compile/source_text.hpp"
#include "util/json_reader.hpp"
#include "util/strings.hpp"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <cxxabi.h>
#include <fmt/format.h>
#include <memory>

namespace ptxbench::compile {
namespace {

std::vector<std::string_view> lines_of(std::string_view text) {
  std::vector<std::string_view> lines;
  for (std::size_t start = 0; start < text.size();) {
    std::size_t end = std::min(text.find('\n', start), text.size());
    std::string_view line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r')
      line.remove_suffix(1);
    lines.push_back(line);
    start = end + 1;
  }
  return lines;
}

// The integer written just before `suffix` ("14 registers" -> 14), summed over every place
// `suffix` occurs (cmem appears once per bank).
std::int64_t number_before(std::string_view line, std::string_view suffix) {
  std::int64_t total = 0;
  for (std::size_t at = line.find(suffix); at != std::string_view::npos;
       at = line.find(suffix, at + 1)) {
    std::size_t start = at;
    while (start > 0 && line[start - 1] >= '0' && line[start - 1] <= '9')
      --start;
    std::int64_t value = 0;
    std::from_chars(line.data() + start, line.data() + at, value);
    total += value;
  }
  return total;
}

// The text between the first pair of single quotes after `marker`, or empty.
std::string_view quoted_after(std::string_view line, std::string_view marker, std::size_t nth = 0) {
  std::size_t at = line.find(marker);
  if (at == std::string_view::npos)
    return {};
  std::size_t open = at + marker.size();
  for (std::size_t i = 0; i <= nth; ++i) {
    open = line.find('\'', open);
    if (open == std::string_view::npos)
      return {};
    std::size_t close = line.find('\'', open + 1);
    if (close == std::string_view::npos)
      return {};
    if (i == nth)
      return line.substr(open + 1, close - open - 1);
    open = close + 1;
  }
  return {};
}

KernelResources* find_kernel(std::vector<KernelResources>& kernels, std::string_view name) {
  // Not std::views::reverse: clang-tidy 14 cannot parse libstdc++ 12's <ranges>.
  // NOLINTNEXTLINE(modernize-loop-convert)
  for (auto it = kernels.rbegin(); it != kernels.rend(); ++it)
    if (it->mangled_name == name)
      return &*it;
  return nullptr;
}

void apply_usage(KernelResources& kernel, std::string_view line) {
  kernel.registers = static_cast<int>(number_before(line, " registers"));
  kernel.barriers = static_cast<int>(number_before(line, " barriers"));
  kernel.smem_bytes = number_before(line, " bytes smem");
  kernel.cmem_bytes = number_before(line, " bytes cmem[");
}

void apply_frame(KernelResources& kernel, std::string_view line) {
  kernel.stack_frame_bytes = number_before(line, " bytes stack frame");
  kernel.spill_store_bytes = number_before(line, " bytes spill stores");
  kernel.spill_load_bytes = number_before(line, " bytes spill loads");
}

// ptxas names the PTX file it assembles: "ptxas /tmp/…/x.ptx, line 349; error   : message".
bool is_ptxas_located_error(std::string_view line) {
  return line.starts_with("ptxas ") &&
         (util::contains(line, "; error") || util::contains(line, "; fatal"));
}

bool is_error_line(std::string_view line) {
  if (util::contains(line, "errors detected in the compilation") ||
      util::contains(line, "error detected in the compilation") ||
      util::contains(line, "ld returned") ||
      util::contains(line, "Ptx assembly aborted due to errors"))
    return false;
  return is_ptxas_located_error(line) || util::contains(line, "): error") ||
         util::contains(line, ": error:") || util::contains(line, "catastrophic error") ||
         util::contains(line, "fatal error") || line.starts_with("ptxas error") ||
         line.starts_with("ptxas fatal") || line.starts_with("nvlink error") ||
         line.starts_with("nvlink fatal") || line.starts_with("nvcc error") ||
         line.starts_with("nvcc fatal") || util::contains(line, "undefined reference to") ||
         util::contains(line, "multiple definition of");
}

// Linker and assembler lines carry temporary file names; keep the part a reader can act on.
// A located ptxas error loses its file and line (a line of the generated PTX, not of the
// source) and reads like ptxas's other errors, so one message repeated over many PTX lines is
// listed once.
std::string clean_error(std::string_view line) {
  for (std::string_view marker : {"undefined reference to", "multiple definition of"})
    if (std::size_t at = line.find(marker); at != std::string_view::npos)
      return std::string(line.substr(at));
  if (is_ptxas_located_error(line)) {
    const std::size_t semicolon = line.find("; ");
    return "ptxas " + std::string(util::trim(line.substr(semicolon + 2)));
  }
  return std::string(line);
}

bool is_context_line(std::string_view line) {
  return !line.empty() && (line[0] == ' ' || line[0] == '\t') && !is_error_line(line);
}

} // namespace

std::string demangle(const std::string& mangled) {
  int status = 0;
  std::unique_ptr<char, decltype(&std::free)> name(
      abi::__cxa_demangle(mangled.c_str(), nullptr, nullptr, &status), &std::free);
  return status == 0 && name ? std::string(name.get()) : mangled;
}

std::vector<KernelResources> parse_ptxas_info(std::string_view log) {
  std::vector<KernelResources> kernels;
  KernelResources* current = nullptr;
  for (std::string_view line : lines_of(log)) {
    if (std::string_view name = quoted_after(line, "Compiling entry function"); !name.empty()) {
      KernelResources kernel;
      kernel.mangled_name = std::string(name);
      kernel.demangled_name = demangle(kernel.mangled_name);
      kernel.arch = std::string(quoted_after(line, "Compiling entry function", 1));
      kernels.push_back(std::move(kernel));
      current = &kernels.back();
    } else if (std::size_t at = line.find("Function properties for ");
               at != std::string_view::npos) {
      current = find_kernel(kernels, util::trim(line.substr(at + 24)));
    } else if (current != nullptr && util::contains(line, "bytes stack frame")) {
      apply_frame(*current, line);
    } else if (util::contains(line, "ptxas info") && util::contains(line, " registers") &&
               !kernels.empty()) {
      apply_usage(kernels.back(), line);
    }
  }
  return kernels;
}

std::vector<std::string> first_errors(std::string_view log, std::size_t max_errors) {
  std::vector<std::string> errors;
  std::vector<std::string_view> lines = lines_of(log);
  for (std::size_t i = 0; i < lines.size() && errors.size() < max_errors; ++i) {
    if (!is_error_line(lines[i]))
      continue;
    std::string entry = clean_error(lines[i]);
    for (std::size_t k = i + 1; k < lines.size() && k <= i + 3 && is_context_line(lines[k]); ++k)
      entry += "\n" + std::string(lines[k]);
    if (std::find(errors.begin(), errors.end(), entry) == errors.end())
      errors.push_back(std::move(entry));
  }
  return errors;
}

std::optional<std::string> run_link_diagnostic(std::string_view log,
                                               std::string_view expected_signature) {
  constexpr std::string_view kMarker = "undefined reference to `run(";
  std::size_t at = log.find(kMarker);
  if (at == std::string_view::npos)
    return std::nullopt;
  std::size_t start = at + kMarker.size() - 4;
  std::size_t end = log.find_first_of("'\n", start);
  std::string_view wanted = log.substr(start, end == std::string_view::npos ? end : end - start);
  return fmt::format(
      "Link error: the host function `run` is not defined with the expected signature. Define "
      "it exactly as\n    {};\nwith C++ linkage (no extern \"C\"), not static and not inside a "
      "namespace. The shim calls `{}` and the linker found no such function.",
      expected_signature, wanted);
}

nlohmann::json to_json(const std::vector<KernelResources>& kernels) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& k : kernels)
    out.push_back({{"mangled_name", k.mangled_name},
                   {"demangled_name", k.demangled_name},
                   {"arch", k.arch},
                   {"registers", k.registers},
                   {"barriers", k.barriers},
                   {"stack_frame_bytes", k.stack_frame_bytes},
                   {"spill_store_bytes", k.spill_store_bytes},
                   {"spill_load_bytes", k.spill_load_bytes},
                   {"smem_bytes", k.smem_bytes},
                   {"cmem_bytes", k.cmem_bytes}});
  return out;
}

util::Expected<std::vector<KernelResources>> kernels_from_json(const util::Json& json,
                                                               const std::string& origin) {
  constexpr auto kInt = util::IntegerRange::of<int>();
  constexpr auto kText = util::Emptiness::allowed;
  util::JsonReader in(origin);
  std::vector<KernelResources> kernels;
  if (!in.expect_array(json, "$"))
    return in.finish(std::move(kernels));
  for (std::size_t i = 0; in.ok() && i < json.size(); ++i) {
    const util::Json& k = json[i];
    const std::string path = util::index_path("$", i);
    if (!in.expect_object(k, path))
      break;
    kernels.push_back(
        {in.string(k, path, "mangled_name", kText), in.string(k, path, "demangled_name", kText),
         in.string(k, path, "arch", kText),
         static_cast<int>(in.integer(k, path, "registers", kInt)),
         static_cast<int>(in.integer(k, path, "barriers", kInt)),
         in.integer(k, path, "stack_frame_bytes"), in.integer(k, path, "spill_store_bytes"),
         in.integer(k, path, "spill_load_bytes"), in.integer(k, path, "smem_bytes"),
         in.integer(k, path, "cmem_bytes")});
  }
  return in.finish(std::move(kernels));
}

} // namespace ptxbench::compile
