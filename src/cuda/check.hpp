// The one way a failing GPU-library call becomes an error.
//
// A failure is described by library, the library's own error name, an optional detail, file:line
// and the call's text, always in this form:
//   CUDA error cudaErrorMemoryAllocation: out of memory at src/exec/buffers.cpp:41: cudaMalloc(...)
//   cuBLASLt error CUBLAS_STATUS_NOT_SUPPORTED at src/reference/gemm_cublaslt.cpp:88:
//   cublasLtMatmul(...)
// Two macros per library (STYLE.md: one check per library):
//   PTXBENCH_<LIB>_CHECK(call)      throws LibraryError (a util::Fatal) — broken set-up or a bug;
//   PTXBENCH_<LIB>_TRY(call, kind)  returns util::Error(kind) from the enclosing function, whose
//                                   return type is an Expected — an anticipated failure.
// This header holds the CUDA runtime's pair; the modules that use cuBLAS(Lt), cuDNN and CUPTI
// define theirs on `throw_library_error` and `describe_failure`, so every message reads the same.
#pragma once

#include "util/error.hpp"

#include <cuda_runtime_api.h>
#include <string>
#include <string_view>
#include <utility>

namespace ptxbench::cuda {

class LibraryError : public util::Fatal {
public:
  LibraryError(std::string library, std::string error_name, const std::string& message)
      : util::Fatal(message), m_library(std::move(library)), m_error_name(std::move(error_name)) {}
  const std::string& library() const { return m_library; }
  const std::string& error_name() const { return m_error_name; }

private:
  std::string m_library;
  std::string m_error_name;
};

// "cudaErrorIllegalAddress: an illegal memory access was encountered".
std::string error_text(cudaError_t status);

namespace detail {

// "<library> error <name>[: detail] at <file>:<line>: <call>"
std::string describe_failure(std::string_view library, std::string_view error_name,
                             std::string_view detail, std::string_view file, int line,
                             std::string_view call);
[[noreturn]] void throw_library_error(std::string_view library, std::string_view error_name,
                                      std::string_view detail, const char* file, int line,
                                      const char* call);
void check_runtime(cudaError_t status, const char* file, int line, const char* call);
util::Error runtime_failure(cudaError_t status, util::ErrorKind kind, const char* file, int line,
                            const char* call);

} // namespace detail
} // namespace ptxbench::cuda

#define PTXBENCH_CUDA_CHECK(call)                                                                  \
  ::ptxbench::cuda::detail::check_runtime((call), __FILE__, __LINE__, #call)

#define PTXBENCH_CUDA_TRY(call, kind)                                                              \
  do {                                                                                             \
    const cudaError_t ptxbench_cuda_status_ = (call);                                              \
    if (ptxbench_cuda_status_ != cudaSuccess)                                                      \
      return ::ptxbench::cuda::detail::runtime_failure(ptxbench_cuda_status_, kind, __FILE__,      \
                                                       __LINE__, #call);                           \
  } while (false)
