#include "util/subprocess.hpp"

#include <gtest/gtest.h>
#include <thread>

using namespace ptxbench::util;
using namespace std::chrono_literals;

TEST(Subprocess, CapturesStdoutStderrAndExitCode) {
  PosixProcessRunner runner;
  auto result = runner.run({"sh", "-c", "echo out; echo err >&2; exit 3"}, {});
  ASSERT_TRUE(result);
  EXPECT_EQ(result->out, "out\n");
  EXPECT_EQ(result->err, "err\n");
  EXPECT_EQ(result->exit_code, 3);
  EXPECT_FALSE(result->succeeded());
}

TEST(Subprocess, DeadlineKillsTheWholeProcessGroup) {
  PosixProcessRunner runner;
  ProcessOptions options;
  options.timeout = 300ms;
  // The grandchild would write a marker after 2 s if it survived the group kill.
  auto marker = std::filesystem::temp_directory_path() / "ptxbench_subprocess_marker";
  std::filesystem::remove(marker);
  auto result =
      runner.run({"sh", "-c", "(sleep 2; touch " + marker.string() + ") & sleep 30"}, options);
  ASSERT_TRUE(result);
  EXPECT_TRUE(result->timed_out);
  EXPECT_LT(result->elapsed, 5s);
  std::this_thread::sleep_for(2500ms);
  EXPECT_FALSE(std::filesystem::exists(marker));
}

TEST(Subprocess, MissingExecutableIsAnError) {
  PosixProcessRunner runner;
  auto result = runner.run({"ptxbench-no-such-tool"}, {});
  ASSERT_FALSE(result);
  EXPECT_EQ(result.error().kind, ErrorKind::subprocess);
  EXPECT_EQ(result.error().message,
            "cannot execute 'ptxbench-no-such-tool': No such file or directory");
}

// Exit status 127 is the child's own answer, not a failure to start it.
TEST(Subprocess, AnExitStatusOf127IsAResult) {
  PosixProcessRunner runner;
  auto result = runner.run({"sh", "-c", "exit 127"}, {});
  ASSERT_TRUE(result) << result.error().message;
  EXPECT_EQ(result->exit_code, 127);
}

TEST(Subprocess, OutputBeyondTheCapIsTruncatedAndSaysSo) {
  PosixProcessRunner runner;
  ProcessOptions options;
  options.max_output_bytes = 1000;
  auto result = runner.run({"sh", "-c", "head -c 100000 /dev/zero | tr '\\0' x"}, options);
  ASSERT_TRUE(result);
  EXPECT_NE(result->out.find("[output truncated]"), std::string::npos);
  EXPECT_LT(result->out.size(), 1100u);
}
