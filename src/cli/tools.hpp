// The real implementations the commands are built from (process runner, nvcc, cuobjdump,
// suite), made once per command, plus the one way commands print an error.
#pragma once

#include "cli/command.hpp"
#include "compile/nvcc.hpp"
#include "exec/check.hpp"
#include "sass/disassemble.hpp"
#include "suite/suite.hpp"
#include "util/error.hpp"
#include "util/subprocess.hpp"

#include <filesystem>
#include <memory>
#include <optional>
#include <string_view>

namespace ptxbench::cli {

class Toolchain {
public:
  util::Expected<const suite::Suite*> suite();
  util::Expected<const suite::Problem*> problem(std::string_view name);
  util::Expected<exec::Checker*> checker();
  util::Expected<const sass::Disassembler*> disassembler();
  util::ProcessRunner& runner() { return m_runner; }

private:
  util::PosixProcessRunner m_runner;
  std::optional<suite::Suite> m_suite;
  std::unique_ptr<compile::NvccCompiler> m_compiler;
  std::unique_ptr<sass::Disassembler> m_disassembler;
  std::unique_ptr<exec::Checker> m_checker;
};

// The text of a candidate file: invalid_input for a folder, or for a file that is not source
// text (a NUL byte: an object file, an archive), which would otherwise be compiled as an empty
// or garbled candidate.
util::Expected<std::string> read_candidate(const std::filesystem::path& path);

// Prints "ptxbench <command>: <message>" to stderr and maps the error kind to an exit code.
ExitCode report_error(std::string_view command, const util::Error& error);

} // namespace ptxbench::cli
