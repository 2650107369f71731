// Parsing compute-sanitizer's text report (2025.3). Every sanitizer line starts with
// "========= "; an error is a headline ("Invalid __global__ write of size 4 bytes", "Program
// hit cudaErrorLaunchFailure …") followed by indented lines: "at <function>+0x<pc> in
// <file>:<line>" (file and line only with -lineinfo), "by thread (…) in block (…)", "Access to
// 0x… is out of bounds" / "Address 0x… is out of bounds", further detail, then host backtraces.
// The report ends with "ERROR SUMMARY: N error(s)", a count of every kind together: 32 bad
// writes of one warp and the 5 API calls that then fail make "37 errors". Only the first error
// is parsed in full; every printed headline is counted by kind, so the two can be told apart.
//
// Stream-ordered allocator races (--track-stream-ordered-races all) have a headline of their
// own and no device location: "Use-after-free on allocation of size 16,384 bytes at 0x…", then
// "Address 0x… is potentially accessed after it is free'd" and host backtraces, one "at <API>
// time" each (the access, then the cudaFreeAsync or cudaMallocAsync). "Use-before-alloc" and
// "Free-before-alloc" read the same way. Such an error is classified (StreamOrderedRace) and
// its address is the headline's.
#include "measure/sanitizer.hpp"

#include "util/strings.hpp"

#include <algorithm>
#include <charconv>
#include <fmt/format.h>

