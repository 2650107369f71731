#include "agent/prompt.hpp"

#include "compile/abi.hpp"
#include "pack/compose.hpp"
#include "trace/json_io.hpp"

#include <fmt/core.h>

namespace ptxbench::agent {
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

} // namespace

std::string system_prompt(std::string_view signature, std::string_view pack_text,
                          compile::Arch arch) {
  std::string out(kInstructions);
  if (!pack_text.empty())
    out += fmt::format("\n\n# Architecture knowledge\n\n{}", pack_text);
  out += fmt::format("\n\n# Required signature\n\n```cuda\n{}\n```\n", signature);
  out += fmt::format("\nTarget architecture: {} (compiled with -arch={}).\n",
                     compile::to_string(arch), compile::to_string(arch));
  return out;
}

std::string task_prompt(const trace::Definition& definition) {
  trace::Json json = trace::to_json(definition);
  json.erase("tags");
  return "Implement this operator (FlashInfer-Trace definition):\n\n```json\n" +
         trace::dump_pretty(json) + "\n```\n";
}

std::string default_variant(const pack::Manifest& manifest, const suite::Problem& problem) {
  std::string_view kind = suite::info(problem.kind).name;
  for (const auto& [name, variants] : manifest.problem_variants())
    if (name == kind && !variants.empty())
      return variants.front();
  return "base";
}

util::Expected<Prompts> build_prompts(const suite::Problem& problem, compile::Arch arch,
                                      const pack::Manifest& manifest, std::string_view variant,
                                      std::string_view live_device) {
  auto signature = compile::make_signature(problem.definition);
  if (!signature)
    return signature.take_error();
  std::string pack_text;
  if (variant != "none") {
    auto found = manifest.variant(variant, compile::to_string(arch));
    if (!found)
      return found.take_error();
    auto composed = pack::compose(manifest, **found);
    if (!composed)
      return composed.take_error();
    pack_text = std::move(composed->text);
    if (!live_device.empty())
      pack_text += "\n\n" + std::string(live_device);
  }
  return Prompts{system_prompt(signature->pretty(), pack_text, arch),
                 task_prompt(problem.definition), std::string(variant)};
}

} // namespace ptxbench::agent
