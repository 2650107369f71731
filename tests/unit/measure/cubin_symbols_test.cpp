#include "measure/cubin_symbols.hpp"

#include <gtest/gtest.h>
#include <vector>

namespace ptxbench::measure {
namespace {

TEST(CubinSymbols, NonElfOrTruncatedImagesYieldNoNames) {
  EXPECT_TRUE(cubin_function_names({}).empty());
  std::vector<std::byte> junk(64, std::byte{0x7f});
  EXPECT_TRUE(cubin_function_names(junk).empty());
  std::vector<std::byte> header{std::byte{0x7f}, std::byte{'E'}, std::byte{'L'}, std::byte{'F'}};
  EXPECT_TRUE(cubin_function_names(header).empty());
}

} // namespace
} // namespace ptxbench::measure
