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
// The heuristic is asked once in the factory (one result, under a 32 MiB workspace cap, the
// Hopper default of PyTorch) and the workspace is owned here, so run() only launches.
#include "reference/library_check.hpp"
#include "reference/library_factories.hpp"

#include <fmt/format.h>

namespace ptxbench::reference {
namespace {

constexpr std::size_t kWorkspaceBytes = std::size_t{32} << 20;

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

  // false when cuBLASLt offers no algorithm for this shape.
  bool choose_algorithm() {
    cublasLtMatmulPreference_t raw = nullptr;
    PTXBENCH_CUBLAS_CHECK(cublasLtMatmulPreferenceCreate(&raw));
    const MatmulPreference preference(raw);
    const std::size_t cap = m_workspace.size_bytes();
    PTXBENCH_CUBLAS_CHECK(cublasLtMatmulPreferenceSetAttribute(
        raw, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &cap, sizeof cap));
    int found = 0;
    const cublasStatus_t status = cublasLtMatmulAlgoGetHeuristic(
        m_handle.get(), m_desc.get(), m_layout_b.get(), m_layout_a.get(), m_layout_c.get(),
        m_layout_c.get(), raw, 1, &m_heuristic, &found);
    if (status == CUBLAS_STATUS_NOT_SUPPORTED)
      return false;
    PTXBENCH_CUBLAS_CHECK(status);
    return found > 0;
  }

  std::string library() const override { return "cuBLASLt " + cublaslt_version(); }
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
  GemmShape m_shape;
  CublasLtHandle m_handle;
  MatmulDesc m_desc;
  MatrixLayout m_layout_b;
  MatrixLayout m_layout_a;
  MatrixLayout m_layout_c;
  DeviceBuffer m_workspace;
  cublasLtMatmulHeuristicResult_t m_heuristic{};
};

} // namespace

ReferencePtr make_cublaslt_gemm(const GemmShape& shape) {
  auto gemm = std::make_unique<CublasLtGemm>(shape);
  if (!gemm->choose_algorithm())
    return util::make_error(
        util::ErrorKind::unsupported,
        fmt::format("cuBLASLt has no algorithm for M={} N={} K={}", shape.m, shape.n, shape.k));
  return std::unique_ptr<Reference>(std::move(gemm));
}

} // namespace ptxbench::reference
