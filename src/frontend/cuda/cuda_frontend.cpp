#include "frontend/cuda/cuda_frontend.hpp"

#include "compile/abi.hpp"
#include "compile/gate.hpp"
#include "compile/imports.hpp"

#include <fmt/format.h>

namespace ptxbench::frontend {
namespace {

constexpr std::string_view kInstructions =
    R"(You are an expert CUDA engineer writing a high-performance kernel for one fixed problem.

Write ONE complete CUDA source file, in a single ```cuda code block, that defines the host
function `run` with exactly the signature below (extern "C++", no other entry point):
- destination-passing style: outputs are preallocated device buffers; write results into them
  and allocate nothing per call that outlives the call;
- launch all work on the given `stream` and do not synchronize the device;
- hand-written kernels only: cuBLAS, cuBLASLt, cuDNN, CUTLASS/CuTe and other kernel libraries
  are forbidden and rejected before compilation;
- use the target architecture's tensor-core instructions (inline PTX is welcome).
After each attempt you get the compiler, correctness, timing and instruction-verdict results;
answer with a complete, improved file each time.)";

// The code-generation flags of the real build (compile::nvcc_flags): the optimization level,
// the language standard and the -gencode pair, as the system prompt states them.
std::string codegen_flags_text(compile::Arch arch) {
  const std::vector<std::string> flags = compile::nvcc_flags(arch);
  std::string out;
  for (std::size_t i = 0; i < flags.size(); ++i) {
    const bool gencode = flags[i] == "-gencode" && i + 1 < flags.size();
    if (!gencode && !flags[i].starts_with("-O") && !flags[i].starts_with("-std="))
      continue;
    out += (out.empty() ? "" : " ") + flags[i];
    if (gencode)
      out += " " + flags[++i];
  }
  return out;
}

std::string kernels_text(const std::vector<compile::KernelResources>& kernels) {
  if (kernels.empty())
    return "";
  std::string out = fmt::format("  {:<48} {:>5} {:>13} {:>10} {:>8}\n", "kernel (ptxas)", "regs",
                                "spill st/ld B", "smem B", "stack B");
  for (const auto& k : kernels) {
    std::string name =
        k.demangled_name.size() > 48 ? k.demangled_name.substr(0, 45) + "..." : k.demangled_name;
    out += fmt::format("  {:<48} {:>5} {:>13} {:>10} {:>8}\n", name, k.registers,
                       fmt::format("{}/{}", k.spill_store_bytes, k.spill_load_bytes), k.smem_bytes,
                       k.stack_frame_bytes);
  }
  return out;
}

// The check of a .cu candidate, each stage only when the one before it succeeded.
util::Expected<CheckReport> check_report(const CheckTools& tools, const std::string& source,
                                         const suite::Problem& problem, compile::Arch arch) {
  util::PhaseLog phases;
  PTXBENCH_TRY_ASSIGN(auto signature, compile::make_signature(problem.definition));
  CheckReport report;
  report.problem = problem.name();
  report.arch = arch;
  report.signature = signature.one_line();
  report.banned = phases.time("gate", [&] { return compile::find_banned_library(source); });
  if (report.banned) {
    report.outcome = CheckOutcome::banned_library;
    report.phases = phases.phases();
    return report;
  }
  PTXBENCH_TRY_ASSIGN(auto build, phases.time("compile", [&] {
    return tools.compiler.compile(compile::CompileRequest::for_candidate(source, signature, arch));
  }));
  report.build = std::move(build);
  if (!report.build->ok) {
    report.outcome = CheckOutcome::compile_error;
    report.phases = phases.phases();
    return report;
  }
  if (tools.imports == ImportCheck::enforce) {
    PTXBENCH_TRY_ASSIGN(auto imports, phases.time("imports", [&] {
      return compile::read_imports(report.build->library);
    }));
    report.forbidden = compile::find_forbidden_import(imports);
    if (report.forbidden) {
      report.outcome = CheckOutcome::banned_library;
      report.phases = phases.phases();
      return report;
    }
  }
  PTXBENCH_TRY_ASSIGN(auto sass_report, phases.time("sass", [&] {
    return sass::analyze_binary(tools.disassembler, report.build->library);
  }));
  report.sass = std::move(sass_report);
  report.phases = phases.phases();
  return report;
}

} // namespace

CudaFrontend::CudaFrontend()
    : Frontend({.name = "cuda",
                .base_variant = "base",
                .report_tag = "",
                .checked_summary = "built and disassembled",
                .no_gpu_note = "Not run: this machine evaluates statically only (no GPU step); "
                               "correctness and speed "
                               "are unknown.\n",
                .static_run_notice =
                    "every turn stops after the static check (gate, nvcc, SASS) and is recorded as "
                    "static_only",
                .check_is_cached = true,
                .uses_candidate_binary = true,
                .fence = compile::kCodeFence,
                .kernel_noun = "CUDA",
                .instructions = kInstructions,
                .knowledge_title = "Architecture knowledge",
                .reply_request = "Reply with one complete CUDA file in a single ```cuda code block "
                                 "that defines `run` with the exact signature given.",
                .file_extension = ".cu"}) {}

