#include "report/cairo_library.hpp"

#include <dlfcn.h>
#include <fmt/core.h>

namespace ptxbench::report {
namespace {

constexpr const char* kLibrary = "libcairo.so.2";

template <typename Fn> bool resolve(void* handle, const char* symbol, Fn& out) {
  out = reinterpret_cast<Fn>(dlsym(handle, symbol));
  return out != nullptr;
}

util::Expected<const CairoApi*> load() {
  // Never closed: the table lives as long as the process.
  void* handle = dlopen(kLibrary, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr)
    return util::make_error(
        util::ErrorKind::not_found,
        fmt::format("figures need cairo (Debian package libcairo2): {}", dlerror()));
  static CairoApi api;
#define PTXBENCH_CAIRO_RESOLVE(name)                                                               \
  if (!resolve(handle, #name, api.name))                                                           \
    return util::make_error(                                                                       \
        util::ErrorKind::unsupported,                                                              \
        fmt::format("{} lacks {} (cairo 1.16 or newer is needed)", kLibrary, #name));
  PTXBENCH_CAIRO_FUNCTIONS(PTXBENCH_CAIRO_RESOLVE)
#undef PTXBENCH_CAIRO_RESOLVE
  return &api;
}

} // namespace

util::Expected<const CairoApi*> cairo_api() {
  static const util::Expected<const CairoApi*> loaded = load();
  return loaded;
}

} // namespace ptxbench::report
