// The static gate for Triton candidates: Python's own parser (python/ptxbench_triton/gate.py,
// run as a `python3` subprocess) applies the original's rules (no CUTLASS, no torch compute
// calls, an `@triton.jit` kernel, `run` with the generated parameters, no import tricks) and
// reports findings with line numbers; this side quotes each offending line for the model.
#pragma once

#include "compile/triton_abi.hpp"
#include "util/error.hpp"
#include "util/subprocess.hpp"

#include <cstddef>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace ptxbench::compile {

struct TritonFinding {
  std::string rule;     // "torch_call", "missing_run"... (gate.py's names)
  std::size_t line = 0; // 1-based; 0 when the finding is about the whole file
  std::size_t col = 0;  // 1-based; 0 when unknown
  std::string message;
  std::string quote; // the offending source line, trimmed; empty for line 0
};

struct TritonGateReport {
  std::vector<TritonFinding> findings; // in line order
  bool ok() const { return findings.empty(); }
};

// Whether a gate rule is against other libraries or torch compute (banned_library), rather than
// the file's syntax or form (compile).
bool triton_library_rule(std::string_view rule);

// "line 12: `torch.matmul(A, B)`: no torch calls except ..." one finding a line.
std::string render_text(const TritonGateReport& report);

class TritonGate {
public:
  // `python` is the interpreter; `package_root` the folder holding ptxbench_triton/
  // (default: <data root>/python).
  explicit TritonGate(util::ProcessRunner& runner, std::filesystem::path python = "python3",
                      std::filesystem::path package_root = {});

  // Findings for `source` against `signature`; an Error (subprocess) only when the gate
  // itself could not run or answered with something that is not its JSON.
  util::Expected<TritonGateReport> check(std::string_view source,
                                         const TritonSignature& signature) const;
  // The same for the file `kernel` already holding `source` (an evaluation's work folder).
  util::Expected<TritonGateReport> check_file(const std::filesystem::path& kernel,
                                              std::string_view source,
                                              const TritonSignature& signature) const;

private:
  util::ProcessRunner& m_runner;
  std::filesystem::path m_python;
  std::filesystem::path m_package_root;
};

// The findings of gate.py's JSON output, each with its line of `source` quoted.
util::Expected<TritonGateReport> parse_gate_output(std::string_view json, std::string_view source);

} // namespace ptxbench::compile
