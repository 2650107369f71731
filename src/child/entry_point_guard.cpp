#include "child/entry_point_guard.hpp"

#include "compile/imports.hpp"

#include <atomic>
#include <cstdio>
#include <cuda_runtime_api.h>
#include <dlfcn.h>
#include <mutex>

// The runtime header maps these names to their _ptsz variants under per-thread default
// streams; the guard defines every spelling itself.
#undef cudaGetDriverEntryPoint
#undef cudaGetDriverEntryPointByVersion

namespace ptxbench::child {
namespace {

std::mutex g_mutex;
std::atomic<CodeLoading> g_code_loading{CodeLoading::refused};
std::vector<std::string>& refused() {
  static std::vector<std::string> names;
  return names;
}

// Whether `symbol` may be looked up; records and reports it when not.
bool allowed(const char* symbol, void** function, cudaDriverEntryPointQueryResult* status) {
  if (symbol == nullptr || !refuses(symbol, g_code_loading.load()))
    return true;
  {
    std::lock_guard lock(g_mutex);
    refused().emplace_back(symbol);
  }
  std::fprintf(stderr,
               "ptxbench-candidate: refused the driver entry point %s (loading GPU "
               "code at run time is not allowed)\n",
               symbol);
  if (function != nullptr)
    *function = nullptr;
  if (status != nullptr)
    *status = cudaDriverEntryPointSymbolNotFound;
  return false;
}

using ByVersionFn = cudaError_t (*)(const char*, void**, unsigned int, unsigned long long,
                                    cudaDriverEntryPointQueryResult*);
using PlainFn = cudaError_t (*)(const char*, void**, unsigned long long,
                                cudaDriverEntryPointQueryResult*);

// libcudart's own `name`, looked up once per exported function (the caller's static).
template <typename Fn> Fn real(const char* name) {
  return reinterpret_cast<Fn>(dlsym(RTLD_NEXT, name));
}

cudaError_t by_version(ByVersionFn real_fn, const char* symbol, void** function,
                       unsigned int version, unsigned long long flags,
                       cudaDriverEntryPointQueryResult* status) {
  if (!allowed(symbol, function, status) || real_fn == nullptr)
    return cudaErrorSymbolNotFound;
  return real_fn(symbol, function, version, flags, status);
}

cudaError_t unversioned(PlainFn real_fn, const char* symbol, void** function,
                        unsigned long long flags, cudaDriverEntryPointQueryResult* status) {
  if (!allowed(symbol, function, status) || real_fn == nullptr)
    return cudaErrorSymbolNotFound;
  return real_fn(symbol, function, flags, status);
}

} // namespace

void set_code_loading(CodeLoading state) {
  g_code_loading.store(state);
}

bool refuses(std::string_view symbol, CodeLoading state) {
  return state == CodeLoading::refused && compile::loads_gpu_code(symbol);
}

std::vector<std::string> refused_entry_points() {
  std::lock_guard lock(g_mutex);
  return refused();
}

} // namespace ptxbench::child

// The exported definitions (see the header). C linkage and default visibility: these are the
// names a kernel.so's undefined symbols carry.
extern "C" {

__attribute__((visibility("default"))) cudaError_t
cudaGetDriverEntryPointByVersion(const char* symbol, void** function, unsigned int version,
                                 unsigned long long flags,
                                 cudaDriverEntryPointQueryResult* status) {
  using namespace ptxbench::child;
  static const auto next = real<ByVersionFn>("cudaGetDriverEntryPointByVersion");
  return by_version(next, symbol, function, version, flags, status);
}

__attribute__((visibility("default"))) cudaError_t
cudaGetDriverEntryPointByVersion_ptsz(const char* symbol, void** function, unsigned int version,
                                      unsigned long long flags,
                                      cudaDriverEntryPointQueryResult* status) {
  using namespace ptxbench::child;
  static const auto next = real<ByVersionFn>("cudaGetDriverEntryPointByVersion_ptsz");
  return by_version(next, symbol, function, version, flags, status);
}

__attribute__((visibility("default"))) cudaError_t
cudaGetDriverEntryPoint(const char* symbol, void** function, unsigned long long flags,
                        cudaDriverEntryPointQueryResult* status) {
  using namespace ptxbench::child;
  static const auto next = real<PlainFn>("cudaGetDriverEntryPoint");
  return unversioned(next, symbol, function, flags, status);
}

__attribute__((visibility("default"))) cudaError_t
cudaGetDriverEntryPoint_ptsz(const char* symbol, void** function, unsigned long long flags,
                             cudaDriverEntryPointQueryResult* status) {
  using namespace ptxbench::child;
  static const auto next = real<PlainFn>("cudaGetDriverEntryPoint_ptsz");
  return unversioned(next, symbol, function, flags, status);
}

} // extern "C"
