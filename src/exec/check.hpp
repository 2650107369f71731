// `ptxbench check` and the first phase of every evaluation: a candidate's static check, run by
// its language's frontend (frontend/frontend.hpp, Frontend::check) with the tools this Checker
// holds — nvcc with its cache, cuobjdump, the import rule's setting and a process runner for
// the Python tools. The report is frontend/check_report.hpp's.
#pragma once

#include "compile/language.hpp"
#include "compile/nvcc.hpp"
#include "frontend/check_report.hpp"
#include "frontend/frontend.hpp"
#include "sass/disassemble.hpp"
#include "suite/problem.hpp"
#include "util/error.hpp"
#include "util/subprocess.hpp"

#include <filesystem>
#include <string>

namespace ptxbench::exec {

using frontend::CheckOutcome;
using frontend::CheckReport;
using frontend::ImportCheck;
using frontend::render_text;
using frontend::to_json;
using frontend::to_string;

class Checker {
public:
  Checker(compile::Compiler& compiler, const sass::Disassembler& disassembler,
          ImportCheck imports = ImportCheck::enforce)
      : m_compiler(compiler), m_disassembler(disassembler), m_imports(imports) {}

  // The check of `language`'s candidate: errors only when no verdict about the candidate exists
  // (timeout, missing tool, bad definition); a banned library or a compile error is a report.
  util::Expected<frontend::Checked> check(const frontend::Frontend& language,
                                          const std::string& source, const suite::Problem& problem,
                                          compile::Arch arch) const;
  // The report of a CUDA candidate's check (the language most callers check).
  util::Expected<CheckReport> check(const std::string& source, const suite::Problem& problem,
                                    compile::Arch arch) const;

  // The tools a check uses, with `runner`, `python` and `python_root` for the Python tools.
  frontend::CheckTools tools(util::ProcessRunner& runner, std::filesystem::path python = "python3",
                             std::filesystem::path python_root = {}) const;
  // The disassembler the static report uses (a Triton evaluation's cubins go through it too).
  const sass::Disassembler& disassembler() const { return m_disassembler; }

private:
  compile::Compiler& m_compiler;
  const sass::Disassembler& m_disassembler;
  ImportCheck m_imports;
  mutable util::PosixProcessRunner m_runner; // the Python tools of checks outside an evaluation
};

} // namespace ptxbench::exec
