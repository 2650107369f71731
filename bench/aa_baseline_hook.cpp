// The A/A baseline hook, linked only into ptxbench-candidate-aa (bench/CMakeLists.txt), which
// exports it (ENABLE_EXPORTS). An A/A candidate (bench/aa/*.cu) declares it as a weak symbol
// and calls it from `run`; inside the production ptxbench-candidate the symbol does not exist,
// so a user's kernel cannot reach a library this way.
//
// The hook runs exactly the supervisor's baseline: reference::make_library_reference for the
// named problem of the built-in suite, built once on the first call (cuBLASLt heuristic under
// the same 32 MiB workspace cap, cuDNN SDPA graph and plan), then `run` on the candidate's
// buffers and stream. Same factory, same shapes, same GPU: the same algorithm and workspace.
#include "compile/ptxbench_call.h"
#include "reference/reference.hpp"
#include "suite/suite.hpp"

#include <cstdint>
#include <cstdio>
#include <exception>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace {

using ptxbench::reference::Reference;

// nullptr (after printing why) when the problem or its library baseline is unavailable.
Reference* baseline_for(const std::string& requested) {
  static std::map<std::string, std::unique_ptr<Reference>> baselines;
  if (auto found = baselines.find(requested); found != baselines.end())
    return found->second.get();
  const std::size_t at = requested.find('@');
  const std::string problem_name = requested.substr(0, at);
  const auto gqa = at != std::string::npos && requested.substr(at + 1) == "cudnn"
                       ? ptxbench::reference::GqaBaseline::cudnn
                       : ptxbench::reference::GqaBaseline::flashinfer;
  static auto suite = ptxbench::suite::Suite::load_default();
  if (!suite) {
    std::fprintf(stderr, "aa hook: %s\n", suite.error().message.c_str());
    return nullptr;
  }
  auto problem = suite->find(problem_name);
  if (!problem) {
    std::fprintf(stderr, "aa hook: %s\n", problem.error().message.c_str());
    return nullptr;
  }
  auto reference = ptxbench::reference::make_library_reference(**problem, gqa);
  if (!reference) {
    std::fprintf(stderr, "aa hook: %s\n", reference.error().message.c_str());
    return nullptr;
  }
  std::fprintf(stderr, "aa hook: %s baseline %s\n", problem_name.c_str(),
               (*reference)->library().c_str());
  return (baselines[requested] = std::move(*reference)).get();
}

} // namespace

namespace {

// 0 on success; -1 without a baseline, -2 when the baseline failed or threw.
int run_baseline(const char* problem, void* const* buffers, unsigned num_buffers,
                 const float* scalars, unsigned num_scalars, const std::int64_t* var_axes,
                 unsigned num_var_axes, void* stream) {
  try {
    Reference* baseline = baseline_for(problem);
    if (baseline == nullptr)
      return -1;
    std::vector<PtxbenchScalar> values(num_scalars);
    for (unsigned i = 0; i < num_scalars; ++i)
      values[i].f32 = scalars[i];
    const PtxbenchCall call{PTXBENCH_CALL_VERSION, num_buffers, num_scalars, num_var_axes, buffers,
                            values.data(),         var_axes,    stream};
    auto status = baseline->run(call);
    if (!status)
      std::fprintf(stderr, "aa hook: %s\n", status.error().message.c_str());
    return status ? 0 : -2;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "aa hook: %s\n", e.what());
    return -2;
  }
}

} // namespace

// Problems without scalar inputs (GEMM, MHA).
extern "C" __attribute__((visibility("default"))) int
ptxbench_aa_baseline_run(const char* problem, void* const* buffers, unsigned num_buffers,
                         const std::int64_t* var_axes, unsigned num_var_axes, void* stream) {
  return run_baseline(problem, buffers, num_buffers, nullptr, 0, var_axes, num_var_axes, stream);
}

// Problems with float32 scalar inputs (GQA: sm_scale), in definition order.
extern "C" __attribute__((visibility("default"))) int
ptxbench_aa_baseline_run_f32(const char* problem, void* const* buffers, unsigned num_buffers,
                             const float* scalars, unsigned num_scalars,
                             const std::int64_t* var_axes, unsigned num_var_axes, void* stream) {
  return run_baseline(problem, buffers, num_buffers, scalars, num_scalars, var_axes, num_var_axes,
                      stream);
}
