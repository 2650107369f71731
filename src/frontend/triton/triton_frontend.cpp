#include "frontend/triton/triton_frontend.hpp"

#include "compile/triton_abi.hpp"
#include "compile/triton_aot.hpp"
#include "compile/triton_gate.hpp"
#include "frontend/triton/aot_report.hpp"
#include "frontend/triton/binding.hpp"
#include "util/fs.hpp"

#include <algorithm>
#include <fmt/format.h>

namespace ptxbench::frontend {
namespace {

// The Triton instructions explain destination-passing style as the original's Triton prompt
// does: `run` gets inputs, then preallocated outputs, then variable axes, and returns nothing.
constexpr std::string_view kTritonInstructions =
    R"(You are an expert Triton engineer writing a high-performance GPU kernel for one fixed
problem.

Write ONE complete Python file, in a single ```python code block, that does `import triton`,
defines one or more `@triton.jit` kernels, and defines the host function `run` with exactly the
parameters below:
- destination-passing style: `run(<inputs>, <outputs>, <variable axes>)` receives every input,
  then every output, then the value of every variable axis, all positionally. The outputs are
  torch tensors already allocated on the GPU with the definition's shape and dtype (their
  contents are garbage: the evaluator fills them with NaN); write every element into them and
  return nothing. Never allocate or return new output tensors;
- inputs are read-only, contiguous torch tensors on the GPU in the definition's layout;
- all work is done by your Triton kernels, launched on torch's current stream; do not
  synchronize or create streams;
- no torch compute: the only torch calls allowed are `torch.cuda.*` and `torch.empty` inside
  the allocator function you give to `triton.set_allocator` (needed for tensor descriptors);
  no `@` operator, no matmul/mm/bmm/linear/softmax/einsum/conv/scaled_dot_product_attention
  calls, no CUTLASS, `import torch` only in that form, no `__import__`/`importlib`/`getattr`
  tricks. These are rejected before the GPU step, and a kernel in the call that Triton did not
  compile from your file is rejected by the evaluation;
- the first call compiles and autotunes (not timed); later calls must not recompile.
After each attempt you get the gate, correctness, timing and instruction-verdict results;
answer with a complete, improved file each time.)";

nlohmann::ordered_json to_json(const compile::TritonGateReport& report) {
  nlohmann::ordered_json findings = nlohmann::ordered_json::array();
  for (const auto& f : report.findings)
    findings.push_back({{"rule", f.rule},
                        {"line", f.line},
                        {"col", f.col},
                        {"message", f.message},
                        {"quote", f.quote}});
  return {{"language", "triton"},
          {"outcome", report.ok() ? "ok" : "rejected"},
          {"findings", std::move(findings)}};
}

// One arch's AOT report: needs_gpu when `run` could not be specialised without a GPU (the gate
// passed; the SASS report needs the GPU evaluator), fail for a kernel that does not compile, a
// module that raises, and an `absent` verdict, as for a .cu candidate.
CommandVerdict aot_verdict(const TritonSassReport& report) {
  switch (report.aot.outcome) {
  case compile::TritonAotOutcome::ok:
    return report.verdict() == sass::Verdict::absent ? CommandVerdict::fail : CommandVerdict::pass;
  case compile::TritonAotOutcome::cannot_specialise:
    return CommandVerdict::needs_gpu;
  default:
    return CommandVerdict::fail;
  }
}

} // namespace

TritonFrontend::TritonFrontend()
    : Frontend({.name = "triton",
                .base_variant = "triton-base",
                .report_tag = "triton",
                .checked_summary = "the Triton gate passed; Triton compiles the kernels (and the "
                                   "SASS report is made of its "
                                   "cubins) in the GPU step's warm-up call",
                .no_gpu_note = "The GPU step did not run, so the kernel was not compiled by "
                               "Triton, checked or timed.\n",
                .static_run_notice =
                    "every Triton turn stops after the Triton gate and is recorded as static_only",
                .check_is_cached = false,
                .uses_candidate_binary = false,
                .fence = compile::kPythonCodeFence,
                .kernel_noun = "Triton",
                .instructions = kTritonInstructions,
                .knowledge_title = "Architecture and Triton knowledge",
                .reply_request = "Reply with one complete Python file in a single ```python block "
                                 "that imports triton, defines a @triton.jit kernel and `run` "
                                 "with the exact signature given.",
                .file_extension = ".py"}) {}

