// The A/A baseline hook, linked only into ptxbench-candidate-aa (bench/CMakeLists.txt), which
// exports it (ENABLE_EXPORTS). An A/A candidate (bench/aa/*.cu) declares it as a weak symbol
// and calls it from `run`; inside the production ptxbench-candidate the symbol does not exist,
// so a user's kernel cannot reach a library this way.
//
// The hook runs exactly the supervisor's baseline: reference::make_library_reference for the
// named problem of the built-in suite, built once on the first call (cuBLASLt under the same
// 32 MiB workspace cap with the algorithm the supervisor's autotuning chose and handed over,
// aa_autotune_handover.hpp; cuDNN SDPA graph and plan; FlashInfer's plan), then `run` on the
// candidate's buffers and stream. Same factory, same shapes, same GPU: the same algorithm and
// workspace.
//
// With PTXBENCH_AA_BUFFER_PROBE=1 in the environment the hook also answers, once per problem on
// its first call, whether the baseline runs slower on the call slot the child maps from the
// supervisor (shared by descriptor or by CUDA IPC, protocol/device_buffer.hpp) than on copies
// the child allocates itself with cudaMalloc: it times the baseline on both, alternately, each
// run behind an L2 flush, with CUDA events (bench/event_probe.hpp), then the own copies alone
// with CUPTI's activity tracing suspended, and prints the medians to stderr ("aa hook: buffer
// probe"), which aa_speedup shows beside the same probe on the supervisor's own buffers. A
// diagnostic of the GQA A/A (bench/results/flashinfer_h200.md); the extra work makes that
// evaluation's first call differ from the rest.
#include "bench/aa_autotune_handover.hpp"
#include "bench/event_probe.hpp"
#include "compile/ptxbench_call.h"
#include "measure/timing.hpp"
#include "reference/gemm_autotune.hpp"
#include "reference/library_factories.hpp"
#include "reference/reference.hpp"
#include "reference/shapes.hpp"
#include "suite/suite.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cuda.h>
#include <cuda_runtime.h>
#include <exception>
#include <filesystem>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace {

using ptxbench::reference::Reference;

// The supervisor's autotune records (aa_autotune_handover.hpp) in a cache kept in memory:
// nothing here writes a file. Without them the GEMM candidates are timed again in the child.
ptxbench::reference::AutotuneCache& handed_autotune_cache() {
  static ptxbench::reference::AutotuneCache cache{std::filesystem::path()};
  static std::once_flag seeded;
  std::call_once(seeded, [] {
    const char* variable = ptxbench::bench::kAaAutotuneRecordsVariable;
    const char* text = std::getenv(variable);
    if (text == nullptr) {
      std::fprintf(stderr, "aa hook: no %s: the GEMM candidates are timed again here\n", variable);
      return;
    }
    auto records = ptxbench::reference::parse_autotune_records(text, variable);
    if (!records) {
      std::fprintf(stderr, "aa hook: %s\n", records.error().message.c_str());
      return;
    }
    for (const auto& record : *records)
      cache.put(record);
  });
  return cache;
}

ptxbench::reference::ReferencePtr handed_gemm_baseline(const ptxbench::suite::Problem& problem) {
  PTXBENCH_TRY_ASSIGN(const auto shape, ptxbench::reference::gemm_shape(problem));
  return ptxbench::reference::make_cublaslt_gemm(shape, handed_autotune_cache());
}

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
  auto reference = (*problem)->kind == ptxbench::suite::OpKind::gemm
                       ? handed_gemm_baseline(**problem)
                       : ptxbench::reference::make_library_reference(**problem, gqa);
  if (!reference) {
    std::fprintf(stderr, "aa hook: %s\n", reference.error().message.c_str());
    return nullptr;
  }
  std::fprintf(stderr, "aa hook: %s baseline %s\n", problem_name.c_str(),
               (*reference)->library().c_str());
  return (baselines[requested] = std::move(*reference)).get();
}

// How the supervisor says it shared the slot (its PTXBENCH_BUFFER_SHARING, passed on to us).
const char* sharing_name() {
  const char* asked = std::getenv("PTXBENCH_BUFFER_SHARING");
  return asked != nullptr ? asked : "file_descriptor where supported";
}

// The probe described at the top; prints one line, or why it could not run.
void probe_buffers(const char* problem, Reference& baseline, const PtxbenchCall& call) {
  const auto stream = static_cast<cudaStream_t>(call.stream);
  cudaStreamSynchronize(stream);
  std::vector<void*> own_bases(call.num_buffers, nullptr);
  std::vector<void*> own(call.num_buffers);
  auto release = [&] {
    for (void* base : own_bases)
      cudaFree(base);
  };
  for (unsigned i = 0; i < call.num_buffers; ++i) {
    CUdeviceptr base = 0;
    std::size_t bytes = 0;
    const auto at = reinterpret_cast<CUdeviceptr>(call.buffers[i]);
    if (cuMemGetAddressRange(&base, &bytes, at) != CUDA_SUCCESS ||
        cudaMalloc(&own_bases[i], bytes) != cudaSuccess ||
        cudaMemcpy(own_bases[i], reinterpret_cast<void*>(base), bytes, cudaMemcpyDeviceToDevice) !=
            cudaSuccess) {
      std::fprintf(stderr, "aa hook: buffer probe %s: could not copy buffer %u\n", problem, i);
      release();
      return;
    }
    own[i] = static_cast<char*>(own_bases[i]) + (at - base);
  }
  PtxbenchCall own_call = call;
  own_call.buffers = own.data();
  auto on = [&](const PtxbenchCall& which) {
    return [&baseline, which](cudaStream_t s) {
      PtxbenchCall c = which;
      c.stream = s;
      return static_cast<bool>(baseline.run(c));
    };
  };
  const auto medians = ptxbench::bench::interleaved_event_ms(stream, {on(call), on(own_call)},
                                                             ptxbench::bench::kBufferProbeRounds,
                                                             ptxbench::bench::kBufferProbeWarmup);
  // The same own copies again with CUPTI's activity tracing suspended for the whole run (not
  // per call: suspending costs host time inside the events): whether the child's tracing is
  // the per-call cost that remains on its own memory (bench/results/flashinfer_h200.md).
  std::optional<std::vector<float>> untraced;
  if (medians) {
    const ptxbench::measure::ActivityTracingPause pause;
    untraced = ptxbench::bench::interleaved_event_ms(stream, {on(own_call)},
                                                     ptxbench::bench::kBufferProbeRounds,
                                                     ptxbench::bench::kBufferProbeWarmup);
  }
  release(); // the runs rewrote the outputs with what the call wrote: nothing to restore
  if (!medians || !untraced) {
    std::fprintf(stderr, "aa hook: buffer probe %s: a run failed\n", problem);
    return;
  }
  const float mapped = (*medians)[0];
  const float mine = (*medians)[1];
  std::fprintf(stderr,
               "aa hook: buffer probe %s (child, CUDA events, median of %d): the slot's mapped "
               "buffers (%s) %.4f ms, the child's own copies %.4f ms (mapped / own %.4f), the "
               "own copies with activity tracing suspended %.4f ms\n",
               problem, ptxbench::bench::kBufferProbeRounds, sharing_name(),
               static_cast<double>(mapped), static_cast<double>(mine),
               mine > 0.0f ? static_cast<double>(mapped / mine) : 0.0,
               static_cast<double>((*untraced)[0]));
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
    static std::set<std::string> probed;
    if (status && std::getenv("PTXBENCH_AA_BUFFER_PROBE") != nullptr &&
        probed.insert(problem).second)
      probe_buffers(problem, *baseline, call);
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
