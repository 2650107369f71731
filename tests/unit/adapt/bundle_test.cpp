#include "adapt/bundle.hpp"
#include "adapt_test_support.hpp"
#include "util/hash.hpp"
#include "util/strings.hpp"
#include "util/subprocess.hpp"

#include <gtest/gtest.h>

namespace ptxbench::adapt {
namespace {

namespace fs = std::filesystem;

util::ProcessResult run(const std::vector<std::string>& args) {
  util::PosixProcessRunner runner;
  util::ProcessOptions options;
  options.timeout = std::chrono::seconds(60);
  auto result = runner.run(args, options);
  EXPECT_TRUE(result) << result.error().message;
  return result ? *result : util::ProcessResult{};
}

void write_dataset(const test_support::ScratchDir& dir) {
  dir.write("fixit/collect/failures.jsonl", "{\"id\":\"a\"}\n");
  dir.write("fixit/build/sft.jsonl", std::string(1500, 'x') + "\n");
  dir.write("fixit/build/manifest.json", "{}\n");
  auto store = test::open_run(dir.path() / "fixit/repair/run"); // a live database: left out
}

TEST(Bundle, SystemTarReadsTheArchiveWithFixedOwnersAndTimes) {
  test_support::ScratchDir dir;
  write_dataset(dir);
  auto result = write_bundle(dir.path(), DatasetKind::fixit, dir.path() / "out.tar.gz");
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ(result->files, 4);
  const auto listing = run({"tar", "-tvzf", (dir.path() / "out.tar.gz").string()});
  ASSERT_TRUE(listing.succeeded()) << listing.err;
  EXPECT_EQ(util::split_lines(listing.out).size(), 4u) << listing.out;
  EXPECT_NE(listing.out.find("0/0"), std::string::npos) << listing.out;
  EXPECT_NE(listing.out.find("1970-01-01"), std::string::npos) << listing.out;
  EXPECT_EQ(listing.out.find("run.sqlite"), std::string::npos) << listing.out;
  const fs::path unpacked = dir.path() / "unpacked";
  fs::create_directories(unpacked);
  ASSERT_TRUE(run({"tar", "-xzf", (dir.path() / "out.tar.gz").string(), "-C", unpacked.string()})
                  .succeeded());
  EXPECT_EQ(test::read(unpacked / "ptxbench-data/fixit/build/sft.jsonl"),
            test::read(dir.path() / "fixit/build/sft.jsonl"));
  const Json manifest = Json::parse(test::read(unpacked / "ptxbench-data/BUNDLE.json"));
  EXPECT_EQ(manifest["files"].size(), 3u);
  EXPECT_EQ(manifest["files"][0]["path"], "ptxbench-data/fixit/build/manifest.json");
}

TEST(Bundle, SameFilesGiveTheSameBytes) {
  test_support::ScratchDir a, b;
  write_dataset(a);
  write_dataset(b);
  auto first = write_bundle(a.path(), DatasetKind::fixit, a.path() / "x.tar.gz");
  auto second = write_bundle(b.path(), DatasetKind::fixit, b.path() / "y.tar.gz");
  ASSERT_TRUE(first && second);
  EXPECT_EQ(first->sha256, second->sha256);
  EXPECT_EQ(first->sha256, util::sha256_hex(test::read(a.path() / "x.tar.gz")));
}

TEST(Bundle, LongPathsSplitIntoPrefixOrFail) {
  const std::string dir(120, 'd');
  auto ok = ustar_archive({BundleEntry{dir + "/file.txt", "x"}});
  ASSERT_TRUE(ok) << ok.error().message;
  EXPECT_EQ(ok->substr(0, 8), "file.txt");
  EXPECT_EQ(ok->substr(345, 120), dir);
  auto too_long = ustar_archive({BundleEntry{std::string(300, 'n'), "x"}});
  EXPECT_FALSE(too_long);
}

TEST(Bundle, MissingDatasetIsNotFound) {
  test_support::ScratchDir dir;
  auto result = write_bundle(dir.path(), DatasetKind::kernelgen, dir.path() / "out.tar.gz");
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().kind, util::ErrorKind::not_found);
}

} // namespace
} // namespace ptxbench::adapt