util::Expected<compile::Extraction> TritonFrontend::extract(std::string_view reply) const {
  return compile::extract_python_candidate(reply);
}

util::Expected<std::string> TritonFrontend::prompt_signature(const suite::Problem& problem) const {
  PTXBENCH_TRY_ASSIGN(auto signature, compile::make_triton_signature(problem.definition));
  return signature.pretty();
}

std::string TritonFrontend::build_note(compile::Arch /*arch*/) const {
  return "Triton compiles your kernels for it on the evaluating GPU";
}

util::Expected<ShownSignature>
TritonFrontend::shown_signature(const suite::Problem& problem) const {
  PTXBENCH_TRY_ASSIGN(auto signature, compile::make_triton_signature(problem.definition));
  const std::string_view entry_point = compile::entry_point(compile::Language::triton);
  return ShownSignature{
      fmt::format("Triton signature ({}, destination-passing)", entry_point),
      signature.pretty(),
      {{"language", "triton"}, {"entry_point", entry_point}, {"signature", signature.one_line()}}};
}

util::Expected<std::string> TritonFrontend::repair_rules(const suite::Problem& problem) const {
  PTXBENCH_TRY_ASSIGN(auto signature, compile::make_triton_signature(problem.definition));
  return fmt::format(
      "Keep the host function in destination-passing style, exactly:\n\n```python\n{}\n```\n\n"
      "It receives the inputs, then the preallocated outputs, then the variable axes; it writes "
      "every element of every output in place and returns nothing. Every output is computed by "
      "the file's own `@triton.jit` kernels: no torch compute calls (only `torch.cuda.*`, and "
      "`torch.empty` inside the allocator given to `triton.set_allocator`), no `@` operator. "
      "Answer with the complete fixed file in one ```python block.\n\n",
      signature.pretty());
}

util::Expected<Checked> TritonFrontend::check(const CheckTools& tools, const std::string& source,
                                              const suite::Problem& problem,
                                              compile::Arch arch) const {
  util::PhaseLog phases;
  PTXBENCH_TRY_ASSIGN(auto signature, compile::make_triton_signature(problem.definition));
  PTXBENCH_TRY_ASSIGN(auto work, util::TempFolder::make("ptxbench-triton", "a Triton evaluation"));
  const std::filesystem::path kernel = work.path() / "kernel.py";
  PTXBENCH_TRY(util::write_file_atomic(kernel, source));
  Checked checked;
  CheckReport& report = checked.report;
  report.problem = problem.name();
  report.arch = arch;
  report.language = compile::Language::triton;
  report.signature = signature.one_line();
  const compile::TritonGate gate(tools.runner, tools.python, tools.python_root);
  PTXBENCH_TRY_ASSIGN(auto findings, phases.time("triton_gate", [&] {
    return gate.check_file(kernel, source, signature);
  }));
  const bool library = std::any_of(
      findings.findings.begin(), findings.findings.end(),
      [](const compile::TritonFinding& f) { return compile::triton_library_rule(f.rule); });
  if (!findings.ok())
    report.outcome = library ? CheckOutcome::banned_library : CheckOutcome::compile_error;
  report.triton_gate = std::move(findings);
  report.phases = phases.phases();
  if (report.outcome == CheckOutcome::ok) {
    std::vector<std::int64_t> axes;
    for (const auto& [axis, value] : problem.var_axes)
      axes.push_back(value);
    checked.candidate =
        std::make_unique<TritonCandidate>(std::move(work), problem.definition, std::move(axes));
  }
  return checked;
}

