// The CUDA runtime check macros of exec/ (one per library, STYLE.md). A failing call is
// described by file:line, the call's text and the error's name and text.
//   PTXBENCH_EXEC_CUDA_CHECK(call)     throws util::Fatal — a bug or broken set-up.
//   PTXBENCH_EXEC_CUDA_TRY(call, kind) returns util::Error(kind) from the enclosing function,
//                                      whose return type is an Expected.
#pragma once

#include "util/error.hpp"

#include <cuda_runtime.h>

#include <string>

namespace ptxbench::exec::detail {

std::string describe_cuda_failure(cudaError_t status, const char* call, const char* file,
                                  int line);
// "cudaErrorIllegalAddress: an illegal memory access was encountered".
std::string cuda_error_text(int status);

} // namespace ptxbench::exec::detail

#define PTXBENCH_EXEC_CUDA_CHECK(call)                                                           \
  do {                                                                                           \
    const cudaError_t ptxbench_exec_status_ = (call);                                            \
    if (ptxbench_exec_status_ != cudaSuccess)                                                    \
      throw ::ptxbench::util::Fatal(::ptxbench::exec::detail::describe_cuda_failure(             \
          ptxbench_exec_status_, #call, __FILE__, __LINE__));                                    \
  } while (0)

#define PTXBENCH_EXEC_CUDA_TRY(call, kind)                                                       \
  do {                                                                                           \
    const cudaError_t ptxbench_exec_status_ = (call);                                            \
    if (ptxbench_exec_status_ != cudaSuccess)                                                    \
      return ::ptxbench::util::make_error(kind,                                                  \
                                          ::ptxbench::exec::detail::describe_cuda_failure(       \
                                              ptxbench_exec_status_, #call, __FILE__, __LINE__)); \
  } while (0)
