// CUDA candidates (docs/abi.md): one .cu file defining `run` with the C ABI signature of
// compile/abi.hpp, taken from a ```cuda block (any of compile::kCudaLanguages), built by nvcc.
#pragma once

#include "frontend/frontend.hpp"

namespace ptxbench::frontend {

class CudaFrontend final : public Frontend {
public:
  CudaFrontend();
  util::Expected<compile::Extraction> extract(std::string_view reply) const override;
  util::Expected<ShownSignature> shown_signature(const suite::Problem& problem) const override;
  // Banned-library gate, nvcc build, the import rule on kernel.so (unless tools.imports skips
  // it), the static SASS report of kernel.so; each stage only when the one before succeeded.
  util::Expected<Checked> check(const CheckTools& tools, const std::string& source,
                                const suite::Problem& problem, compile::Arch arch) const override;
  std::string check_text(const CheckReport& report) const override;

protected:
  util::Expected<std::string> prompt_signature(const suite::Problem& problem) const override;
  // The flags of the real build that decide the code (compile::nvcc_flags): -O, -std, -gencode.
  std::string build_note(compile::Arch arch) const override;
};

// A built CUDA candidate: kernel.so in the compile cache, loaded by `ptxbench-candidate`.
class CudaCandidate final : public Candidate {
public:
  explicit CudaCandidate(std::filesystem::path library) : m_library(std::move(library)) {}
  std::filesystem::path library() const override { return m_library; }
  util::Expected<std::string> binding() const override { return std::string(); }
  ChildCommand child_command(const ChildPaths& paths,
                             std::vector<std::string> words) const override {
    return candidate_binary_command(paths, std::move(words));
  }
  std::optional<std::filesystem::path> warm_up_cubins() const override { return std::nullopt; }

private:
  std::filesystem::path m_library;
};

} // namespace ptxbench::frontend
