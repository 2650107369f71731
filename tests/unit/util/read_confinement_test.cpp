// util/read_confinement.hpp: which folders an allowance takes whole, which entry by entry, and a
// real process confined by a Landlock ruleset.
#include "util/fs.hpp"
#include "util/read_confinement.hpp"
#include "util/subprocess.hpp"
#include "util/temp_folder.hpp"

#include <algorithm>
#include <gtest/gtest.h>

using namespace ptxbench;
namespace fs = std::filesystem;

namespace {

bool has(const std::vector<fs::path>& paths, const fs::path& path) {
  return std::ranges::find(paths, path) != paths.end();
}

void touch(const fs::path& file) {
  fs::create_directories(file.parent_path());
  ASSERT_TRUE(util::write_file_atomic(file, "bytes\n"));
}

} // namespace

TEST(ReadConfinement, KernelLibrariesAreKnownByTheirSharedObjectsNames) {
  EXPECT_TRUE(util::is_kernel_library("libcublasLt.so.13"));
  EXPECT_TRUE(util::is_kernel_library("libcudnn_engines_precompiled.so.9"));
  EXPECT_TRUE(util::is_kernel_library("libtorch_cuda.so"));
  EXPECT_FALSE(util::is_kernel_library("libcudart.so.13"));
  EXPECT_FALSE(util::is_kernel_library("libcupti.so.13"));
  EXPECT_FALSE(util::is_kernel_library("libcuda.so.1"));
}

TEST(ReadConfinement, AFolderHoldingAKernelLibraryIsAllowedEntryByEntryWithoutIt) {
  auto root = util::TempFolder::make("ptxbench-reads", "a test tree");
  ASSERT_TRUE(root) << root.error().message;
  const fs::path toolkit = root->path();
  touch(toolkit / "include" / "cuda.h");
  touch(toolkit / "lib" / "libcudart.so.13");
  touch(toolkit / "lib" / "libcublasLt.so.13");
  touch(toolkit / "lib" / "stubs" / "libcuda.so");
  touch(toolkit / "lib" / "deeper" / "libcudnn.so.9");
  touch(toolkit / "lib" / "deeper" / "notes.txt");
  fs::create_directory_symlink(toolkit / "lib", toolkit / "lib64");
  util::ReadAllowance reads;
  util::allow_all_but_kernel_libraries(toolkit, reads);
  EXPECT_TRUE(has(reads.trees, toolkit / "include"));
  EXPECT_TRUE(has(reads.trees, toolkit / "lib" / "stubs"));
  EXPECT_TRUE(has(reads.files, toolkit / "lib" / "libcudart.so.13"));
  EXPECT_TRUE(has(reads.files, toolkit / "lib" / "deeper" / "notes.txt"));
  EXPECT_FALSE(has(reads.trees, toolkit));
  EXPECT_FALSE(has(reads.trees, toolkit / "lib"));
  EXPECT_FALSE(has(reads.files, toolkit / "lib64")); // a link would allow all it leads to
  for (const auto& path : reads.files)
    EXPECT_FALSE(util::is_kernel_library(path.filename().string())) << path;
}

TEST(ReadConfinement, AFolderKeptOutIsNeverAllowedNorAnyFolderAboveItWhole) {
  auto root = util::TempFolder::make("ptxbench-reads", "a test tree");
  ASSERT_TRUE(root) << root.error().message;
  const fs::path home = root->path();
  touch(home / ".cache" / "ptxbench" / "compile" / "abc" / "kernel.so");
  touch(home / ".cache" / "other" / "x");
  touch(home / "lib" / "libfoo.so");
  touch(home / "notes.txt");
  util::ReadAllowance reads;
  reads.kept_out = {home / ".cache" / "ptxbench"};
  util::allow_all_but_kernel_libraries(home, reads);
  EXPECT_FALSE(has(reads.trees, home));
  EXPECT_FALSE(has(reads.trees, home / ".cache"));
  EXPECT_TRUE(has(reads.trees, home / ".cache" / "other"));
  EXPECT_TRUE(has(reads.trees, home / "lib"));
  EXPECT_TRUE(has(reads.files, home / "notes.txt"));
  for (const auto& path : reads.trees)
    EXPECT_EQ(path.string().find("ptxbench/compile"), std::string::npos) << path;
  for (const auto& path : reads.files)
    EXPECT_EQ(path.string().find(".cache/ptxbench"), std::string::npos) << path;
  util::ReadAllowance direct;
  direct.kept_out = reads.kept_out;
  util::allow_all_but_kernel_libraries(home / ".cache" / "ptxbench", direct);
  EXPECT_TRUE(direct.trees.empty() && direct.files.empty());
}

TEST(ReadConfinement, AConfinedProcessReadsWhatItIsAllowedAndNothingElse) {
  if (auto probe = util::make_read_ruleset({}); !probe) {
    ASSERT_EQ(probe.error().kind, util::ErrorKind::unsupported) << probe.error().message;
    GTEST_SKIP() << "this kernel has no Landlock: " << probe.error().message;
  }
  auto root = util::TempFolder::make("ptxbench-reads", "a test tree");
  ASSERT_TRUE(root) << root.error().message;
  touch(root->path() / "allowed" / "a.txt");
  touch(root->path() / "denied" / "b.txt");
  util::ReadAllowance reads;
  reads.trees = {"/usr/bin", "/etc", root->path() / "allowed"};
  util::allow_mapped_library_folders(reads);
  auto ruleset = util::make_read_ruleset(reads);
  ASSERT_TRUE(ruleset) << ruleset.error().message;
  util::PosixProcessRunner runner;
  util::ProcessOptions options;
  options.read_ruleset = ruleset->get();
  auto allowed = runner.run({"cat", (root->path() / "allowed" / "a.txt").string()}, options);
  ASSERT_TRUE(allowed) << allowed.error().message;
  EXPECT_TRUE(allowed->succeeded()) << allowed->err;
  EXPECT_EQ(allowed->out, "bytes\n");
  auto denied = runner.run({"cat", (root->path() / "denied" / "b.txt").string()}, options);
  ASSERT_TRUE(denied) << denied.error().message;
  EXPECT_FALSE(denied->succeeded());
  EXPECT_NE(denied->err.find("Permission denied"), std::string::npos) << denied->err;
  // The parent is not confined, and a process started without the ruleset is not either.
  auto free = runner.run({"cat", (root->path() / "denied" / "b.txt").string()}, {});
  ASSERT_TRUE(free) << free.error().message;
  EXPECT_TRUE(free->succeeded()) << free->err;
}
