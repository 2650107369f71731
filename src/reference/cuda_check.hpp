// Check macros and move-only owners for the GPU resources of the references.
//
// Every CUDA runtime, cuBLAS(Lt), cuDNN and cuDNN-frontend call of this module goes through
// one macro per library. A failure throws LibraryError (a util::Fatal: broken set-up or a bug,
// never an anticipated outcome) whose message names the library, file:line, the call text and
// the library's own error name, e.g.
//   cuBLASLt error CUBLAS_STATUS_NOT_SUPPORTED at src/reference/gemm_cublaslt.cpp:88:
//   cublasLtMatmul(...)
// The owners release their resource in the destructor and can be moved, never copied.
#pragma once

#include "util/error.hpp"

#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <cudnn.h>

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>

namespace ptxbench::reference {

class LibraryError : public util::Fatal {
public:
  LibraryError(std::string library, std::string error_name, std::string message)
      : util::Fatal(std::move(message)), m_library(std::move(library)),
        m_error_name(std::move(error_name)) {}
  const std::string& library() const { return m_library; }
  const std::string& error_name() const { return m_error_name; }

private:
  std::string m_library;
  std::string m_error_name;
};

namespace detail {

// "<library> error <name>[: detail] at <file>:<line>: <call>"
std::string format_library_error(std::string_view library, std::string_view error_name,
                                 std::string_view detail, std::string_view file, int line,
                                 std::string_view call);
[[noreturn]] void throw_library_error(std::string_view library, std::string_view error_name,
                                      std::string_view detail, const char* file, int line,
                                      const char* call);

void check_cuda(cudaError_t status, const char* file, int line, const char* call);
void check_cublas(cublasStatus_t status, const char* file, int line, const char* call);
void check_cudnn(cudnnStatus_t status, const char* file, int line, const char* call);
// The frontend's error_object is passed by its integer code and message so this header does
// not need the frontend; the name table lives in cuda_check.cpp.
void check_cudnn_frontend(int code, const std::string& message, const char* file, int line,
                          const char* call);
std::string_view cudnn_frontend_code_name(int code);

} // namespace detail

#define PTXBENCH_CUDA_CHECK(call)                                                                  \
  ::ptxbench::reference::detail::check_cuda((call), __FILE__, __LINE__, #call)
#define PTXBENCH_CUBLAS_CHECK(call)                                                                \
  ::ptxbench::reference::detail::check_cublas((call), __FILE__, __LINE__, #call)
#define PTXBENCH_CUDNN_CHECK(call)                                                                 \
  ::ptxbench::reference::detail::check_cudnn((call), __FILE__, __LINE__, #call)
#define PTXBENCH_CUDNN_FE_CHECK(call)                                                              \
  do {                                                                                             \
    auto ptxbench_fe_status_ = (call);                                                             \
    ::ptxbench::reference::detail::check_cudnn_frontend(static_cast<int>(ptxbench_fe_status_.code),\
                                                        ptxbench_fe_status_.err_msg, __FILE__,     \
                                                        __LINE__, #call);                          \
  } while (false)

// Move-only owner of a handle-like value with a release function; `Release` is a function
// object type so the owner stays one pointer wide.
template <typename Handle, typename Release> class Owned {
public:
  Owned() = default;
  explicit Owned(Handle handle) : m_handle(handle) {}
  Owned(Owned&& other) noexcept : m_handle(std::exchange(other.m_handle, Handle{})) {}
  Owned& operator=(Owned&& other) noexcept {
    if (this != &other) {
      reset();
      m_handle = std::exchange(other.m_handle, Handle{});
    }
    return *this;
  }
  Owned(const Owned&) = delete;
  Owned& operator=(const Owned&) = delete;
  ~Owned() { reset(); }

  Handle get() const { return m_handle; }
  explicit operator bool() const { return m_handle != Handle{}; }

private:
  void reset() {
    if (m_handle != Handle{}) Release{}(m_handle);
    m_handle = Handle{};
  }
  Handle m_handle{};
};

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
struct DeviceFree {
  void operator()(void* p) const { static_cast<void>(cudaFree(p)); }
};
struct EventRelease {
  void operator()(cudaEvent_t e) const { static_cast<void>(cudaEventDestroy(e)); }
};
struct StreamRelease {
  void operator()(cudaStream_t s) const { static_cast<void>(cudaStreamDestroy(s)); }
};
struct GraphRelease {
  void operator()(cudaGraph_t g) const { static_cast<void>(cudaGraphDestroy(g)); }
};
struct GraphExecRelease {
  void operator()(cudaGraphExec_t g) const { static_cast<void>(cudaGraphExecDestroy(g)); }
};

using CublasLtHandle = Owned<cublasLtHandle_t, CublasLtHandleRelease>;
using MatmulDesc = Owned<cublasLtMatmulDesc_t, MatmulDescRelease>;
using MatrixLayout = Owned<cublasLtMatrixLayout_t, MatrixLayoutRelease>;
using MatmulPreference = Owned<cublasLtMatmulPreference_t, MatmulPreferenceRelease>;
using CudnnHandle = Owned<cudnnHandle_t, CudnnHandleRelease>;
using CudaEvent = Owned<cudaEvent_t, EventRelease>;
using CudaStream = Owned<cudaStream_t, StreamRelease>;
using CudaGraph = Owned<cudaGraph_t, GraphRelease>;
using CudaGraphExec = Owned<cudaGraphExec_t, GraphExecRelease>;

CublasLtHandle make_cublaslt_handle();
CudnnHandle make_cudnn_handle();
CudaEvent make_event();
CudaStream make_stream();

// Device memory of a fixed size (a workspace, a test tensor); size 0 owns nothing.
class DeviceBuffer {
public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t size_bytes);

  void* get() const { return m_memory.get(); }
  template <typename T> T* as() const { return static_cast<T*>(m_memory.get()); }
  std::size_t size_bytes() const { return m_size_bytes; }

private:
  Owned<void*, DeviceFree> m_memory;
  std::size_t m_size_bytes = 0;
};

// "13.1.0" from cublasLtGetVersion(); "9.19.0" from cudnnGetVersion().
std::string cublaslt_version();
std::string cudnn_version();

// unsupported when this process sees no CUDA device (CPU-only CI), without creating a context.
util::Status require_cuda_device();

} // namespace ptxbench::reference