std::string TritonFrontend::check_text(const CheckReport& report) const {
  return report.triton_gate && !report.triton_gate->ok()
             ? "gate      REJECTED by the Triton gate\n" + compile::render_text(*report.triton_gate)
             : std::string("gate      ok (the Triton gate passed)\n");
}

void TritonFrontend::add_check_json(const CheckReport& report, nlohmann::ordered_json& out) const {
  out["language"] = "triton";
  nlohmann::ordered_json findings = nlohmann::ordered_json::array();
  if (report.triton_gate)
    for (const compile::TritonFinding& f : report.triton_gate->findings)
      findings.push_back({{"rule", f.rule}, {"line", f.line}, {"message", f.message}});
  out["triton_gate"] = findings;
}

util::Expected<CommandCheck> TritonFrontend::command_check(const CheckTools& tools,
                                                           const std::string& source,
                                                           const suite::Problem& problem,
                                                           std::span<const compile::Arch> arches,
                                                           std::string_view file) const {
  PTXBENCH_TRY_ASSIGN(auto signature, compile::make_triton_signature(problem.definition));
  const compile::TritonGate gate(tools.runner, tools.python, tools.python_root);
  PTXBENCH_TRY_ASSIGN(auto gate_report, gate.check(source, signature));
  CommandCheck out{to_json(gate_report), "", CommandVerdict::pass};
  out.json["aot"] = nlohmann::ordered_json::array();
  if (!gate_report.ok()) {
    out.text = fmt::format("{}: rejected by the Triton gate\n{}", file, render_text(gate_report));
    out.verdict = CommandVerdict::fail;
    return out;
  }
  out.text = fmt::format("{}: Triton gate passed ({})\n", file, signature.one_line());
  const compile::TritonAotCompiler compiler(tools.runner, tools.python, tools.python_root);
  for (const compile::Arch arch : arches) {
    PTXBENCH_TRY_ASSIGN(auto report,
                        triton_sass_report(source, problem, arch, compiler, tools.disassembler));
    if (const CommandVerdict verdict = aot_verdict(report); verdict != CommandVerdict::pass)
      out.verdict = out.verdict == CommandVerdict::fail ? out.verdict : verdict;
    out.json["aot"].push_back(to_json(report));
    out.text += "\n" + render_text(report);
  }
  return out;
}

TritonCandidate::TritonCandidate(std::filesystem::path work, trace::Definition definition,
                                 std::vector<std::int64_t> var_axes)
    : m_work(std::move(work)), m_definition(std::move(definition)),
      m_var_axes(std::move(var_axes)) {}

TritonCandidate::TritonCandidate(util::TempFolder work, trace::Definition definition,
                                 std::vector<std::int64_t> var_axes)
    : m_owned(std::move(work)), m_work(m_owned->path()), m_definition(std::move(definition)),
      m_var_axes(std::move(var_axes)) {}

util::Expected<std::string> TritonCandidate::binding() const {
  return triton_binding(m_definition, m_var_axes);
}

ChildCommand TritonCandidate::child_command(const ChildPaths& paths,
                                            std::vector<std::string> words) const {
  ChildCommand command;
  if (words.empty())
    return command;
  command.argv = {paths.python.string(), "-m", "ptxbench_triton.child", "--library",
                  paths.child_library.string()};
  command.argv.insert(command.argv.end(), words.begin() + 1, words.end());
  std::string pythonpath = paths.python_root.string();
  if (!paths.inherited_pythonpath.empty())
    pythonpath += ":" + paths.inherited_pythonpath;
  command.env = {"PYTHONPATH=" + pythonpath,
                 "TRITON_CACHE_DIR=" + (m_work / "triton-cache").string(),
                 "TRITON_HOME=" + (m_work / "triton-home").string(), "PYTHONDONTWRITEBYTECODE=1"};
  return command;
}

} // namespace ptxbench::frontend
