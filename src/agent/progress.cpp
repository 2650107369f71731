#include "agent/progress.hpp"

#include <algorithm>
#include <fmt/core.h>
#include <string_view>

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

std::string count_text(std::int64_t n, std::string_view one, std::string_view many) {
  return fmt::format("{} {}", n, n == 1 ? one : many);
}

} // namespace

std::string render_in_flight(const std::vector<InFlight>& items, SteadyTime now) {
  std::string text;
  for (Activity activity : {Activity::model_call, Activity::evaluation}) {
    std::int64_t count = 0;
    SteadyTime oldest = now;
    for (const InFlight& item : items)
      if (item.activity == activity) {
        ++count;
        oldest = std::min(oldest, item.since);
      }
    if (count == 0)
      continue;
    const auto age = std::chrono::duration_cast<std::chrono::seconds>(now - oldest);
    const bool call = activity == Activity::model_call;
    text += fmt::format("{}{}{} ({}{})", text.empty() ? "" : " · ",
                        call ? count_text(count, "model call", "model calls")
                             : count_text(count, "evaluation", "evaluations"),
                        call ? " in flight" : "", count > 1 ? "oldest " : "", duration_text(age));
  }
  return text;
}

std::string render_progress(const ProgressCounts& c, std::chrono::seconds elapsed) {
  std::string line = fmt::format("trajectories {}/{}", c.trajectories_done, c.trajectories);
  if (c.trajectories_stopped > 0)
    line += fmt::format(" ({} stopped)", c.trajectories_stopped);
  line += fmt::format(" · turns {} · correct {}", c.turns, c.correct);
  if (c.best_speedup)
    line += fmt::format(" · best {:.3f}x", *c.best_speedup);
  line += " · " + duration_text(elapsed) + " elapsed";
  if (c.trajectories_done + c.trajectories_stopped >= c.trajectories)
    return line;
  // Counted turns so far set the pace; the budget left bounds the work (early stops shorten it).
  if (c.counted_turns > 0) {
    auto left = elapsed.count() * std::max<std::int64_t>(c.turn_budget, 0) / c.counted_turns;
    line += " · ≤" + duration_text(std::chrono::seconds(left)) + " left";
  }
  return line;
}

Progress::Progress(std::int64_t trajectories, std::int64_t budget, std::FILE* out, Display display,
                   std::FILE* notices)
    : m_out(out), m_display(display), m_notices(notices != nullptr ? notices : out) {
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

Progress::~Progress() {
  stop_watch();
}

void Progress::on_activity(const store::TrajectoryKey& key, Activity activity, Edge edge) {
  std::lock_guard lock(m_mutex);
  if (edge == Edge::begins)
    m_in_flight[trajectory_label(key)] = InFlight{activity, std::chrono::steady_clock::now()};
  else
    m_in_flight.erase(trajectory_label(key));
}

std::vector<InFlight> Progress::in_flight() const {
  std::vector<InFlight> items;
  for (const auto& [key, item] : m_in_flight)
    items.push_back(item);
  return items;
}

void Progress::watch(const std::atomic<bool>* cancel, ProgressTicks ticks) {
  std::lock_guard lock(m_mutex);
  if (m_watch.joinable())
    throw util::Fatal("Progress::watch called twice");
  m_watch = std::thread([this, cancel, ticks] { tick(cancel, ticks); });
}

// Wakes at the redraw period; prints a line in lines mode when one is due and work is in
// flight; says once what a requested stop waits for.
void Progress::tick(const std::atomic<bool>* cancel, ProgressTicks ticks) {
  std::unique_lock lock(m_mutex);
  auto last_line = std::chrono::steady_clock::now();
  bool told_stop = false;
  while (!m_wake.wait_for(lock, ticks.redraw, [this] { return m_stopping; })) {
    const auto now = std::chrono::steady_clock::now();
    if (cancel != nullptr && cancel->load() && !told_stop && m_notices != nullptr) {
      told_stop = true;
      const std::string waiting = render_in_flight(in_flight(), now);
      fmt::print(m_notices,
                 "{}ptxbench: stopping after what is in flight{}; press Ctrl-C again to stop at "
                 "once (the run stays resumable: ptxbench run --resume DIR)\n",
                 m_out == m_notices && m_display == Display::redraw ? "\r\x1b[K" : "",
                 waiting.empty() ? "" : " — waiting for " + waiting);
      std::fflush(m_notices);
    }
    if (m_display == Display::redraw) {
      draw(false);
    } else if (!m_in_flight.empty() && now - last_line >= ticks.line) {
      last_line = now;
      draw(true);
    }
  }
}

void Progress::stop_watch() {
  {
    std::lock_guard lock(m_mutex);
    m_stopping = true;
  }
  m_wake.notify_all();
  if (m_watch.joinable())
    m_watch.join();
}

void Progress::on_trajectory_end(const TrajectoryResult& result, std::int64_t max_turns) {
  std::lock_guard lock(m_mutex);
  ++(result.exit ? m_counts.trajectories_done : m_counts.trajectories_stopped);
  // The turns this trajectory will not take: its budget less what it used, in this run or before.
  m_counts.turn_budget -= std::max<std::int64_t>(0, max_turns - result.counted_turns);
  if (result.best_speedup)
    m_counts.best_speedup = std::max(m_counts.best_speedup.value_or(0.0), *result.best_speedup);
  draw(true);
}

void Progress::finish() {
  stop_watch();
  std::lock_guard lock(m_mutex);
  if (m_display == Display::redraw && m_out != nullptr)
    std::fputc('\n', m_out);
}

void Progress::notice(const store::TrajectoryKey& key, const std::string& text) {
  std::lock_guard lock(m_mutex);
  if (m_notices == nullptr)
    return;
  const bool clear_line = m_out == m_notices && m_display == Display::redraw;
  fmt::print(m_notices, "{}{} / {} / {} / #{}: {}\n", clear_line ? "\r\x1b[K" : "", key.model,
             key.problem, key.prompt_variant, key.sample, text);
  std::fflush(m_notices);
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
  if (std::string waiting = render_in_flight(in_flight(), std::chrono::steady_clock::now());
      !waiting.empty())
    line += " · " + waiting;
  if (m_display == Display::redraw)
    fmt::print(m_out, "\r\x1b[K{}", line);
  else
    fmt::print(m_out, "{}\n", line);
  std::fflush(m_out);
}

std::string trajectory_label(const store::TrajectoryKey& key) {
  return fmt::format("{} / {} / {}{} / #{}", key.model, key.problem, key.prompt_variant,
                     key.condition.empty() ? "" : " / " + key.condition, key.sample);
}

} // namespace ptxbench::agent
