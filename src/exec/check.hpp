// `ptxbench check`: everything about a candidate that needs no GPU, in the order the evaluator
// runs it — ABI signature of the problem, banned-library gate, nvcc build (with ptxas resource
// use), the import rule on the built kernel.so, and the static SASS report of the exact binary
// built. Each stage runs only when the one
// before it succeeded; every stage is a timed phase.
#pragma once

#include "compile/abi.hpp"
#include "compile/gate.hpp"
#include "compile/imports.hpp"
#include "compile/language.hpp"
#include "compile/nvcc.hpp"
#include "compile/triton_gate.hpp"
#include "sass/disassemble.hpp"
#include "sass/report.hpp"
#include "suite/problem.hpp"
#include "util/error.hpp"
#include "util/phases.hpp"

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace ptxbench::exec {

// Persisted in JSON output.
enum class CheckOutcome : std::uint8_t {
  ok = 1,             // built; static report available
  banned_library = 2, // rejected by the source gate (nothing compiled) or, once built, by the
                      // import rule on kernel.so (compile/imports.hpp; never loaded)
  compile_error = 3,  // nvcc or the link failed
};

// Whether the Checker applies the import rule to the built kernel.so. Only tests that prove
// the run-time defences on their own turn it off (tests/unit/exec/evaluator_gpu.cpp).
enum class ImportCheck : std::uint8_t { enforce = 1, skip = 2 };

std::string_view to_string(CheckOutcome outcome);

struct CheckReport {
  std::string problem;
  compile::Arch arch = compile::Arch::sm_90a;
  compile::Language language = compile::Language::cuda;
  std::string signature;
  CheckOutcome outcome = CheckOutcome::ok;
  std::optional<compile::BannedUse> banned;          // the source gate's finding
  std::optional<compile::ForbiddenImport> forbidden; // the import rule's finding on kernel.so
  std::optional<compile::CompileResult> build;
  // A Triton candidate: the gate's report (triton_check.hpp); there is no build, and `sass` is
  // the report of the cubins Triton built in the evaluation's warm-up (exec/triton_cubins.hpp).
  std::optional<compile::TritonGateReport> triton_gate;
  std::optional<sass::StaticReport> sass;
  std::vector<util::Phase> phases;

  // The static verdict for the built arch; nullopt when nothing was built.
  std::optional<sass::Verdict> verdict() const;
  // The banned-library finding for the model: the gate's or the import rule's sentence; empty
  // unless outcome is banned_library.
  std::string banned_message() const;
};

class Checker {
public:
  Checker(compile::Compiler& compiler, const sass::Disassembler& disassembler,
          ImportCheck imports = ImportCheck::enforce)
      : m_compiler(compiler), m_disassembler(disassembler), m_imports(imports) {}

  // Errors only when no verdict about the candidate exists (timeout, missing tool, bad
  // definition); a banned library or a compile error is a report.
  util::Expected<CheckReport> check(const std::string& source, const suite::Problem& problem,
                                    compile::Arch arch) const;

private:
  compile::Compiler& m_compiler;
  const sass::Disassembler& m_disassembler;

public:
  // The disassembler the static report uses (a Triton evaluation's cubins go through it too).
  const sass::Disassembler& disassembler() const { return m_disassembler; }

private:
  ImportCheck m_imports;
};

nlohmann::ordered_json to_json(const CheckReport& report);
std::string render_text(const CheckReport& report);

} // namespace ptxbench::exec
