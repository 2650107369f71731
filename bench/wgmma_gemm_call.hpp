// One call of the wgmma+TMA test GEMM (tests/kernels/sm90_wgmma_tma_gemm.cu, linked into the
// benchmark) at the suite's shape M=8192, N=7168, K=5120, on buffers of its own filled with
// bf16 0.0115 (instruction counts and latency do not depend on the values). Shared by the
// counting benchmarks (verification_cost, counter_session).
#pragma once

#include "measure/timing.hpp"
#include "util/error.hpp"

#include <cstdint>
#include <cuda_bf16.h>
#include <cuda_runtime.h>
#include <utility>

void run(const __nv_bfloat16* A, const __nv_bfloat16* B, __nv_bfloat16* C, int64_t M,
         cudaStream_t stream);

namespace ptxbench::bench {

inline constexpr std::int64_t kGemmM = 8192, kGemmN = 7168, kGemmK = 5120;

class WgmmaGemmCall {
public:
  WgmmaGemmCall() {
    for (auto [pointer, bytes] : {std::pair{&m_a, kGemmM * kGemmK * 2},
                                  {&m_b, kGemmN * kGemmK * 2},
                                  {&m_c, kGemmM * kGemmN * 2}}) {
      if (cudaMalloc(pointer, static_cast<std::size_t>(bytes)) != cudaSuccess)
        throw util::Fatal("cudaMalloc of the GEMM's buffers failed");
      cudaMemset(*pointer, 0x3c, static_cast<std::size_t>(bytes));
    }
  }
  ~WgmmaGemmCall() {
    cudaFree(m_a);
    cudaFree(m_b);
    cudaFree(m_c);
  }
  WgmmaGemmCall(const WgmmaGemmCall&) = delete;
  WgmmaGemmCall& operator=(const WgmmaGemmCall&) = delete;

  // Enqueues one call; the launch's cudaError_t.
  int operator()(cudaStream_t stream) const {
    run(static_cast<const __nv_bfloat16*>(m_a), static_cast<const __nv_bfloat16*>(m_b),
        static_cast<__nv_bfloat16*>(m_c), kGemmM, stream);
    return static_cast<int>(cudaGetLastError());
  }
  // Fills the output with the NaN sentinel, as the evaluator does before every call.
  void reset(cudaStream_t stream) const {
    cudaMemsetAsync(m_c, 0xFF, static_cast<std::size_t>(kGemmM * kGemmN * 2), stream);
  }
  void* output() const { return m_c; }

private:
  void* m_a = nullptr;
  void* m_b = nullptr;
  void* m_c = nullptr;
};

// One strict trial of `gemm` as the evaluator times a candidate (10 warm-up + 50 timed calls,
// L2 flushed and the output reset before each): its median latency in ms.
inline double strict_trial_median(measure::CallTimer& timer, measure::L2Flusher& flusher,
                                  const WgmmaGemmCall& gemm, cudaStream_t stream) {
  auto call = [&](cudaStream_t s) { return gemm(s); };
  auto before = [&](int) { gemm.reset(stream); };
  auto timed = measure::run_trial(timer, flusher, call, before, stream,
                                  {10, 50, measure::TimingMode::strict});
  if (!timed)
    throw util::Fatal(timed.error().message);
  return timed->median_ms;
}

} // namespace ptxbench::bench
