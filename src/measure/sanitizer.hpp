// compute-sanitizer memcheck around a program: did the candidate touch memory it does not
// own, and where (kernel, source line when built with -lineinfo, address)?
#pragma once

#include "util/enum_table.hpp"
#include "util/error.hpp"
#include "util/subprocess.hpp"

#include <array>
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
// `--track-stream-ordered-races all`: memcheck reports accesses to (and frees of) cudaMallocAsync
// allocations outside their stream-ordered lifetime, both kinds (use-before-alloc, use-after-free).
// The current documentation gives `all` as the default; it is passed anyway, so that a release
// with another default checks the same.
inline constexpr std::string_view kTrackStreamOrderedRaces = "all";

// Which stream-ordered allocator race a memcheck error is (compute-sanitizer's "Stream-ordered
// race detection"): a cudaMallocAsync allocation used or freed outside the span between its
// cudaMallocAsync and its cudaFreeAsync in stream order. Such a call has undefined behaviour
// and may still compute the right result. Persisted in JSON: explicit values.
enum class StreamOrderedRace : std::uint8_t {
  none = 1,              // not a stream-ordered race: an ordinary memcheck or API error
  use_after_free = 2,    // "Use-after-free on allocation …": accessed after its cudaFreeAsync
  use_before_alloc = 3,  // "Use-before-alloc on allocation …": accessed before it is available
  free_before_alloc = 4, // "Free-before-alloc on allocation …": freed before it is available
};

struct StreamOrderedRaceInfo {
  StreamOrderedRace race;
  std::string_view name;     // as persisted
  std::string_view headline; // how compute-sanitizer's error headline starts ("" for none)
};

inline constexpr std::array kStreamOrderedRaces{
    StreamOrderedRaceInfo{StreamOrderedRace::none, "none", ""},
    StreamOrderedRaceInfo{StreamOrderedRace::use_after_free, "use_after_free",
                          "Use-after-free on allocation"},
    StreamOrderedRaceInfo{StreamOrderedRace::use_before_alloc, "use_before_alloc",
                          "Use-before-alloc on allocation"},
    StreamOrderedRaceInfo{StreamOrderedRace::free_before_alloc, "free_before_alloc",
                          "Free-before-alloc on allocation"},
};

consteval bool stream_ordered_races_complete() {
  for (std::size_t i = 0; i < kStreamOrderedRaces.size(); ++i)
    if (static_cast<std::size_t>(kStreamOrderedRaces[i].race) != i + 1)
      return false;
  return true;
}
static_assert(stream_ordered_races_complete(),
              "kStreamOrderedRaces must list every StreamOrderedRace in value order");
static_assert(util::no_enumerator_after<StreamOrderedRace, kStreamOrderedRaces.size()>(),
              "kStreamOrderedRaces lacks a row for an enumerator after its last");

constexpr std::string_view to_string(StreamOrderedRace race) {
  return kStreamOrderedRaces[static_cast<std::size_t>(race) - 1].name;
}

struct SanitizerOptions {
  std::string sanitizer = "compute-sanitizer";
  std::string tool = "memcheck";
  std::chrono::milliseconds timeout{std::chrono::minutes(5)};
};

struct SanitizerError {
  // The headline: "Invalid __global__ write of size 4 bytes", "Program hit …", "Use-after-free on
  // allocation of size 16,384 bytes at 0x…".
  std::string kind;
  std::string access;    // "read" / "write" / "" (API errors)
  std::string space;     // "__global__", "__shared__", "__local__" or ""
  std::string kernel;    // demangled function with arguments, e.g. "oob_write(int *, int)"
  std::string pc_offset; // "+0x70"
  std::string file;      // empty without -lineinfo
  int line = 0;
  std::string address; // "0x7f…" (the faulting address), empty when not printed
  std::string detail;  // the "Access to … is out of bounds …" lines, joined
  // A stream-ordered race names no kernel or source line: its report is the headline, the
  // "Address … is potentially accessed after it is free'd" line and host backtraces.
  StreamOrderedRace stream_ordered = StreamOrderedRace::none;
};

struct SanitizerReport {
  bool clean = false; // no error reported and the program exited 0
  int exit_code = 0;
  std::size_t error_count = 0;    // from "ERROR SUMMARY: N errors": every kind together
  std::size_t printed_errors = 0; // headlines printed (at most kSanitizerPrintLimit)
  std::size_t api_errors = 0;     // of those, CUDA API calls that returned an error ("Program
                                  // hit …"): the aftermath of a fault, not memory accesses
  // Of the printed ones, stream-ordered allocator races (StreamOrderedRace).
  std::size_t stream_ordered_races = 0;
  std::optional<SanitizerError> first_error;
  std::string log; // the sanitizer's lines (prefix "========= ")
  double wall_ms = 0.0;
};

// `compute-sanitizer --tool memcheck --error-exitcode 99 --print-limit 256
// --track-stream-ordered-races all argv…` (the last option with the memcheck tool only).
std::vector<std::string> sanitizer_command(const std::vector<std::string>& app_argv,
                                           const SanitizerOptions& options);

// Pure: reads the error count and the first error from the sanitizer's text output.
SanitizerReport parse_sanitizer_output(std::string_view text);

// Whether every error the report printed is a stream-ordered allocator race: undefined
// behaviour that may have left the call's result right, and nothing else (no out-of-bounds
// access, no failed API call). False when errors went unprinted (past the print limit).
bool only_stream_ordered_races(const SanitizerReport& report);

util::Expected<SanitizerReport> run_sanitizer(util::ProcessRunner& runner,
                                              const std::vector<std::string>& app_argv,
                                              const SanitizerOptions& options);

} // namespace ptxbench::measure
