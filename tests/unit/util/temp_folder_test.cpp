// TempFolder: a fresh folder per make(), gone with its owner, its move leaving nothing to remove.
#include "util/temp_folder.hpp"

#include <fstream>
#include <gtest/gtest.h>

namespace ptxbench::util {
namespace {

TEST(TempFolder, IsFreshAndGoesWithEverythingInIt) {
  std::filesystem::path first;
  {
    auto a = TempFolder::make("ptxbench-test", "a test");
    auto b = TempFolder::make("ptxbench-test", "a test");
    ASSERT_TRUE(a);
    ASSERT_TRUE(b);
    EXPECT_NE(a->path(), b->path());
    EXPECT_EQ(a->path().filename().string().rfind("ptxbench-test-", 0), 0u);
    std::filesystem::create_directories(a->path() / "cache");
    std::ofstream(a->path() / "cache" / "k.cubin") << "x";
    first = a->path();
  }
  EXPECT_FALSE(std::filesystem::exists(first));
}

TEST(TempFolder, AMovedFromOwnerRemovesNothing) {
  auto made = TempFolder::make("ptxbench-test", "a test");
  ASSERT_TRUE(made);
  const std::filesystem::path path = made->path();
  {
    TempFolder moved(std::move(*made));
    EXPECT_EQ(moved.path(), path);
  }
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_TRUE(made->path().empty());
}

} // namespace
} // namespace ptxbench::util
