// cuBLASLt GEMM reference: C[M,N] = A[M,K] · B[N,K]ᵀ, bf16 in and out, fp32 accumulate and
// fp32 alpha = 1, beta = 0 — what torch.matmul(A, B.T) runs.
//
// Row-major → column-major mapping. cuBLASLt sees column-major matrices. A row-major X[r,c]
// with leading dimension c is, byte for byte, the column-major matrix Xᵀ[c,r] with ld = c.
// So row-major C = A·Bᵀ is column-major Cᵀ = B·Aᵀ, i.e. with cuBLASLt's (A, B) operands
// swapped:
//   Cᵀ[N,M] (ld N) = op_a(B buffer) · op_b(A buffer)
//   op_a = T: the B buffer is column-major [K,N] (ld K); transposed it is B[N,K].
//   op_b = N: the A buffer is column-major [K,M] (ld K), which is Aᵀ[K,M] as needed.
// This is cuBLAS's "TN" case, the one PyTorch issues for A @ B.T with both operands K-major.
//
// The algorithm is chosen once in the factory, under a 32 MiB workspace cap (the Hopper default
// of PyTorch): the heuristic's top candidates, each timed on this shape, the fastest kept
// (gemm_autotune.hpp: row 26 of the cheat catalogue, and the cache that keeps the choice per
// device). The workspace is owned here, so run() only launches.
#include "reference/gemm_autotune.hpp"
#include "reference/library_check.hpp"
#include "reference/library_factories.hpp"
#include "reference/naive_kernels.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <fmt/chrono.h>
#include <fmt/format.h>

namespace ptxbench::reference {
namespace {

constexpr std::size_t kWorkspaceBytes = std::size_t{32} << 20;
constexpr int kCandidates = 8;     // heuristic results timed
constexpr int kWarmupLaunches = 3; // per candidate, before each round
constexpr int kTimedLaunches = 10; // per candidate and round, one event pair around them
constexpr int kRounds = 5;         // candidates interleaved round by round; the median is kept

// "NVIDIA H200 (sm_90)": the device as the autotune cache keys it.
std::string device_text() {
  int device = 0;
  PTXBENCH_CUDA_CHECK(cudaGetDevice(&device));
  cudaDeviceProp props{};
  PTXBENCH_CUDA_CHECK(cudaGetDeviceProperties(&props, device));
  return fmt::format("{} (sm_{}{})", props.name, props.major, props.minor);
}

std::string utc_now() {
  return fmt::format("{:%Y-%m-%dT%H:%M:%SZ}",
                     std::chrono::floor<std::chrono::seconds>(std::chrono::system_clock::now()));
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values.empty() ? 0.0 : values[values.size() / 2];
}

MatrixLayout make_layout(std::int64_t rows, std::int64_t cols, std::int64_t ld) {
  cublasLtMatrixLayout_t layout = nullptr;
  PTXBENCH_CUBLAS_CHECK(cublasLtMatrixLayoutCreate(&layout, CUDA_R_16BF,
                                                   static_cast<std::uint64_t>(rows),
                                                   static_cast<std::uint64_t>(cols), ld));
  return MatrixLayout(layout);
}

MatmulDesc make_tn_desc() {
  cublasLtMatmulDesc_t desc = nullptr;
  PTXBENCH_CUBLAS_CHECK(cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F));
  const cublasOperation_t transpose = CUBLAS_OP_T; // op_a: B buffer [K,N] col-major → B[N,K]
  const cublasOperation_t keep = CUBLAS_OP_N;      // op_b: A buffer [K,M] col-major = Aᵀ
  PTXBENCH_CUBLAS_CHECK(cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSA,
                                                       &transpose, sizeof transpose));
  PTXBENCH_CUBLAS_CHECK(
      cublasLtMatmulDescSetAttribute(desc, CUBLASLT_MATMUL_DESC_TRANSB, &keep, sizeof keep));
  return MatmulDesc(desc);
}

class CublasLtGemm final : public Reference {
public:
  explicit CublasLtGemm(const GemmShape& shape)
      : m_shape(shape), m_handle(make_cublaslt_handle()), m_desc(make_tn_desc()),
        m_layout_b(make_layout(shape.k, shape.n, shape.k)), // B buffer: col-major [K,N], ld K
        m_layout_a(make_layout(shape.k, shape.m, shape.k)), // A buffer: col-major [K,M], ld K
        m_layout_c(make_layout(shape.n, shape.m, shape.n)), // C buffer: col-major [N,M], ld N
        m_workspace(kWorkspaceBytes) {}

