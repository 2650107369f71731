#include "agent/progress.hpp"

#include <algorithm>
#include <fmt/core.h>

namespace ptxbench::agent {
namespace {

std::string duration_text(std::chrono::seconds s) {
  auto total = s.count();
  if (total >= 3600)
    return fmt::format("{}h{:02}m", total / 3600, (total % 3600) / 60);
  if (total >= 60)
    return fmt::format("{}m{:02}s", total / 60, total % 60);
  return fmt::format("{}s", total);
}

} // namespace

std::string render_progress(const ProgressCounts& c, std::chrono::seconds elapsed) {
  std::string line = fmt::format("trajectories {}/{} · turns {} · correct {}", c.trajectories_done,
                                 c.trajectories, c.turns, c.correct);
  if (c.best_speedup)
    line += fmt::format(" · best {:.3f}x", *c.best_speedup);
  line += " · " + duration_text(elapsed) + " elapsed";
  if (c.trajectories_done == c.trajectories)
    return line;
  // Counted turns so far set the pace; the budget left bounds the work (early stops shorten it).
  if (c.counted_turns > 0) {
    auto left = elapsed.count() * std::max<std::int64_t>(c.turn_budget, 0) / c.counted_turns;
    line += " · ≤" + duration_text(std::chrono::seconds(left)) + " left";
  }
  return line;
}

Progress::Progress(std::int64_t trajectories, std::int64_t budget, std::FILE* out, Display display)
    : m_out(out), m_display(display) {
  m_counts.trajectories = trajectories;
  m_counts.turn_budget = budget;
}

void Progress::on_turn(const TurnEvent& event) {
  std::lock_guard lock(m_mutex);
  ++m_counts.turns;
  if (event.category != store::TurnCategory::infra) {
    ++m_counts.counted_turns;
    --m_counts.turn_budget;
  }
  if (event.category == store::TurnCategory::correct) {
    ++m_counts.correct;
    if (event.speedup)
      m_counts.best_speedup = std::max(m_counts.best_speedup.value_or(0.0), *event.speedup);
  }
  draw(false);
}

void Progress::on_trajectory_end(const TrajectoryResult& result, std::int64_t max_turns) {
  std::lock_guard lock(m_mutex);
  ++m_counts.trajectories_done;
  // The turns this trajectory will not take: its budget less what it used, in this run or before.
  m_counts.turn_budget -= std::max<std::int64_t>(0, max_turns - result.counted_turns);
  if (result.best_speedup)
    m_counts.best_speedup = std::max(m_counts.best_speedup.value_or(0.0), *result.best_speedup);
  draw(true);
}

void Progress::finish() {
  std::lock_guard lock(m_mutex);
  if (m_display == Display::redraw && m_out != nullptr)
    std::fputc('\n', m_out);
}

ProgressCounts Progress::counts() const {
  std::lock_guard lock(m_mutex);
  return m_counts;
}

void Progress::draw(bool force_line) {
  if (m_out == nullptr || (m_display == Display::lines && !force_line))
    return;
  auto elapsed =
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::steady_clock::now() - m_start);
  std::string line = render_progress(m_counts, elapsed);
  if (m_display == Display::redraw)
    fmt::print(m_out, "\r\x1b[K{}", line);
  else
    fmt::print(m_out, "{}\n", line);
  std::fflush(m_out);
}

} // namespace ptxbench::agent
