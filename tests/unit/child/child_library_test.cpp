// libptxbench_child.so's C ABI (child/ptxbench_child.h), loaded as Python's ctypes loads it,
// and the entry-point guard's warm-up window. What needs a GPU (serving a host's load and
// invoke) is in tests/unit/exec/triton_evaluator_gpu.cpp.
#include "child/entry_point_guard.hpp"
#include "child/ptxbench_child.h"
#include "protocol/single_call.hpp"

#include <dlfcn.h>
#include <gtest/gtest.h>

namespace ptxbench::child {
namespace {

using MainFn = int (*)(int, const char* const*);
using HostMainFn = int (*)(int, const char* const*, const PtxbenchChildHost*);

class ChildLibrary : public ::testing::Test {
protected:
  void SetUp() override {
    m_library = dlopen(PTXBENCH_CHILD_LIBRARY, RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(m_library, nullptr) << dlerror();
  }
  void TearDown() override {
    if (m_library != nullptr)
      dlclose(m_library);
  }
  template <typename Fn> Fn symbol(const char* name) {
    return reinterpret_cast<Fn>(dlsym(m_library, name));
  }
  void* m_library = nullptr;
};

TEST_F(ChildLibrary, ExportsBothEntryPointsAndTheGuard) {
  EXPECT_NE(symbol<MainFn>("ptxbench_child_main"), nullptr);
  EXPECT_NE(symbol<HostMainFn>("ptxbench_child_host_main"), nullptr);
  EXPECT_NE(symbol<void*>("cudaGetDriverEntryPointByVersion"), nullptr);
}

TEST_F(ChildLibrary, ABadCommandLineExitsWithTwoAndTouchesNoGpu) {
  const char* argv[] = {"ptxbench-candidate", "--device"};
  EXPECT_EQ(symbol<MainFn>("ptxbench_child_main")(2, argv), 2);
  const char* none[] = {"ptxbench-candidate"};
  EXPECT_EQ(symbol<MainFn>("ptxbench_child_main")(1, none), 2);
}

TEST_F(ChildLibrary, AHostMainWithoutAHostIsRefusedAndItsSingleCallReadsTheSpec) {
  const char* serve[] = {"python3", "--device", "0", "--request-fd", "3", "--reply-fd", "4"};
  EXPECT_EQ(symbol<HostMainFn>("ptxbench_child_host_main")(7, serve, nullptr), 2);
  // The single-call mode (compute-sanitizer's) runs over a host too: a spec it cannot read is
  // the set-up failure, before any CUDA or host call.
  PtxbenchChildHost host{PTXBENCH_CHILD_HOST_VERSION, nullptr, nullptr, nullptr};
  const char* single[] = {"python3",      "--device", "0",           "--single-call",
                          "/nonexistent", "--inputs", "/nonexistent"};
  EXPECT_EQ(symbol<HostMainFn>("ptxbench_child_host_main")(7, single, &host),
            protocol::kSingleCallSetupFailed);
}

TEST(EntryPointGuard, CodeLoadingIsRefusedOutsideTheWarmUpOnly) {
  EXPECT_TRUE(refuses("cuModuleLoadData", CodeLoading::refused));
  EXPECT_TRUE(refuses("cuLibraryLoadData", CodeLoading::refused));
  EXPECT_FALSE(refuses("cuModuleLoadData", CodeLoading::warm_up));
  EXPECT_FALSE(refuses("cuTensorMapEncodeTiled", CodeLoading::refused));
  EXPECT_FALSE(refuses("cuTensorMapEncodeTiled", CodeLoading::warm_up));
}

} // namespace
} // namespace ptxbench::child
