// `ptxbench check`: everything about a candidate that needs no GPU, in the order the evaluator
// runs it — ABI signature of the problem, banned-library gate, nvcc build (with ptxas resource
// use), and the static SASS report of the exact binary built. Each stage runs only when the one
// before it succeeded; every stage is a timed phase.
#pragma once

#include "compile/abi.hpp"
#include "compile/gate.hpp"
#include "compile/nvcc.hpp"
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
  banned_library = 2, // rejected by the gate; nothing compiled
  compile_error = 3,  // nvcc or the link failed
};

std::string_view to_string(CheckOutcome outcome);

struct CheckReport {
  std::string problem;
  compile::Arch arch = compile::Arch::sm_90a;
  std::string signature;
  CheckOutcome outcome = CheckOutcome::ok;
  std::optional<compile::BannedUse> banned;
  std::optional<compile::CompileResult> build;
  std::optional<sass::StaticReport> sass;
  std::vector<util::Phase> phases;

  // The static verdict for the built arch; nullopt when nothing was built.
  std::optional<sass::Verdict> verdict() const;
};

class Checker {
public:
  Checker(compile::Compiler& compiler, const sass::Disassembler& disassembler)
      : m_compiler(compiler), m_disassembler(disassembler) {}

  // Errors only when no verdict about the candidate exists (timeout, missing tool, bad
  // definition); a banned library or a compile error is a report.
  util::Expected<CheckReport> check(const std::string& source, const suite::Problem& problem,
                                    compile::Arch arch) const;

private:
  compile::Compiler& m_compiler;
  const sass::Disassembler& m_disassembler;
};

nlohmann::ordered_json to_json(const CheckReport& report);
std::string render_text(const CheckReport& report);

} // namespace ptxbench::exec
