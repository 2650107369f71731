// The static SASS report of a Triton candidate for `ptxbench check kernel.py`: the cubins of its
// ahead-of-time specialisation (compile/triton_aot.hpp, for the problem's default workload)
// scanned as one binary with the same opcode families and verdict rule as a .cu candidate's
// (sass/report.hpp). The report names itself the AOT specialisation: the evaluated call's own
// cubins are scanned by the GPU evaluator.
#pragma once

#include "compile/nvcc.hpp"
#include "compile/triton_aot.hpp"
#include "sass/disassemble.hpp"
#include "sass/report.hpp"
#include "suite/problem.hpp"
#include "util/error.hpp"

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ptxbench::frontend {

inline constexpr std::string_view kAotCaveat =
    "AOT specialisation, not the evaluated call: the cubins Triton builds for one call of `run` "
    "on the default workload (an autotuned kernel: its first configuration), compiled here "
    "without a GPU; the GPU evaluator scans the cubins of the call it evaluates";

struct TritonSassReport {
  compile::Arch arch = compile::Arch::sm_90a;
  compile::TritonAotResult aot;
  std::optional<sass::StaticReport> sass; // set when aot.outcome is ok

  std::optional<sass::Verdict> verdict() const;
};

// `run`'s arguments for the problem's default workload, in signature order: inputs, outputs,
// variable axes; a scalar input takes the workload's value (1 when the workload has none).
std::vector<compile::TritonAotArg> triton_aot_args(const suite::Problem& problem);

// An Error only when no report exists (Triton missing, aot.py or cuobjdump failing); a kernel
// that does not compile or a `run` that cannot be specialised is a report.
util::Expected<TritonSassReport> triton_sass_report(std::string_view source,
                                                    const suite::Problem& problem,
                                                    compile::Arch arch,
                                                    const compile::TritonAotCompiler& compiler,
                                                    const sass::Disassembler& disassembler);

nlohmann::ordered_json to_json(const TritonSassReport& report);
std::string render_text(const TritonSassReport& report);

} // namespace ptxbench::frontend
