#include "util/fs.hpp"
#include "util/hash.hpp"

#include <gtest/gtest.h>

using namespace ptxbench::util;

TEST(Hash, Sha1AndSha256MatchKnownVectors) {
  EXPECT_EQ(sha1_hex("abc"), "a9993e364706816aba3e25717850c26c9cd0d89d");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(Fs, AtomicWriteReplacesWholeFileAndCreatesFolders) {
  auto dir = std::filesystem::temp_directory_path() / "ptxbench_fs_test";
  std::filesystem::remove_all(dir);
  auto file = dir / "a" / "b.txt";
  ASSERT_TRUE(write_file_atomic(file, "first"));
  ASSERT_TRUE(write_file_atomic(file, "second"));
  EXPECT_EQ(*read_file(file), "second");
  std::filesystem::remove_all(dir);
}

TEST(Fs, AppendLineRepairsAMissingNewline) {
  auto file = std::filesystem::temp_directory_path() / "ptxbench_append_test.jsonl";
  ASSERT_TRUE(write_file_atomic(file, "{\"a\":1}"));
  ASSERT_TRUE(append_line(file, "{\"b\":2}"));
  EXPECT_EQ(*read_file(file), "{\"a\":1}\n{\"b\":2}\n");
  std::filesystem::remove(file);
}

TEST(Fs, ReadingAMissingFileIsNotFound) {
  auto result = read_file("/nonexistent/ptxbench/file");
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().kind, ErrorKind::not_found);
}
