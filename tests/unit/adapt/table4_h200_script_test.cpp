// bench/table4_h200.sh, one trajectory per Table 4 condition on an H200, run on this machine
// with EXECUTOR=static: six trajectories, guidance exactly in the guided conditions, the kept
// pair retrieved in the two retrieving ones and the held-out pair dropped.
#include "support/ptxbench_cli.hpp"
#include "support/scratch_dir.hpp"
#include "util/fs.hpp"
#include "util/subprocess.hpp"

#include <gtest/gtest.h>

using namespace ptxbench;
using test_support::ScratchDir;

TEST(Table4H200Script, StaticPathRunsEveryConditionAndReportsIt) {
  ScratchDir out;
  ScratchDir cache;
  const std::filesystem::path build =
      std::filesystem::path(PTXBENCH_BINARY).parent_path().parent_path().parent_path();
  const std::filesystem::path script =
      std::filesystem::path(PTXBENCH_SOURCE_DIR).parent_path() / "bench/table4_h200.sh";
  util::PosixProcessRunner runner;
  util::ProcessOptions options;
  options.timeout = std::chrono::minutes(8);
  options.extra_env = {"EXECUTOR=static", test_support::cache_env(cache)};
  auto result = runner.run({"bash", script.string(), build.string(), out.path().string()}, options);
  ASSERT_TRUE(result) << result.error().message;
  ASSERT_TRUE(result->succeeded()) << result->out << result->err;
  auto summary = util::read_file(out.path() / "summary.txt");
  ASSERT_TRUE(summary);
  EXPECT_NE(summary->find("trajectories: 6\n"), std::string::npos) << *summary;
  for (const char* line :
       {"/ no-guidance / #0: guidance=no retrieved=[] held_out_excluded=[]",
        "/ guidance / #1: guidance=yes retrieved=[] held_out_excluded=[]",
        "/ guidance+notes / #2: guidance=yes retrieved=[['pair-kept']] held_out_excluded=[1]",
        "/ guidance+notes+kernel / #3: guidance=yes retrieved=[['pair-kept']] "
        "held_out_excluded=[1]",
        "| tuned · guidance |", "| student · guidance+notes+kernel |"})
    EXPECT_NE(summary->find(line), std::string::npos) << line << "\n" << *summary;
  EXPECT_TRUE(std::filesystem::exists(out.path() / "report/per_turn.svg"));
  EXPECT_TRUE(std::filesystem::exists(out.path() / "report/report.html"));
}
