// One check macro per GPU library (CUDA runtime, CUPTI). A failing call is described by
// library, file:line, the call's text and the library's error name.
//   PTXBENCH_*_CHECK(call)  throws util::Fatal — broken set-up or a bug.
//   PTXBENCH_*_TRY(call)    returns util::Error(kind) from the enclosing function, whose
//                           return type is an Expected — an anticipated failure.
// NVML is loaded with dlopen; its macros live in nvml_monitor.cpp next to the function table.
#pragma once

#include "util/error.hpp"

#include <cuda_runtime.h>
#include <cupti.h>

#include <string>
#include <string_view>

namespace ptxbench::measure::detail {

std::string describe_failure(std::string_view library, std::string_view error_name,
                             const char* call, const char* file, int line);
std::string cupti_error_name(CUptiResult result);
// Missing profiling permission, an unsupported device or configuration: `unsupported`;
// any other failure: `otherwise`.
util::ErrorKind cupti_error_kind(CUptiResult result, util::ErrorKind otherwise);

// Success when the CUDA runtime sees at least one device; else an `unsupported` error that
// names the runtime's answer (no driver, no device).
util::Status require_cuda_device();

} // namespace ptxbench::measure::detail

#define PTXBENCH_CUDA_CHECK(call)                                                                \
  do {                                                                                           \
    const cudaError_t ptxbench_status_ = (call);                                                 \
    if (ptxbench_status_ != cudaSuccess)                                                         \
      throw ::ptxbench::util::Fatal(::ptxbench::measure::detail::describe_failure(               \
          "CUDA", cudaGetErrorName(ptxbench_status_), #call, __FILE__, __LINE__));              \
  } while (0)

#define PTXBENCH_CUDA_TRY(call, kind)                                                            \
  do {                                                                                           \
    const cudaError_t ptxbench_status_ = (call);                                                 \
    if (ptxbench_status_ != cudaSuccess)                                                         \
      return ::ptxbench::util::make_error(                                                       \
          kind, ::ptxbench::measure::detail::describe_failure(                                   \
                    "CUDA", cudaGetErrorName(ptxbench_status_), #call, __FILE__, __LINE__));    \
  } while (0)

#define PTXBENCH_CUPTI_CHECK(call)                                                               \
  do {                                                                                           \
    const CUptiResult ptxbench_status_ = (call);                                                 \
    if (ptxbench_status_ != CUPTI_SUCCESS)                                                       \
      throw ::ptxbench::util::Fatal(::ptxbench::measure::detail::describe_failure(               \
          "CUPTI", ::ptxbench::measure::detail::cupti_error_name(ptxbench_status_), #call,       \
          __FILE__, __LINE__));                                                                  \
  } while (0)

#define PTXBENCH_CUPTI_TRY(call, kind)                                                           \
  do {                                                                                           \
    const CUptiResult ptxbench_status_ = (call);                                                 \
    if (ptxbench_status_ != CUPTI_SUCCESS)                                                       \
      return ::ptxbench::util::make_error(                                                       \
          ::ptxbench::measure::detail::cupti_error_kind(ptxbench_status_, kind),                 \
          ::ptxbench::measure::detail::describe_failure(                                         \
              "CUPTI", ::ptxbench::measure::detail::cupti_error_name(ptxbench_status_), #call,   \
              __FILE__, __LINE__));                                                              \
  } while (0)
