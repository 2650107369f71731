// What a candidate's static check found (`ptxbench check`, and the first phase of every
// evaluation): the language's gate, the build where the language builds before the GPU step
// (with ptxas resource use), the import rule on what was built, and the static SASS report of
// the exact binary. Each language's check (Frontend::check) fills the parts it has; every
// stage is a timed phase.
#pragma once

#include "compile/abi.hpp"
#include "compile/gate.hpp"
#include "compile/imports.hpp"
#include "compile/language.hpp"
#include "compile/nvcc.hpp"
#include "compile/triton_gate.hpp"
#include "sass/report.hpp"
#include "util/error.hpp"
#include "util/phases.hpp"

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace ptxbench::frontend {

// Persisted in JSON output.
enum class CheckOutcome : std::uint8_t {
  ok = 1,             // built (or gated); static report available where the language builds
  banned_library = 2, // rejected by the source gate (nothing compiled) or, once built, by the
                      // import rule on kernel.so (compile/imports.hpp; never loaded)
  compile_error = 3,  // nvcc or the link failed, or the file's syntax or form is wrong
};

// Whether the CUDA check applies the import rule to the built kernel.so. Only tests that prove
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
  // A Triton candidate: the gate's report; there is no build, and `sass` is the report of the
  // cubins Triton built in the evaluation's warm-up (Candidate::warm_up_cubins).
  std::optional<compile::TritonGateReport> triton_gate;
  std::optional<sass::StaticReport> sass;
  std::vector<util::Phase> phases;

  // The static verdict for the built arch; nullopt when nothing was built.
  std::optional<sass::Verdict> verdict() const;
  // The banned-library finding for the model: the gate's or the import rule's sentence; empty
  // unless outcome is banned_library.
  std::string banned_message() const;
};

// "static verdict (sm_90a): target instructions present [...]"; empty without a verdict.
std::string verdict_text(const CheckReport& report);

class Frontend;

// The report with its language's part (Frontend::add_check_json, Frontend::check_text): that of
// `language`, or of the built-in frontend of report.language.
nlohmann::ordered_json to_json(const CheckReport& report, const Frontend& language);
std::string render_text(const CheckReport& report, const Frontend& language);
nlohmann::ordered_json to_json(const CheckReport& report);
std::string render_text(const CheckReport& report);

} // namespace ptxbench::frontend
