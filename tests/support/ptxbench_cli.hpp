// Running the built `ptxbench` binary (PTXBENCH_BINARY) from a test, with nvcc's folder on PATH
// so its cuobjdump is found, as the CLI end-to-end tests all need.
#pragma once

#include "support/scratch_dir.hpp"
#include "util/subprocess.hpp"

#include <chrono>
#include <cstdlib>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <string>
#include <unistd.h>
#include <vector>

namespace ptxbench::test_support {

// `extra_env` entries ("NAME=value") are added after PATH. A runner failure (the binary could
// not be started) is returned as the error.
inline util::Expected<util::ProcessResult>
run_ptxbench(std::vector<std::string> args,
             std::chrono::milliseconds timeout = std::chrono::minutes(5),
             std::vector<std::string> extra_env = {}) {
  args.insert(args.begin(), PTXBENCH_BINARY);
  util::ProcessOptions options;
  options.timeout = timeout;
  options.extra_env = {"PATH=" + std::string(std::getenv("PATH")) + ":/usr/local/cuda/bin"};
  options.extra_env.insert(options.extra_env.end(), extra_env.begin(), extra_env.end());
  util::PosixProcessRunner runner;
  return runner.run(args, options);
}

// The environment entry that gives ptxbench its own cache folder (compile cache, reference
// latencies, service state), so that tests neither share nor leave one.
inline std::string cache_env(const ScratchDir& cache) {
  return "PTXBENCH_CACHE=" + cache.path().string();
}

// `ptxbench ARGS` with a 5-minute limit; a binary that could not be started fails the calling
// test and gives an empty result.
inline util::ProcessResult ptxbench_result(std::vector<std::string> args,
                                           std::vector<std::string> extra_env = {}) {
  auto result = run_ptxbench(std::move(args), std::chrono::minutes(5), std::move(extra_env));
  EXPECT_TRUE(result) << result.error().message;
  return result ? *result : util::ProcessResult{};
}

// The same with its cache in `cache`.
inline util::ProcessResult run_ptxbench(std::vector<std::string> args, const ScratchDir& cache) {
  return ptxbench_result(std::move(args), {cache_env(cache)});
}

// `ptxbench ARGS` started in the background (stdout to /dev/null, stderr to `err_file` when
// given) so that a test can signal it; its cache in `cache`. A `prefix` (`ip netns exec NAME`)
// runs it through that command, which must exec it (the pid is ptxbench's); found on PATH.
inline pid_t spawn_ptxbench(const std::vector<std::string>& args, const ScratchDir& cache,
                            const std::filesystem::path& err_file = {},
                            const std::vector<std::string>& prefix = {}) {
  std::vector<std::string> argv = prefix;
  argv.push_back(PTXBENCH_BINARY);
  argv.insert(argv.end(), args.begin(), args.end());
  std::vector<std::string> env{"PATH=" + std::string(std::getenv("PATH")) + ":/usr/local/cuda/bin",
                               cache_env(cache)};
  pid_t pid = fork();
  if (pid == 0) {
    for (const auto& entry : env)
      putenv(const_cast<char*>(entry.c_str()));
    std::vector<char*> raw;
    for (auto& arg : argv)
      raw.push_back(arg.data());
    raw.push_back(nullptr);
    int null_fd = ::open("/dev/null", O_WRONLY);
    dup2(null_fd, STDOUT_FILENO);
    if (!err_file.empty()) {
      int err_fd = ::open(err_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      dup2(err_fd, STDERR_FILENO);
    }
    execvp(raw[0], raw.data());
    _exit(127);
  }
  return pid;
}

} // namespace ptxbench::test_support
