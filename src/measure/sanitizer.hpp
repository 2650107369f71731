// compute-sanitizer memcheck around a program: did the candidate touch memory it does not
// own, and where (kernel, source line when built with -lineinfo, address)?
#pragma once

#include "util/error.hpp"
#include "util/subprocess.hpp"

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ptxbench::measure {

inline constexpr int kSanitizerErrorExitCode = 99;
// Errors printed in full: enough to tell memory accesses from the API errors that follow them.
inline constexpr int kSanitizerPrintLimit = 256;

struct SanitizerOptions {
  std::string sanitizer = "compute-sanitizer";
  std::string tool = "memcheck";
  std::chrono::milliseconds timeout{std::chrono::minutes(5)};
};

struct SanitizerError {
  std::string kind;      // "Invalid __global__ write of size 4 bytes", "Program hit …"
  std::string access;    // "read" / "write" / "" (API errors)
  std::string space;     // "__global__", "__shared__", "__local__" or ""
  std::string kernel;    // demangled function with arguments, e.g. "oob_write(int *, int)"
  std::string pc_offset; // "+0x70"
  std::string file;      // empty without -lineinfo
  int line = 0;
  std::string address; // "0x7f…" (the faulting address), empty when not printed
  std::string detail;  // the "Access to … is out of bounds …" lines, joined
};

struct SanitizerReport {
  bool clean = false; // no error reported and the program exited 0
  int exit_code = 0;
  std::size_t error_count = 0;    // from "ERROR SUMMARY: N errors": every kind together
  std::size_t printed_errors = 0; // headlines printed (at most kSanitizerPrintLimit)
  std::size_t api_errors = 0;     // of those, CUDA API calls that returned an error ("Program
                                  // hit …"): the aftermath of a fault, not memory accesses
  std::optional<SanitizerError> first_error;
  std::string log; // the sanitizer's lines (prefix "========= ")
  double wall_ms = 0.0;
};

// `compute-sanitizer --tool memcheck --error-exitcode 99 --print-limit 256 argv…`.
std::vector<std::string> sanitizer_command(const std::vector<std::string>& app_argv,
                                           const SanitizerOptions& options);

// Pure: reads the error count and the first error from the sanitizer's text output.
SanitizerReport parse_sanitizer_output(std::string_view text);

util::Expected<SanitizerReport> run_sanitizer(util::ProcessRunner& runner,
                                              const std::vector<std::string>& app_argv,
                                              const SanitizerOptions& options);

} // namespace ptxbench::measure
