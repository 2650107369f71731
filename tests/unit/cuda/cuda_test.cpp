#include "cuda/check.hpp"
#include "cuda/device.hpp"
#include "cuda/owned.hpp"
#include "support/library_error.hpp"

#include <gtest/gtest.h>
#include <string>
#include <type_traits>

namespace ptxbench::cuda {
namespace {

using test_support::library_error_message;

TEST(CheckMacros, CudaFailureNamesLibraryErrorFileLineAndCall) {
  const std::string message =
      library_error_message([] { PTXBENCH_CUDA_CHECK(cudaError_t{cudaErrorInvalidValue}); });
  EXPECT_EQ(message.rfind("CUDA error cudaErrorInvalidValue: ", 0), 0u) << message;
  EXPECT_NE(message.find("cuda_test.cpp:"), std::string::npos) << message;
  EXPECT_NE(message.find("cudaError_t{cudaErrorInvalidValue}"), std::string::npos) << message;
}

TEST(CheckMacros, SuccessDoesNotThrowAndTheErrorCarriesLibraryAndName) {
  EXPECT_NO_THROW(PTXBENCH_CUDA_CHECK(cudaSuccess));
  try {
    PTXBENCH_CUDA_CHECK(cudaError_t{cudaErrorMemoryAllocation});
    FAIL() << "no throw";
  } catch (const util::Fatal& fatal) { // LibraryError is a Fatal
    const auto& error = dynamic_cast<const LibraryError&>(fatal);
    EXPECT_EQ(error.library(), "CUDA");
    EXPECT_EQ(error.error_name(), "cudaErrorMemoryAllocation");
  }
}

util::Status try_call(cudaError_t status) {
  PTXBENCH_CUDA_TRY(status, util::ErrorKind::io);
  return util::Ok{};
}

TEST(CheckMacros, TryReturnsAnErrorOfTheGivenKindWithTheSameMessage) {
  EXPECT_TRUE(try_call(cudaSuccess).has_value());
  const util::Status failed = try_call(cudaErrorInvalidValue);
  ASSERT_FALSE(failed.has_value());
  EXPECT_EQ(failed.error().kind, util::ErrorKind::io);
  EXPECT_EQ(failed.error().message.rfind("CUDA error cudaErrorInvalidValue: ", 0), 0u);
  EXPECT_TRUE(failed.error().message.ends_with(": status")) << failed.error().message;
}

TEST(CheckMacros, FormatIsStable) {
  EXPECT_EQ(
      detail::describe_failure("cuBLASLt", "CUBLAS_STATUS_INVALID_VALUE", "", "a.cpp", 7, "f(x)"),
      "cuBLASLt error CUBLAS_STATUS_INVALID_VALUE at a.cpp:7: f(x)");
  EXPECT_EQ(detail::describe_failure("CUDA", "cudaErrorInvalidValue", "invalid argument", "b.cpp",
                                     9, "g()"),
            "CUDA error cudaErrorInvalidValue: invalid argument at b.cpp:9: g()");
  EXPECT_EQ(error_text(cudaErrorInvalidValue), "cudaErrorInvalidValue: invalid argument");
}

struct CountingRelease {
  static inline int released = 0;
  void operator()(int) const noexcept { ++released; }
};

TEST(Owned, MovesOwnershipAndReleasesOnce) {
  CountingRelease::released = 0;
  {
    Owned<int, CountingRelease> first(42);
    Owned<int, CountingRelease> second(std::move(first));
    EXPECT_FALSE(first);
    EXPECT_EQ(second.get(), 42);
    Owned<int, CountingRelease> third(7);
    third = std::move(second); // releases 7
    EXPECT_EQ(CountingRelease::released, 1);
    third.reset(); // releases 42
    EXPECT_EQ(CountingRelease::released, 2);
    EXPECT_FALSE(third);
  }
  EXPECT_EQ(CountingRelease::released, 2);
  static_assert(!std::is_copy_constructible_v<Stream>);
  static_assert(!std::is_copy_assignable_v<Event>);
  static_assert(std::is_nothrow_move_constructible_v<DeviceMemory>);
  static_assert(std::is_nothrow_move_assignable_v<GraphExec>);
  static_assert(sizeof(Stream) == sizeof(cudaStream_t));
}

TEST(Devices, CountAndRequirementAgree) {
  const util::Status required = require_device();
  EXPECT_EQ(required.has_value(), device_count() > 0);
  if (!required) {
    EXPECT_EQ(required.error().kind, util::ErrorKind::unsupported);
    EXPECT_NE(required.error().message.find("no CUDA device"), std::string::npos)
        << required.error().message;
  }
}

} // namespace
} // namespace ptxbench::cuda