util::Expected<compile::Extraction> CudaFrontend::extract(std::string_view reply) const {
  return compile::extract_candidate(reply);
}

util::Expected<std::string> CudaFrontend::prompt_signature(const suite::Problem& problem) const {
  PTXBENCH_TRY_ASSIGN(auto signature, compile::make_signature(problem.definition));
  return signature.pretty();
}

std::string CudaFrontend::build_note(compile::Arch arch) const {
  return "nvcc builds the file with " + codegen_flags_text(arch);
}

util::Expected<ShownSignature> CudaFrontend::shown_signature(const suite::Problem& problem) const {
  PTXBENCH_TRY_ASSIGN(auto signature, compile::make_signature(problem.definition));
  std::string text;
  for (const auto& header : signature.headers())
    text += fmt::format("#include <{}>\n", header);
  return ShownSignature{"C ABI signature (docs/abi.md)",
                        text + "\n" + signature.pretty(),
                        {{"signature", signature.one_line()}, {"headers", signature.headers()}}};
}

util::Expected<Checked> CudaFrontend::check(const CheckTools& tools, const std::string& source,
                                            const suite::Problem& problem,
                                            compile::Arch arch) const {
  PTXBENCH_TRY_ASSIGN(auto report, check_report(tools, source, problem, arch));
  Checked checked{std::move(report), nullptr};
  if (checked.report.outcome == CheckOutcome::ok)
    checked.candidate = std::make_unique<CudaCandidate>(checked.report.build->library);
  return checked;
}

std::string CudaFrontend::check_text(const CheckReport& report) const {
  std::string out;
  if (report.banned) {
    return out + fmt::format("gate      REJECTED (line {}: {})\n{}\n", report.banned->line,
                             report.banned->excerpt, report.banned->message());
  }
  out += "gate      ok (no banned library)\n";
  const auto& build = *report.build;
  out += fmt::format("compile   {} ({}{} ms)\n", build.ok ? "ok" : "FAILED",
                     build.cache_hit ? "cache hit, built in " : "", build.compile_time.count());
  if (!build.ok) {
    if (!build.diagnostic_restates_first_error())
      out += build.diagnostic + "\n";
    for (const auto& error : build.first_errors)
      out += error + "\n";
    return out;
  }
  if (report.forbidden)
    return out + fmt::format("imports   REJECTED ({} `{}`)\n{}\n",
                             compile::to_string(report.forbidden->rule), report.forbidden->name,
                             report.forbidden->message());
  out += kernels_text(build.kernels) + "\n" + sass::render_text(*report.sass) + "\n";
  return out + verdict_text(report);
}

} // namespace ptxbench::frontend
