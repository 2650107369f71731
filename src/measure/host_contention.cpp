#include "measure/host_contention.hpp"

#include "util/fs.hpp"

#include <algorithm>
#include <charconv>
#include <string>
#include <utility>

namespace ptxbench::measure {
namespace {

std::optional<std::uint64_t> number_at(std::string_view text) {
  std::uint64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end == text.data())
    return std::nullopt;
  return value;
}

// A /proc file's text; empty when it cannot be read (the figure is then absent).
std::string proc_text(const char* path) {
  auto text = util::read_file(path);
  return text ? std::move(*text) : std::string();
}

std::optional<std::uint64_t> stall_now_us() {
  return psi_some_total_us(proc_text("/proc/pressure/cpu"));
}

std::optional<std::uint64_t> run_delay_now_ns() {
  return schedstat_run_delay_ns(proc_text("/proc/thread-self/schedstat"));
}

} // namespace

std::optional<std::uint64_t> psi_some_total_us(std::string_view text) {
  constexpr std::string_view kLine = "some ";
  constexpr std::string_view kTotal = "total=";
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t end = std::min(text.find('\n', at), text.size());
    const std::string_view line = text.substr(at, end - at);
    at = end + 1;
    if (line.substr(0, kLine.size()) != kLine)
      continue;
    const std::size_t total = line.find(kTotal);
    if (total == std::string_view::npos)
      return std::nullopt;
    return number_at(line.substr(total + kTotal.size()));
  }
  return std::nullopt;
}

std::optional<std::uint64_t> schedstat_run_delay_ns(std::string_view text) {
  const std::size_t space = text.find(' ');
  if (space == std::string_view::npos || !number_at(text.substr(0, space)))
    return std::nullopt;
  return number_at(text.substr(space + 1));
}

CpuContentionClock::CpuContentionClock()
    : m_start(std::chrono::steady_clock::now()), m_stall_us(stall_now_us()),
      m_run_delay_ns(run_delay_now_ns()) {}

CpuContention CpuContentionClock::elapsed() const {
  CpuContention out;
  const auto stall_us = stall_now_us();
  const auto run_delay_ns = run_delay_now_ns();
  out.wall_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - m_start).count();
  if (m_stall_us && stall_us && *stall_us >= *m_stall_us && out.wall_ms > 0)
    out.stall_share =
        std::min(1.0, static_cast<double>(*stall_us - *m_stall_us) / 1000.0 / out.wall_ms);
  if (m_run_delay_ns && run_delay_ns && *run_delay_ns >= *m_run_delay_ns)
    out.run_delay_ms = static_cast<double>(*run_delay_ns - *m_run_delay_ns) / 1e6;
  return out;
}

} // namespace ptxbench::measure
