// Running a child process with a deadline, capturing its output, and killing its whole
// process group when the deadline passes (a compiler or candidate may fork helpers).
#pragma once

#include "util/error.hpp"

#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

namespace ptxbench::util {

struct ProcessOptions {
  std::chrono::milliseconds timeout{std::chrono::minutes(5)};
  std::filesystem::path working_dir;        // empty: inherit
  std::vector<std::string> extra_env;       // "NAME=value", added to the inherited set
  std::size_t max_output_bytes = 16u << 20; // per stream; the rest is dropped and noted
  int read_ruleset = -1; // SpawnOptions::read_ruleset: the reads it may make; -1: any
};

struct ProcessResult {
  int exit_code = -1;  // valid when !signaled
  int term_signal = 0; // valid when signaled
  bool signaled = false;
  bool timed_out = false;
  std::string out;
  std::string err;
  std::chrono::milliseconds elapsed{0};

  bool succeeded() const { return !signaled && !timed_out && exit_code == 0; }
};

// Interface so tests and callers can see where processes are started; one real implementation.
class ProcessRunner {
public:
  virtual ~ProcessRunner() = default;
  // An Error only when the process could not be started at all; a failing or killed process
  // is a ProcessResult.
  virtual Expected<ProcessResult> run(const std::vector<std::string>& argv,
                                      const ProcessOptions& options) = 0;
};

class PosixProcessRunner final : public ProcessRunner {
public:
  Expected<ProcessResult> run(const std::vector<std::string>& argv,
                              const ProcessOptions& options) override;
};

// Finds an executable by name on PATH; empty when absent.
std::filesystem::path find_on_path(const std::string& name);

} // namespace ptxbench::util
