// Check macros and move-only owners for the cuBLAS(Lt) and cuDNN resources of the references.
//
// The CUDA runtime's check (PTXBENCH_CUDA_CHECK) and the owner template come from cuda/; this
// header adds one macro per library used only here, with the same message form, e.g.
//   cuBLASLt error CUBLAS_STATUS_NOT_SUPPORTED at src/reference/gemm_cublaslt.cpp:88:
//   cublasLtMatmul(...)
// A failure throws cuda::LibraryError (a util::Fatal: broken set-up or a bug, never an
// anticipated outcome).
#pragma once

#include "cuda/check.hpp"
#include "cuda/device.hpp"
#include "cuda/owned.hpp"
#include "util/error.hpp"

#include <cstddef>
#include <cublasLt.h>
#include <cudnn.h>
#include <string>
#include <string_view>

namespace ptxbench::reference {

using cuda::LibraryError;
using cuda::Owned;

namespace detail {

void check_cublas(cublasStatus_t status, const char* file, int line, const char* call);
void check_cudnn(cudnnStatus_t status, const char* file, int line, const char* call);
// The frontend's error_object is passed by its integer code and message so this header does
// not need the frontend; the name table lives in library_check.cpp.
void check_cudnn_frontend(int code, const std::string& message, const char* file, int line,
                          const char* call);
std::string_view cudnn_frontend_code_name(int code);

} // namespace detail

#define PTXBENCH_CUBLAS_CHECK(call)                                                                \
  ::ptxbench::reference::detail::check_cublas((call), __FILE__, __LINE__, #call)
#define PTXBENCH_CUDNN_CHECK(call)                                                                 \
  ::ptxbench::reference::detail::check_cudnn((call), __FILE__, __LINE__, #call)
#define PTXBENCH_CUDNN_FE_CHECK(call)                                                              \
  do {                                                                                             \
    auto ptxbench_fe_status_ = (call);                                                             \
    ::ptxbench::reference::detail::check_cudnn_frontend(                                           \
        static_cast<int>(ptxbench_fe_status_.code), ptxbench_fe_status_.err_msg, __FILE__,         \
        __LINE__, #call);                                                                          \
  } while (false)

// Destructors never throw: release failures during unwinding are ignored on purpose.
struct CublasLtHandleRelease {
  void operator()(cublasLtHandle_t h) const { static_cast<void>(cublasLtDestroy(h)); }
};
struct MatmulDescRelease {
  void operator()(cublasLtMatmulDesc_t d) const { static_cast<void>(cublasLtMatmulDescDestroy(d)); }
};
struct MatrixLayoutRelease {
  void operator()(cublasLtMatrixLayout_t d) const {
    static_cast<void>(cublasLtMatrixLayoutDestroy(d));
  }
};
struct MatmulPreferenceRelease {
  void operator()(cublasLtMatmulPreference_t d) const {
    static_cast<void>(cublasLtMatmulPreferenceDestroy(d));
  }
};
struct CudnnHandleRelease {
  void operator()(cudnnHandle_t h) const { static_cast<void>(cudnnDestroy(h)); }
};

using CublasLtHandle = Owned<cublasLtHandle_t, CublasLtHandleRelease>;
using MatmulDesc = Owned<cublasLtMatmulDesc_t, MatmulDescRelease>;
using MatrixLayout = Owned<cublasLtMatrixLayout_t, MatrixLayoutRelease>;
using MatmulPreference = Owned<cublasLtMatmulPreference_t, MatmulPreferenceRelease>;
using CudnnHandle = Owned<cudnnHandle_t, CudnnHandleRelease>;
using CudaEvent = cuda::Event;
using CudaStream = cuda::Stream;
using CudaGraph = cuda::Graph;
using CudaGraphExec = cuda::GraphExec;

CublasLtHandle make_cublaslt_handle();
CudnnHandle make_cudnn_handle();
using cuda::make_event;
using cuda::make_stream;

// Device memory of a fixed size (a workspace, a test tensor); size 0 owns nothing.
class DeviceBuffer {
public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t size_bytes);

  void* get() const { return m_memory.get(); }
  template <typename T> T* as() const { return static_cast<T*>(m_memory.get()); }
  std::size_t size_bytes() const { return m_size_bytes; }

private:
  cuda::DeviceMemory m_memory;
  std::size_t m_size_bytes = 0;
};

// "13.1.0" from cublasLtGetVersion(); "9.19.0" from cudnnGetVersion().
std::string cublaslt_version();
std::string cudnn_version();

} // namespace ptxbench::reference
