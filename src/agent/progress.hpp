// The live progress line of a run: trajectories finished, turns, correct turns so far, best
// speedup, elapsed time, an estimate of the time left, and the model calls and evaluations in
// flight with the age of the oldest (a model that takes half an hour per reply must not look
// hung). Thread-safe; fed by the loop's turn and activity events and by the runner when a
// trajectory ends. On a terminal the line is redrawn in place, and every second by watch();
// otherwise a line is printed whenever a trajectory ends and, while anything is in flight, once
// a minute, so logs stay readable. Once a stop is requested, watch() says what the run waits for
// and how to stop at once.
#pragma once

#include "agent/loop.hpp"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace ptxbench::agent {

// "model / problem / variant / #sample", how the console names a trajectory.
std::string trajectory_label(const store::TrajectoryKey& key);

struct ProgressCounts {
  std::int64_t trajectories = 0;
  std::int64_t trajectories_done = 0;    // ended with an exit reason
  std::int64_t trajectories_stopped = 0; // ended unfinished this run (stopped or failed)
  std::int64_t turns = 0;                // finished this run, any category
  std::int64_t counted_turns = 0;        // finished this run, counted
  std::int64_t correct = 0;
  std::int64_t turn_budget = 0; // counted turns the unfinished trajectories may still take
  std::optional<double> best_speedup;
};

// "trajectories 3/12 · turns 17 · correct 5 · best 1.234x · 4m10s elapsed · ~12m left";
// "trajectories 0/1 (1 stopped) · …" when some ended unfinished.
std::string render_progress(const ProgressCounts& counts, std::chrono::seconds elapsed);

enum class Display : std::uint8_t { redraw = 1, lines = 2 };

using SteadyTime = std::chrono::steady_clock::time_point;

// One model call or evaluation in flight and when it began.
struct InFlight {
  Activity activity = Activity::model_call;
  SteadyTime since{};
};

// "2 model calls in flight (oldest 3m12s) · 1 evaluation (41s)"; "" when nothing is in flight.
std::string render_in_flight(const std::vector<InFlight>& items, SteadyTime now);

// How often watch() redraws on a terminal, and prints a line otherwise while work is in flight.
struct ProgressTicks {
  std::chrono::milliseconds redraw{1000};
  std::chrono::milliseconds line{60000};
};

class Progress {
public:
  // `budget`: the counted turns all trajectories may still take (max turns less the counted
  // turns a resumed trajectory already has).
  // `notices`: where notice() writes even when `out` is null (a quiet run still says why a turn
  // was not evaluated); null: `out`.
  Progress(std::int64_t trajectories, std::int64_t budget, std::FILE* out, Display display,
           std::FILE* notices = nullptr);

  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  void on_turn(const TurnEvent& event);
  void on_activity(const store::TrajectoryKey& key, Activity activity, Edge edge);
  // Starts a thread that redraws (or prints a line) at `ticks` and, once `cancel` is set, says
  // once what the stop waits for; finish() ends it.
  void watch(const std::atomic<bool>* cancel, ProgressTicks ticks = {});
  // Releases the budget the trajectory will not use.
  void on_trajectory_end(const TrajectoryResult& result, std::int64_t max_turns);
  void finish(); // ends the watch thread and the redrawn line
  // A line of its own about one trajectory ("model / problem / variant / #n: text").
  void notice(const store::TrajectoryKey& key, const std::string& text);
  ProgressCounts counts() const;

private:
  void draw(bool force_line);
  void tick(const std::atomic<bool>* cancel, ProgressTicks ticks);
  std::vector<InFlight> in_flight() const; // under m_mutex
  void stop_watch();

  mutable std::mutex m_mutex;
  ProgressCounts m_counts;
  std::FILE* m_out;
  Display m_display;
  std::FILE* m_notices;
  std::chrono::steady_clock::time_point m_start = std::chrono::steady_clock::now();
  std::map<std::string, InFlight> m_in_flight; // by trajectory
  std::condition_variable m_wake;
  bool m_stopping = false;
  std::thread m_watch;
};

} // namespace ptxbench::agent
