#include "cli/tools.hpp"

#include "util/fs.hpp"
#include "util/paths.hpp"
#include "util/terminal.hpp"

#include <fmt/core.h>

namespace ptxbench::cli {
namespace {

// Above this share of non-text bytes (util::non_text_fraction) a candidate is refused as binary.
constexpr double kMaxNonTextFraction = 0.3;

} // namespace

util::Expected<const suite::Suite*> Toolchain::suite() {
  if (!m_suite) {
    PTXBENCH_TRY_ASSIGN(auto loaded, suite::Suite::load_default());
    m_suite = std::move(loaded);
  }
  return &*m_suite;
}

util::Expected<const suite::Problem*> Toolchain::problem(std::string_view name) {
  PTXBENCH_TRY_ASSIGN(auto loaded, suite());
  return loaded->find(name);
}

util::Expected<const sass::Disassembler*> Toolchain::disassembler() {
  if (!m_disassembler) {
    PTXBENCH_TRY_ASSIGN(auto cuobjdump,
                        sass::locate_cuobjdump(sass::ToolSearch::from_environment()));
    m_disassembler = std::make_unique<sass::Disassembler>(
        m_runner, cuobjdump, std::chrono::seconds(120), util::cache_root() / "sass");
  }
  return m_disassembler.get();
}

util::Expected<exec::Checker*> Toolchain::checker() {
  if (!m_checker) {
    PTXBENCH_TRY_ASSIGN(auto disassembler, this->disassembler());
    m_compiler = std::make_unique<compile::NvccCompiler>(m_runner);
    m_checker = std::make_unique<exec::Checker>(*m_compiler, *disassembler);
  }
  return m_checker.get();
}

util::Expected<std::string> read_candidate(const std::filesystem::path& path) {
  std::error_code error;
  if (std::filesystem::is_directory(path, error))
    return util::make_error(util::ErrorKind::invalid_input,
                            path.string() + " is a folder; give the candidate's .cu file");
  PTXBENCH_TRY_ASSIGN(auto text, util::read_file(path));
  if (text.find('\0') != std::string::npos)
    return util::make_error(util::ErrorKind::invalid_input,
                            path.string() + " is not source text (it holds NUL bytes); give the "
                                            "candidate's .cu file");
  // A stray Latin-1 byte in a literal or comment is left to nvcc, which takes it; a file that is
  // mostly bytes no source holds is a binary (an archive, a cubin without NULs, random data).
  if (const double fraction = util::non_text_fraction(text); fraction > kMaxNonTextFraction)
    return util::make_error(
        util::ErrorKind::invalid_input,
        fmt::format("{} is not source text ({:.0f} % of its bytes are control characters or not "
                    "UTF-8); give the candidate's .cu file",
                    path.string(), 100.0 * fraction));
  return text;
}

ExitCode report_error(std::string_view command, const util::Error& error) {
  fmt::print(stderr, "ptxbench {}: {}\n", command, error.message);
  switch (error.kind) {
  case util::ErrorKind::invalid_input:
  case util::ErrorKind::not_found:
    return ExitCode::usage;
  case util::ErrorKind::unsupported:
    return ExitCode::needs_gpu;
  default:
    return ExitCode::failure;
  }
}

} // namespace ptxbench::cli
