// bench/fixit_h200.sh, the Fixit pipeline on an H200 with replay models, run on this machine
// with EXECUTOR=static: the replayed source run, collect, balance and the repair run; it says why
// it stops before pairs.
#include "support/scratch_dir.hpp"
#include "util/fs.hpp"
#include "util/subprocess.hpp"

#include <gtest/gtest.h>

using namespace ptxbench;
using test_support::ScratchDir;

TEST(FixitH200Script, StaticPathRunsUpToTheGpuStep) {
  ScratchDir out;
  const std::filesystem::path build =
      std::filesystem::path(PTXBENCH_BINARY).parent_path().parent_path().parent_path();
  const std::filesystem::path script =
      std::filesystem::path(PTXBENCH_SOURCE_DIR).parent_path() / "bench/fixit_h200.sh";
  util::PosixProcessRunner runner;
  util::ProcessOptions options;
  options.timeout = std::chrono::minutes(8);
  options.extra_env = {"EXECUTOR=static"};
  auto result = runner.run({"bash", script.string(), build.string(), out.path().string()}, options);
  ASSERT_TRUE(result) << result.error().message;
  ASSERT_TRUE(result->succeeded()) << result->out << result->err;
  EXPECT_NE(result->out.find("stopping before pairs"), std::string::npos) << result->out;
  auto summary = util::read_file(out.path() / "summary.txt");
  ASSERT_TRUE(summary);
  EXPECT_NE(summary->find("failures collected: 1\n"), std::string::npos) << *summary;
  EXPECT_NE(summary->find("repair tasks:       1\n"), std::string::npos) << *summary;
  EXPECT_TRUE(std::filesystem::exists(out.path() / "data/fixit/repair/run"));
}
