#include "reference/library_check.hpp"

#include <array>
#include <fmt/format.h>

namespace ptxbench::reference {
namespace detail {

void check_cublas(cublasStatus_t status, const char* file, int line, const char* call) {
  if (status == CUBLAS_STATUS_SUCCESS)
    return;
  cuda::detail::throw_library_error("cuBLASLt", cublasLtGetStatusName(status), "", file, line,
                                    call);
}

void check_cudnn(cudnnStatus_t status, const char* file, int line, const char* call) {
  if (status == CUDNN_STATUS_SUCCESS)
    return;
  cuda::detail::throw_library_error("cuDNN", cudnnGetErrorString(status), "", file, line, call);
}

// In the order of cudnn_frontend::error_code_t (checked in sdpa_cudnn.cpp).
constexpr std::array<std::string_view, 16> kFrontendCodeNames{
    "OK",
    "ATTRIBUTE_NOT_SET",
    "SHAPE_DEDUCTION_FAILED",
    "INVALID_TENSOR_NAME",
    "INVALID_VARIANT_PACK",
    "GRAPH_NOT_SUPPORTED",
    "GRAPH_EXECUTION_PLAN_CREATION_FAILED",
    "GRAPH_EXECUTION_FAILED",
    "HEURISTIC_QUERY_FAILED",
    "UNSUPPORTED_GRAPH_FORMAT",
    "CUDA_API_FAILED",
    "CUDNN_BACKEND_API_FAILED",
    "INVALID_CUDA_DEVICE",
    "HANDLE_ERROR",
    "INVALID_VALUE",
    "NVRTC_COMPILATION_FAILED",
};

std::string_view cudnn_frontend_code_name(int code) {
  if (code < 0 || code >= static_cast<int>(kFrontendCodeNames.size()))
    return "UNKNOWN_CODE";
  return kFrontendCodeNames[static_cast<std::size_t>(code)];
}

void check_cudnn_frontend(int code, const std::string& message, const char* file, int line,
                          const char* call) {
  if (code == 0)
    return;
  cuda::detail::throw_library_error("cuDNN frontend", cudnn_frontend_code_name(code), message, file,
                                    line, call);
}

} // namespace detail

CublasLtHandle make_cublaslt_handle() {
  cublasLtHandle_t handle = nullptr;
  PTXBENCH_CUBLAS_CHECK(cublasLtCreate(&handle));
  return CublasLtHandle(handle);
}

CudnnHandle make_cudnn_handle() {
  cudnnHandle_t handle = nullptr;
  PTXBENCH_CUDNN_CHECK(cudnnCreate(&handle));
  return CudnnHandle(handle);
}

DeviceBuffer::DeviceBuffer(std::size_t size_bytes) : m_size_bytes(size_bytes) {
  if (size_bytes == 0)
    return;
  void* memory = nullptr;
  PTXBENCH_CUDA_CHECK(cudaMalloc(&memory, size_bytes));
  m_memory = cuda::DeviceMemory(memory);
}

namespace {
std::string dotted_version(std::size_t version) {
  return fmt::format("{}.{}.{}", version / 10000, version / 100 % 100, version % 100);
}
} // namespace

std::string cublaslt_version() {
  return dotted_version(cublasLtGetVersion());
}
std::string cudnn_version() {
  return dotted_version(cudnnGetVersion());
}

} // namespace ptxbench::reference
