// Triton candidates (docs/evaluation.md, "Triton candidates"): one Python file defining a
// destination-passing `run` on torch tensors (compile/triton_abi.hpp), taken from a ```python
// block, checked by the Triton gate and compiled by Triton on the evaluating GPU.
#pragma once

#include "frontend/frontend.hpp"
#include "util/temp_folder.hpp"

#include <cstdint>
#include <vector>

namespace ptxbench::frontend {

class TritonFrontend final : public Frontend {
public:
  TritonFrontend();
  // The problem's `run` signature and the Triton gate (Python's parser) over kernel.py, written
  // once into the candidate's work folder. A finding against other libraries or torch compute
  // is banned_library, one against the file's syntax or form compile_error; there is no build,
  // and the SASS report comes from the cubins Triton builds in the warm-up.
  util::Expected<Checked> check(const CheckTools& tools, const std::string& source,
                                const suite::Problem& problem, compile::Arch arch) const override;
  std::string check_text(const CheckReport& report) const override;
  void add_check_json(const CheckReport& report, nlohmann::ordered_json& out) const override;
  // The gate, then on each arch the static SASS report of the candidate's ahead-of-time
  // specialisation (aot_report.hpp); needs_gpu when `run` cannot be specialised without one.
  util::Expected<CommandCheck> command_check(const CheckTools& tools, const std::string& source,
                                             const suite::Problem& problem,
                                             std::span<const compile::Arch> arches,
                                             std::string_view file) const override;

  util::Expected<compile::Extraction> extract(std::string_view reply) const override;
  util::Expected<ShownSignature> shown_signature(const suite::Problem& problem) const override;

protected:
  util::Expected<std::string> prompt_signature(const suite::Problem& problem) const override;
  std::string build_note(compile::Arch arch) const override;
  // The facts of the Triton pack a repair most often breaks — the DPS `run` with the problem's
  // exact Python signature, outputs written in place, every output computed by the file's own
  // @triton.jit kernels, the gate's torch rule — and the fence to answer in.
  util::Expected<std::string> repair_rules(const suite::Problem& problem) const override;
};

// A gated Triton candidate (docs/evaluation.md, "Triton candidates"): kernel.py in its work
// folder, loaded by `python3 -m ptxbench_triton.child --library libptxbench_child.so` — the
// same C++ child, hosted by the Python that has torch and Triton — with PYTHONPATH naming the
// tree's python/ and TRITON_CACHE_DIR / TRITON_HOME under the work folder, so that the cubins
// Triton builds for this evaluation are exactly that folder's.
class TritonCandidate final : public Candidate {
public:
  // `var_axes`: the workload's values of the definition's variable axes, in definition order.
  TritonCandidate(std::filesystem::path work, trace::Definition definition,
                  std::vector<std::int64_t> var_axes);
  TritonCandidate(util::TempFolder work, trace::Definition definition,
                  std::vector<std::int64_t> var_axes);
  std::filesystem::path library() const override { return m_work / "kernel.py"; }
  util::Expected<std::string> binding() const override; // triton/binding.hpp
  ChildCommand child_command(const ChildPaths& paths,
                             std::vector<std::string> words) const override;
  std::optional<std::filesystem::path> warm_up_cubins() const override {
    return m_work / "triton-cache";
  }

private:
  std::optional<util::TempFolder> m_owned;
  std::filesystem::path m_work;
  trace::Definition m_definition;
  std::vector<std::int64_t> m_var_axes;
};

} // namespace ptxbench::frontend