  // false when cuBLASLt offers no algorithm for this shape. Otherwise the algorithm to run is
  // chosen: the record of an earlier choice for this key, or the candidates timed now.
  bool choose_algorithm(AutotuneCache& cache) {
    cublasLtMatmulPreference_t raw = nullptr;
    PTXBENCH_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&raw));
    const MatmulPreference preference(raw);
    const std::size_t cap = m_workspace.size_bytes();
    PTXBENCH_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(
        raw, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &cap, sizeof cap));
    std::array<cublasLtMatmulHeuristicResult_t, kCandidates> results{};
    int found = 0;
    const cublasStatus_t status = cublasLtMatmulAlgoGetHeuristic(
        m_handle.get(), m_desc.get(), m_layout_b.get(), m_layout_a.get(), m_layout_c.get(),
        m_layout_c.get(), raw, kCandidates, results.data(), &found);
    if (status == CUBLAS_STATUS_NOT_SUPPORTED || (status == CUBLAS_STATUS_SUCCESS && found == 0))
      return false;
    PTXBENCH_CUBLAS_CHECK(status);
    const AutotuneKey key{"cuBLASLt " + cublaslt_version(), device_text(), m_shape, cap};
    auto record = cache.find(key);
    if (!record || static_cast<std::size_t>(found) != record->median_us.size()) {
      record = time_candidates(key, std::span(results.data(), static_cast<std::size_t>(found)));
      cache.put(*record);
    }
    m_heuristic = results[static_cast<std::size_t>(record->chosen)];
    m_record = std::move(*record);
    return true;
  }

  std::string library() const override {
    return "cuBLASLt " + cublaslt_version() + describe(m_record);
  }
  Kind kind() const override { return Kind::library; }

  util::Status run(const PtxbenchCall& call) override {
    PTXBENCH_TRY(check_call(call, 3, 0));
    const float alpha = 1.0f;
    const float beta = 0.0f;
    void* const* buffers = call.buffers; // A, B, C in ABI order
    PTXBENCH_CUBLAS_CHECK(
        cublasLtMatmul(m_handle.get(), m_desc.get(), &alpha, buffers[1], m_layout_b.get(),
                       buffers[0], m_layout_a.get(), &beta, buffers[2], m_layout_c.get(),
                       buffers[2], m_layout_c.get(), &m_heuristic.algo, m_workspace.get(),
                       m_workspace.size_bytes(), static_cast<cudaStream_t>(call.stream)));
    return util::Ok{};
  }

private:
  // Each candidate's median over kRounds rounds of kTimedLaunches launches on scratch operands
  // of this shape (a candidate that fails to launch gets 0: never chosen), in heuristic order.
  AutotuneRecord time_candidates(const AutotuneKey& key,
                                 std::span<const cublasLtMatmulHeuristicResult_t> candidates) {
    AutotuneRecord record;
    record.key = key;
    record.measured_at = utc_now();
    if (candidates.size() == 1) {
      record.median_us = {0.0};
      return record;
    }
    const auto elements = [](std::int64_t rows, std::int64_t cols) { return rows * cols; };
    const std::int64_t a_count = elements(m_shape.m, m_shape.k);
    const std::int64_t b_count = elements(m_shape.n, m_shape.k);
    DeviceBuffer a(static_cast<std::size_t>(a_count) * 2);
    DeviceBuffer b(static_cast<std::size_t>(b_count) * 2);
    DeviceBuffer c(static_cast<std::size_t>(elements(m_shape.m, m_shape.n)) * 2);
    const CudaStream stream = cuda::make_stream();
    PTXBENCH_CUDA_CHECK(launch_fill_bf16(a.get(), a_count, 1, stream.get()));
    PTXBENCH_CUDA_CHECK(launch_fill_bf16(b.get(), b_count, 2, stream.get()));
    const CudaEvent start = cuda::make_event();
    const CudaEvent stop = cuda::make_event();
    std::vector<std::vector<double>> samples(candidates.size());
    std::vector<bool> failed(candidates.size(), false);
    const float alpha = 1.0f;
    const float beta = 0.0f;
    const auto launch = [&](const cublasLtMatmulHeuristicResult_t& candidate) {
      return cublasLtMatmul(m_handle.get(), m_desc.get(), &alpha, b.get(), m_layout_b.get(),
                            a.get(), m_layout_a.get(), &beta, c.get(), m_layout_c.get(), c.get(),
                            m_layout_c.get(), &candidate.algo, m_workspace.get(),
                            m_workspace.size_bytes(), stream.get());
    };
    for (int round = 0; round < kRounds; ++round)
      for (std::size_t i = 0; i < candidates.size(); ++i) {
        if (failed[i])
          continue;
        bool ok = true;
        for (int w = 0; w < kWarmupLaunches && ok; ++w)
          ok = launch(candidates[i]) == CUBLAS_STATUS_SUCCESS;
        PTXBENCH_CUDA_CHECK(cudaEventRecord(start.get(), stream.get()));
        for (int t = 0; t < kTimedLaunches && ok; ++t)
          ok = launch(candidates[i]) == CUBLAS_STATUS_SUCCESS;
        PTXBENCH_CUDA_CHECK(cudaEventRecord(stop.get(), stream.get()));
        PTXBENCH_CUDA_CHECK(cudaEventSynchronize(stop.get()));
        float ms = 0;
        PTXBENCH_CUDA_CHECK(cudaEventElapsedTime(&ms, start.get(), stop.get()));
        if (!ok)
          failed[i] = true;
        else
          samples[i].push_back(1000.0 * ms / kTimedLaunches);
      }
    for (std::size_t i = 0; i < candidates.size(); ++i)
      record.median_us.push_back(failed[i] ? 0.0 : median(samples[i]));
    record.chosen = choose_rank(record.median_us);
    return record;
  }

  GemmShape m_shape;
  CublasLtHandle m_handle;
  MatmulDesc m_desc;
  MatrixLayout m_layout_b;
  MatrixLayout m_layout_a;
  MatrixLayout m_layout_c;
  DeviceBuffer m_workspace;
  cublasLtMatmulHeuristicResult_t m_heuristic{};
  AutotuneRecord m_record;
};

} // namespace

ReferencePtr make_cublaslt_gemm(const GemmShape& shape) {
  return make_cublaslt_gemm(shape, AutotuneCache::shared());
}

ReferencePtr make_cublaslt_gemm(const GemmShape& shape, AutotuneCache& cache) {
  auto gemm = std::make_unique<CublasLtGemm>(shape);
  if (!gemm->choose_algorithm(cache))
    return util::make_error(
        util::ErrorKind::unsupported,
        fmt::format("cuBLASLt has no algorithm for M={} N={} K={}", shape.m, shape.n, shape.k));
  return std::unique_ptr<Reference>(std::move(gemm));
}

} // namespace ptxbench::reference
