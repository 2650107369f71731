#include "compile/triton_gate.hpp"

#include "util/fs.hpp"
#include "util/json_reader.hpp"
#include "util/paths.hpp"
#include "util/temp_folder.hpp"

#include <algorithm>
#include <array>
#include <cstdlib>
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <system_error>

namespace ptxbench::compile {
namespace {

// `python3 -I -c` runs this with the package root as its first argument: isolated mode ignores
// PYTHONPATH and the user's site folder, so the gate imports only the tree's own package.
constexpr std::string_view kGateMain = "import sys; sys.path.insert(0, sys.argv.pop(1)); "
                                       "from ptxbench_triton.gate import main; sys.exit(main())";

constexpr std::size_t kMaxQuoteChars = 160;

std::string quote_line(std::string_view source, std::size_t line) {
  if (line == 0)
    return {};
  std::size_t begin = 0;
  for (std::size_t n = 1; n < line && begin != std::string_view::npos; ++n) {
    begin = source.find('\n', begin);
    if (begin != std::string_view::npos)
      ++begin;
  }
  if (begin == std::string_view::npos || begin > source.size())
    return {};
  std::string_view text = source.substr(begin, source.find('\n', begin) - begin);
  std::size_t first = text.find_first_not_of(" \t");
  if (first == std::string_view::npos)
    return {};
  text = text.substr(first, text.find_last_not_of(" \t\r") - first + 1);
  return text.size() > kMaxQuoteChars ? std::string(text.substr(0, kMaxQuoteChars)) + "..."
                                      : std::string(text);
}

util::Error bad_output(std::string_view what) {
  return util::make_error(util::ErrorKind::subprocess,
                          fmt::format("the Triton gate answered {}", what));
}

} // namespace

bool triton_library_rule(std::string_view rule) {
  static constexpr std::array<std::string_view, 10> kLibraryRules{
      "cutlass_import", "torch_alias",    "from_torch_import", "rebinds_module", "matmul_operator",
      "dynamic_import", "dynamic_access", "getattr_torch",     "torch_call",     "banned_method"};
  return std::find(kLibraryRules.begin(), kLibraryRules.end(), rule) != kLibraryRules.end();
}

std::string render_text(const TritonGateReport& report) {
  std::string out;
  for (const auto& f : report.findings) {
    if (f.line == 0)
      out += fmt::format("{} [{}]\n", f.message, f.rule);
    else if (f.quote.empty())
      out += fmt::format("line {}: {} [{}]\n", f.line, f.message, f.rule);
    else
      out += fmt::format("line {}: `{}`: {} [{}]\n", f.line, f.quote, f.message, f.rule);
  }
  return out;
}

util::Expected<TritonGateReport> parse_gate_output(std::string_view json, std::string_view source) {
  const util::Json parsed = util::Json::parse(json, nullptr, false);
  if (parsed.is_discarded())
    return bad_output("with something that is not its JSON");
  util::JsonReader in("gate.py output");
  const util::Json* findings =
      in.expect_object(parsed, "$") ? in.array_member(parsed, "$", "findings") : nullptr;
  TritonGateReport report;
  for (std::size_t i = 0; findings && in.ok() && i < findings->size(); ++i) {
    const util::Json& item = (*findings)[i];
    const std::string path = util::index_path("$.findings", i);
    if (!in.expect_object(item, path))
      break;
    TritonFinding finding;
    finding.rule = in.string(item, path, "rule", util::Emptiness::allowed);
    finding.message = in.string(item, path, "message", util::Emptiness::allowed);
    finding.line = in.unsigned_integer(item, path, "line");
    finding.col = in.optional_unsigned(item, path, "col").value_or(finding.col);
    finding.quote = quote_line(source, finding.line);
    report.findings.push_back(std::move(finding));
  }
  if (!in.ok())
    return bad_output("with a malformed finding: " + in.finish(0).error().message);
  return report;
}

TritonGate::TritonGate(util::ProcessRunner& runner, std::filesystem::path python,
                       std::filesystem::path package_root)
    : m_runner(runner), m_python(std::move(python)),
      m_package_root(package_root.empty() ? util::data_root() / "python"
                                          : std::move(package_root)) {}

util::Expected<TritonGateReport> TritonGate::check(std::string_view source,
                                                   const TritonSignature& signature) const {
  PTXBENCH_TRY_ASSIGN(auto scratch, util::TempFolder::make("ptxbench-gate", "the Triton gate"));
  const std::filesystem::path kernel = scratch.path() / "kernel.py";
  PTXBENCH_TRY(util::write_file_atomic(kernel, source));
  return check_file(kernel, source, signature);
}

util::Expected<TritonGateReport> TritonGate::check_file(const std::filesystem::path& kernel,
                                                        std::string_view source,
                                                        const TritonSignature& signature) const {
  util::ProcessOptions options;
  options.timeout = std::chrono::seconds(30);
  PTXBENCH_TRY_ASSIGN(auto result,
                      m_runner.run({m_python.string(), "-I", "-B", "-c", std::string(kGateMain),
                                    m_package_root.string(), kernel.string(), "--params",
                                    fmt::format("{}", fmt::join(signature.names(), ","))},
                                   options));
  if (!result.succeeded())
    return util::make_error(util::ErrorKind::subprocess,
                            fmt::format("the Triton gate ({} -m ptxbench_triton.gate) failed{}: {}",
                                        m_python.string(), result.timed_out ? " (timed out)" : "",
                                        result.err));
  return parse_gate_output(result.out, source);
}

} // namespace ptxbench::compile
