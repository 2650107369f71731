// Reference implementations of the suite's operators, on the GPU. A library reference
// (cuBLASLt, cuDNN, FlashInfer) is the baseline a candidate's speedup is measured against
// and the source of the expected outputs; a naive reference (a different algorithm, fp32
// accumulation, written by us) exists to prove each library reference right in tests.
//
// Calls use the same uniform record a candidate gets (compile/ptxbench_call.h): device
// buffers of the tensor inputs then the outputs in ABI order, scalar inputs, var-axis values
// and the stream. A reference only enqueues work on that stream; it never synchronises.
#pragma once

#include "compile/ptxbench_call.h"
#include "suite/problem.hpp"
#include "util/error.hpp"

#include <memory>
#include <string>
#include <string_view>

namespace ptxbench::reference {

enum class Kind : std::uint8_t { library = 1, naive = 2 };

// Which library is the GQA baseline. FlashInfer (the paper's baseline, compiled from its
// headers) by default; cuDNN SDPA on request, or where FlashInfer cannot serve the problem on
// this device (then library() ends with "; FlashInfer unavailable: " and the reason); cuDNN's
// library() says "stand-in for FlashInfer". Where cuDNN cannot serve a layout either, the
// naive kernel stands in and library() is kGqaNaiveStandIn followed by cuDNN's reason and ")".
enum class GqaBaseline : std::uint8_t { flashinfer = 1, cudnn = 2 };
inline constexpr std::string_view kGqaStandIn = "stand-in for FlashInfer";
inline constexpr std::string_view kGqaNaiveStandIn =
    "naive (stand-in for FlashInfer; cuDNN SDPA cannot serve this layout: ";

class Reference {
public:
  virtual ~Reference() = default;
  // What to record as the baseline, e.g. "cuBLASLt 13.1.0", "cuDNN 9.19.0 SDPA forward",
  // "cuDNN 9.19.0 SDPA (stand-in for FlashInfer; paged decode, frontend 1.32.0)".
  virtual std::string library() const = 0;
  virtual Kind kind() const = 0;
  // Enqueues one evaluation of the operator on call.stream. Plans, heuristics and workspaces
  // are prepared by the factory, never here, so this is what gets timed.
  virtual util::Status run(const PtxbenchCall& call) = 0;
};

// The baseline for `problem` on the current CUDA device (cuBLASLt for GEMM, cuDNN SDPA for
// MHA forward/backward, `gqa` for GQA). `unsupported` when the library cannot serve this
// shape; the caller may then fall back to the naive reference and record it.
util::Expected<std::unique_ptr<Reference>>
make_library_reference(const suite::Problem& problem, GqaBaseline gqa = GqaBaseline::flashinfer);

util::Expected<std::unique_ptr<Reference>> make_naive_reference(const suite::Problem& problem);

} // namespace ptxbench::reference
