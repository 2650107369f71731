// The parts of GpuEvaluation for a candidate compiled in its warm-up call — a Triton candidate
// (gpu_evaluation.hpp; docs/evaluation.md, "Triton candidates"): the `load` whose warm-up call
// compiles the kernels, the cubins it left in Candidate::warm_up_cubins as the candidate's
// binary, and the cubins that came after it.
#include "exec/cubin_folder.hpp"
#include "exec/gpu_evaluation.hpp"

namespace ptxbench::exec::detail {

// A Triton candidate's load runs its warm-up call (JIT, autotuning) in the child; a deadline
// that passes there is the compiler's or the autotuner's, and the message says so.
bool GpuEvaluation::load_with_warm_up(protocol::Request load) {
  load.binding = m_run->binding;
  auto reply = m_child->request(load, m_options.timeout);
  if (!reply && reply.error().kind == util::ErrorKind::timeout) {
    fail(trace::EvaluationStatus::timeout,
         "Triton JIT or autotuning did not finish: " + reply.error().message);
    return false;
  }
  if (reply && reply->jit_ms)
    m_result.jit_ms = reply->jit_ms;
  if (!reply) {
    fail(trace::EvaluationStatus::runtime_error, reply.error().message);
    return false;
  }
  if (!reply->refused.empty())
    m_result.launches.refused = reply->refused;
  if (!reply->ok) {
    const bool form = reply->error == protocol::ChildError::signature_mismatch;
    fail(form ? trace::EvaluationStatus::compile_error : trace::EvaluationStatus::runtime_error,
         reply->message);
    return false;
  }
  scan_warm_up_cubins();
  return true;
}

// What Triton built in the warm-up is the candidate's binary: its static report and its kernel
// names (cubin_folder.hpp).
void GpuEvaluation::scan_warm_up_cubins() {
  m_warm_cubins = list_cubins(*m_warm_up_folder);
  m_result.launches.cubin_functions = cubin_kernel_names(m_warm_cubins);
  m_result.launches.own_cubins = cubin_hashes(m_warm_cubins);
  if (m_warm_cubins.empty()) {
    m_result.violations.emplace_back("Triton built no cubin in the warm-up call");
    return;
  }
  auto report = sass::analyze_binaries(*m_run->disassembler, m_warm_cubins);
  if (report)
    m_result.check.sass = std::move(*report);
  else
    m_result.violations.push_back("no static SASS report of the Triton cubins: " +
                                  report.error().message);
}

void GpuEvaluation::check_late_cubins() {
  const std::filesystem::path& cache = *m_warm_up_folder;
  for (const auto& cubin : new_cubins(m_warm_cubins, list_cubins(cache)))
    m_result.launches.late_cubins.push_back(std::filesystem::relative(cubin, cache).string());
}

} // namespace ptxbench::exec::detail
