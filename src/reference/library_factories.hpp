// Constructors of the individual references; reference.cpp picks one per problem kind.
#pragma once

#include "reference/reference.hpp"
#include "reference/shape_types.hpp"
#include "reference/shapes.hpp"

#include <memory>
#include <string>
#include <string_view>

namespace ptxbench::reference {

using ReferencePtr = util::Expected<std::unique_ptr<Reference>>;

class AutotuneCache;
// The autotuned cuBLASLt GEMM (gemm_autotune.hpp); its choice is kept in `cache`
// (AutotuneCache::shared() when none is given).
ReferencePtr make_cublaslt_gemm(const GemmShape& shape);
ReferencePtr make_cublaslt_gemm(const GemmShape& shape, AutotuneCache& cache);
ReferencePtr make_cudnn_sdpa_forward(const MhaShape& shape);
ReferencePtr make_cudnn_sdpa_backward(const MhaShape& shape);
// How the cuDNN GQA reference issues a call's three launches: replaying a CUDA graph captured
// once per set of buffers and sm_scale (the default), or launching them directly.
enum class GqaLaunch : std::uint8_t { graph = 1, direct = 2 };
// cuDNN SDPA for a GQA layout, built for `plan` (sdpa_cudnn_gqa.cpp); unsupported, with
// cuDNN's reason, when cuDNN cannot serve it on this device.
ReferencePtr make_cudnn_gqa(const GqaShape& shape, const GqaPlan& plan,
                            GqaLaunch launch = GqaLaunch::graph);

// The FlashInfer release whose headers the build compiles (scripts/setup.sh installs it; the
// CMake configure step reads this line and checks .deps/flashinfer/ holds the same version).
inline constexpr std::string_view kFlashInferVersion = "0.6.14";
// FlashInfer for a GQA layout, planned for the workload's indptr arrays (flashinfer_gqa.cpp);
// unsupported, with the reason, where the compiled kernels or the device cannot serve it.
ReferencePtr make_flashinfer_gqa(const GqaShape& shape, const GqaIndptrs& indptrs);
// Why the compiled FlashInfer kernels cannot serve `shape` (head_dim 128, page size 1, causal
// prefill, decode group size 1–4 or 8); empty when they can.
std::string flashinfer_gqa_unsupported(const GqaShape& shape);
// What library() reports, e.g. "FlashInfer 0.6.14 BatchPrefillWithRaggedKVCache (fa3)".
std::string flashinfer_library(GqaLayout layout);

ReferencePtr make_naive_gemm(const GemmShape& shape);
ReferencePtr make_naive_mha_forward(const MhaShape& shape);
ReferencePtr make_naive_mha_backward(const MhaShape& shape);
// `library` is what library() reports and `kind` what kind() reports: the naive GQA kernel
// also stands in for FlashInfer, and says so.
ReferencePtr make_naive_gqa(const GqaShape& shape, std::string library, Kind kind);

// invalid_input unless the call carries `buffers` buffers and `scalars` scalars.
util::Status check_call(const PtxbenchCall& call, unsigned buffers, unsigned scalars);

} // namespace ptxbench::reference
