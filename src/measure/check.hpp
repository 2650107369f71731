// The CUPTI check macros (the CUDA runtime's are in cuda/check.hpp; one pair per library).
// A failing call is described as every GPU-library failure is (cuda/check.hpp):
//   PTXBENCH_CUPTI_CHECK(call)        throws cuda::LibraryError — broken set-up or a bug.
//   PTXBENCH_CUPTI_TRY(call, kind)    returns util::Error from the enclosing function, whose
//                                     return type is an Expected — an anticipated failure; the
//                                     kind is `unsupported` for missing permission or support.
// NVML is loaded with dlopen; its macros live in nvml_monitor.cpp next to the function table.
#pragma once

#include "cuda/check.hpp"
#include "util/error.hpp"

#include <cupti.h>
#include <string>

namespace ptxbench::measure::detail {

std::string cupti_error_name(CUptiResult result);
// Missing profiling permission, an unsupported device or configuration: `unsupported`;
// any other failure: `otherwise`.
util::ErrorKind cupti_error_kind(CUptiResult result, util::ErrorKind otherwise);

} // namespace ptxbench::measure::detail

#define PTXBENCH_CUPTI_CHECK(call)                                                                 \
  do {                                                                                             \
    const CUptiResult ptxbench_status_ = (call);                                                   \
    if (ptxbench_status_ != CUPTI_SUCCESS)                                                         \
      ::ptxbench::cuda::detail::throw_library_error(                                               \
          "CUPTI", ::ptxbench::measure::detail::cupti_error_name(ptxbench_status_), "", __FILE__,  \
          __LINE__, #call);                                                                        \
  } while (0)

#define PTXBENCH_CUPTI_TRY(call, kind)                                                             \
  do {                                                                                             \
    const CUptiResult ptxbench_status_ = (call);                                                   \
    if (ptxbench_status_ != CUPTI_SUCCESS)                                                         \
      return ::ptxbench::util::make_error(                                                         \
          ::ptxbench::measure::detail::cupti_error_kind(ptxbench_status_, kind),                   \
          ::ptxbench::cuda::detail::describe_failure(                                              \
              "CUPTI", ::ptxbench::measure::detail::cupti_error_name(ptxbench_status_), "",        \
              __FILE__, __LINE__, #call));                                                         \
  } while (0)
