// The live progress line of a run: trajectories finished, turns, correct turns so far, best
// speedup, elapsed time and an estimate of the time left. Thread-safe; fed by the loop's turn
// events and by the runner when a trajectory ends. On a terminal the line is redrawn in place;
// otherwise a line is printed whenever a trajectory ends, so logs stay readable.
#pragma once

#include "agent/loop.hpp"

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <optional>
#include <string>

namespace ptxbench::agent {

struct ProgressCounts {
  std::int64_t trajectories = 0;
  std::int64_t trajectories_done = 0;
  std::int64_t turns = 0;         // finished this run, any category
  std::int64_t counted_turns = 0; // finished this run, counted
  std::int64_t correct = 0;
  std::int64_t turn_budget = 0; // counted turns the unfinished trajectories may still take
  std::optional<double> best_speedup;
};

// "trajectories 3/12 · turns 17 · correct 5 · best 1.234x · 4m10s elapsed · ~12m left"
std::string render_progress(const ProgressCounts& counts, std::chrono::seconds elapsed);

enum class Display : std::uint8_t { redraw = 1, lines = 2 };

class Progress {
public:
  // `budget`: the counted turns all trajectories may still take (max turns less the counted
  // turns a resumed trajectory already has).
  Progress(std::int64_t trajectories, std::int64_t budget, std::FILE* out, Display display);

  void on_turn(const TurnEvent& event);
  // Releases the budget the trajectory will not use.
  void on_trajectory_end(const TrajectoryResult& result, std::int64_t max_turns);
  void finish(); // ends the redrawn line
  ProgressCounts counts() const;

private:
  void draw(bool force_line);

  mutable std::mutex m_mutex;
  ProgressCounts m_counts;
  std::FILE* m_out;
  Display m_display;
  std::chrono::steady_clock::time_point m_start = std::chrono::steady_clock::now();
};

} // namespace ptxbench::agent