namespace ptxbench::measure {
namespace {

constexpr std::string_view kPrefix = "=========";

bool starts_with(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

std::string word_after(std::string_view line, std::string_view marker) {
  const auto at = line.find(marker);
  if (at == std::string_view::npos)
    return {};
  std::string_view rest = line.substr(at + marker.size());
  return std::string(rest.substr(0, rest.find(' ')));
}

// The race a headline reports ("Use-after-free on allocation of size … at 0x…"), or none.
StreamOrderedRace stream_ordered_race(std::string_view line) {
  for (const StreamOrderedRaceInfo& info : kStreamOrderedRaces)
    if (!info.headline.empty() && starts_with(line, info.headline))
      return info.race;
  return StreamOrderedRace::none;
}

void parse_headline(std::string_view line, SanitizerError& error) {
  error.kind = std::string(line);
  error.stream_ordered = stream_ordered_race(line);
  if (error.stream_ordered != StreamOrderedRace::none) {
    if (const auto at = line.rfind(" at 0x"); at != std::string_view::npos)
      error.address = word_after(line.substr(at), " at ");
    return;
  }
  // "Invalid __global__ write of size 4 bytes"
  if (starts_with(line, "Invalid ")) {
    error.space = word_after(line, "Invalid ");
    const std::string access = word_after(line, error.space + " ");
    error.access = access;
  } else if (starts_with(line, "Uninitialized ")) {
    error.space = word_after(line, "Uninitialized ");
    error.access = "read";
  }
}

// "at oob_write(int *, int)+0x70 in /tmp/x/probe.cu:12"
void parse_location(std::string_view line, SanitizerError& error) {
  std::string_view rest = line.substr(3);
  const auto in = rest.rfind(" in ");
  std::string_view function = in == std::string_view::npos ? rest : rest.substr(0, in);
  if (const auto plus = function.rfind("+0x"); plus != std::string_view::npos) {
    error.pc_offset = std::string(function.substr(plus));
    function = function.substr(0, plus);
  }
  error.kernel = std::string(function);
  if (in == std::string_view::npos)
    return;
  const std::string_view where = rest.substr(in + 4);
  const auto colon = where.rfind(':');
  int line_number = 0;
  if (colon != std::string_view::npos &&
      std::from_chars(where.data() + colon + 1, where.data() + where.size(), line_number).ec ==
          std::errc{}) {
    error.file = std::string(where.substr(0, colon));
    error.line = line_number;
  }
}

void parse_error_line(std::string_view line, SanitizerError& error) {
  if (starts_with(line, "at ") && error.kernel.empty()) {
    parse_location(line, error);
  } else if (starts_with(line, "Access to ") || starts_with(line, "Address ")) {
    if (error.address.empty())
      error.address = word_after(line, starts_with(line, "Access to ") ? "Access to " : "Address ");
    error.detail += (error.detail.empty() ? "" : " ") + std::string(line);
  } else if (starts_with(line, "and is ") || starts_with(line, "is out of bounds")) {
    error.detail += " " + std::string(line);
  }
}

bool is_headline(std::string_view line) {
  return starts_with(line, "Invalid ") || starts_with(line, "Uninitialized ") ||
         starts_with(line, "Program hit ") || starts_with(line, "Error: ") ||
         starts_with(line, "Barrier error") || starts_with(line, "Misaligned ") ||
         starts_with(line, "Out-of-range ") || starts_with(line, "Malloc/Free error") ||
         starts_with(line, "Cuda ") || starts_with(line, "Warp ") ||
         starts_with(line, "Illegal ") || stream_ordered_race(line) != StreamOrderedRace::none;
}

} // namespace

std::vector<std::string> sanitizer_command(const std::vector<std::string>& app_argv,
                                           const SanitizerOptions& options) {
  std::vector<std::string> argv{options.sanitizer,
                                "--tool",
                                options.tool,
                                "--error-exitcode",
                                std::to_string(kSanitizerErrorExitCode),
                                "--print-limit",
                                std::to_string(kSanitizerPrintLimit)};
  if (options.tool == "memcheck") // listed among memcheck's own options
    argv.insert(argv.end(),
                {"--track-stream-ordered-races", std::string(kTrackStreamOrderedRaces)});
  argv.insert(argv.end(), app_argv.begin(), app_argv.end());
  return argv;
}

SanitizerReport parse_sanitizer_output(std::string_view text) {
  SanitizerReport report;
  bool in_first_error = false;
  for (const std::string& raw : util::split_lines(text)) {
    if (!starts_with(raw, kPrefix))
      continue;
    report.log += raw + "\n";
    const std::string_view line = util::trim(std::string_view(raw).substr(kPrefix.size()));
    if (starts_with(line, "ERROR SUMMARY:")) {
      // The first summary line has the total; a second one counts the unprinted errors.
      std::string_view count = util::trim(line.substr(14));
      std::size_t value = 0;
      std::from_chars(count.data(), count.data() + count.size(), value);
      report.error_count = std::max(report.error_count, value);
      in_first_error = false;
    } else if (is_headline(line)) {
      ++report.printed_errors;
      if (starts_with(line, "Program hit "))
        ++report.api_errors;
      if (stream_ordered_race(line) != StreamOrderedRace::none)
        ++report.stream_ordered_races;
      in_first_error = !report.first_error;
      if (in_first_error) {
        report.first_error.emplace();
        parse_headline(line, *report.first_error);
      }
    } else if (in_first_error) {
      if (starts_with(line, "Saved host backtrace"))
        in_first_error = false;
      else
        parse_error_line(line, *report.first_error);
    }
  }
  if (report.first_error && report.error_count == 0)
    report.error_count = 1;
  report.clean = report.error_count == 0;
  return report;
}

bool only_stream_ordered_races(const SanitizerReport& report) {
  return report.stream_ordered_races > 0 && report.stream_ordered_races == report.printed_errors &&
         report.printed_errors >= report.error_count;
}

util::Expected<SanitizerReport> run_sanitizer(util::ProcessRunner& runner,
                                              const std::vector<std::string>& app_argv,
                                              const SanitizerOptions& options) {
  util::ProcessOptions process;
  process.timeout = options.timeout;
  PTXBENCH_TRY_ASSIGN(auto result, runner.run(sanitizer_command(app_argv, options), process));
  if (result.timed_out)
    return util::make_error(util::ErrorKind::timeout, "compute-sanitizer passed its deadline");
  SanitizerReport report = parse_sanitizer_output(result.out + "\n" + result.err);
  report.exit_code = result.signaled ? -result.term_signal : result.exit_code;
  report.clean = report.clean && report.exit_code == 0;
  report.wall_ms = static_cast<double>(result.elapsed.count());
  return report;
}

} // namespace ptxbench::measure
