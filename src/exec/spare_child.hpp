// Candidate children started ahead of need (evaluator.hpp).
//
// Problem. Starting `ptxbench-candidate` (exec and library loading, CUDA driver, CUPTI, the
// range profiler's configuration, the CUDA context) costs a good part of a warm evaluation's
// wall time.
//
// Approach. The Evaluator keeps one spare child that has been exec'd and waits for its first
// request, having touched nothing of CUDA (driver and profiler initialisation in another
// process slowed a timed trial measurably on an H200, so they wait for `prepare`). An
// evaluation takes the spare (or starts a child when there is none), asks for a replacement
// at once — whose exec and library loading overlap the evaluation — and sends `prepare`
// under the shared GPU lock, unless the spare was prepared already (below). A spare has
// never seen a candidate: every candidate still gets a fresh process. ChildStart::on_demand
// keeps no spare (one-shot command lines).
//
// Spares are forked by a thread of their own that lives as long as this object: a child's
// PR_SET_PDEATHSIG fires when the *thread* that forked it ends, and evaluations may run on
// short-lived threads. A spare found dead when taken is replaced by a fresh child.
//
// The same thread stops the children of finished evaluations (retire): the polite `exit`, the
// process's end and its CUDA context's teardown happen off the evaluation's critical path. And
// it sends the spare its `prepare` (driver, CUPTI, CUDA context) as soon as the spare is there,
// beside whatever evaluation runs, so that evaluations arriving back to back take a child
// ready to load. Both are child work under the ChildWorkGate (child_work_gate.hpp), not under
// the GPU lock: they run beside an evaluation's inputs, load, correctness, counting, re-check
// and tool passes, never beside a timed window — the timing phase opens one (TimedWindow) and
// waits for child work in flight to end, and no child work begins while one is open or waits.
//
// Preparing beside an evaluation (SparePrepare). The replacement is wanted when an evaluation
// takes the spare, so its `prepare` runs beside that evaluation's first phases, and the
// evaluation's timed window waits for it when they are short: a distinct kernel's load,
// correctness and count (the spare opened its session during the compile) end before it does
// (docs/evaluation.md "Spare child" has the figures). Under SparePrepare::after_timing no `prepare`
// begins while an evaluation that has not ended its timing phase runs (done_timing()); the spare is
// prepared after it, in the client's next compile, and the next evaluation's take() waits for a
// `prepare` still in flight. beside_evaluation, the default, keeps the spare ready for back-to-back
// requests with nothing to compile.
//
// The counter session. CUPTI lets one process at a time hold a range-profiler session on a GPU
// (a second one's Start fails with CUPTI_ERROR_HARDWARE_BUSY), and a session's first pass is
// its expensive part (bench/results/counter_session_h200.md). The right to hold it is handed out
// here: a spare takes it only while no evaluation is between begin_evaluation() and
// end_evaluation() (one in flight still has to count, and its own child comes first), none has
// run for kIdleBeforeSession and the right is free — at its `prepare`, or with a second
// `prepare` once the GPU has become idle —
// and opens its session then, so the evaluation that takes the spare pays only its passes; an
// evaluation whose child does not hold it (back to back, the spare was prepared beside the
// evaluation before) claims it before its candidate loads (the child's system-call filter
// refuses what opening a session needs), waiting (never under the GPU lock) until the holder
// has ended.
// The right comes back when the holding child has stopped, or from release_counter_session().
// An evaluation counts before it times, and its child closes its session after counting (or
// on `end_session`), so the evaluation's own child never has one open while trials run.
//
// Beside the trials (CounterSessionAhead). Back to back, the rule above leaves the spare no
// moment to open its session: an evaluation's untimed phases are shorter than the
// session's first pass, so every evaluation that takes such a spare pays that pass in its
// count. Under CounterSessionAhead::beside_timing, a spare that is already prepared opens its
// session as soon as every running evaluation has counted (done_counting()) — that is, beside
// their trials. It is not child work under the gate (a first `prepare`, with the driver and
// the context, still is): the session's opening is driver and CUPTI work plus one one-block
// kernel. The opening holds the driver, so the phases beside it stretch by about as much: the
// gain is small and the candidate's spread across requests rose
// (bench/results/eval_throughput_h200.md); when_idle stays the default. Under
// CounterSessionAhead::when_idle the timing phase holds the right itself until its trials
// end, and no session opens anywhere while trials run (an open session slowed a timed call;
// bench/results/counter_session_h200.md).
#pragma once

#include "exec/child_process.hpp"
#include "exec/child_work_gate.hpp"
#include "exec/eval_options.hpp"
#include "util/error.hpp"

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

namespace ptxbench::exec {

// How long no evaluation must have run before a prepared spare opens the counter session: an
// evaluation arriving back to back (a client's round trip after the last one) must not wait in
// take() for a session its count would open anyway.
inline constexpr std::chrono::milliseconds kIdleBeforeSession{250};

struct StartedChild {
  CandidateProcess process;
  std::filesystem::path log_path;     // the child's stdout and stderr; the taker removes it
  std::optional<trace::Json> startup; // set once `prepare` succeeded: its start-up steps
  bool holds_counter_session = false; // its range-profiler session is open (see above)
  bool session_asked = false;         // a `prepare` asked it to open one (asked once only)
};

class SpareChildren {
public:
  // `device`: the CUDA device every child is started for (CandidateProcess::start);
  // `deadline`: of the spare's `prepare`.
  SpareChildren(std::filesystem::path binary, int device, ChildStart policy,
                CounterSessionAhead session_ahead = CounterSessionAhead::when_idle,
                std::chrono::milliseconds deadline = std::chrono::seconds(60),
                SparePrepare prepare = SparePrepare::beside_evaluation);
  ~SpareChildren();
  SpareChildren(const SpareChildren&) = delete;
  SpareChildren& operator=(const SpareChildren&) = delete;

  // The spare when there is one, else a newly started child; then, under ChildStart::spare,
  // starts the next spare.
  util::Expected<StartedChild> take();
  // A child started now for one evaluation, never a spare: a candidate's whose language starts
  // a child of its own (a Triton candidate's, whose environment names its work folder).
  util::Expected<StartedChild> start_own(const ChildLaunch& launch) const;
  // Live spares (0 or 1), once a spare being forked is there.
  int count() const;
  // Stops `child` and removes its log in the background (synchronously under on_demand).
  void retire(StartedChild child);
  // An evaluation's GPU part begins / will not count again (its count and any ncu audit are
  // over) / has ended its timing phase / ends. done_counting() and done_timing() are called at
  // most once per evaluation; end_evaluation stands in for each the evaluation never called
  // (RunningEvaluation does all of it). A spare opens the counter session only while none
  // runs, or (beside_timing) while every running one has counted; under
  // SparePrepare::after_timing it is prepared only while every running one has timed.
  void begin_evaluation();
  void done_counting();
  void done_timing();
  void end_evaluation(bool counted, bool timed = false);
  CounterSessionAhead session_ahead() const { return m_session_ahead; }
  // Whether a spare may open the counter session ahead of its evaluation at all (default:
  // yes). The session is one per GPU across processes, so a process that shares its GPU with
  // another (two fleet workers on one device) must not hold it between evaluations: switched
  // off, no spare opens one, and a spare that holds one is stopped (a new one is started and
  // prepared without it); the evaluation's own child then opens it during its count.
  void allow_sessions_ahead(bool allowed);
  // An evaluation's timed window (child_work_gate.hpp): open waits for child work in flight
  // to end and keeps new child work from beginning until close.
  void open_timed_window();
  void close_timed_window();
  // Whether a timed window is open now (a snapshot, for tests and checks).
  bool timed_window_open() const;
  // Waits until every retired child has ended.
  void settle();
  // The GPU's one range-profiler session (above): take the right if free; take it, waiting at
  // most `patience` for it (never call this with the GPU lock held; false: not taken, the
  // caller goes ahead and may find the counters busy); give it back.
  bool try_claim_counter_session();
  bool claim_counter_session(std::chrono::milliseconds patience);
  void release_counter_session();

private:
  util::Expected<StartedChild> start() const;
  void stop(StartedChild& child);
  void discard(std::optional<StartedChild>& child); // m_mutex held
  // m_mutex held: the spare needs a `prepare` now; the time a session `prepare` becomes due;
  // whether the spare's next `prepare` opens the session beside timed windows (no child work).
  bool spare_needs_prepare() const;
  bool prepare_allowed() const; // m_mutex held: SparePrepare lets a `prepare` begin now
  std::optional<std::chrono::steady_clock::time_point> session_due() const;
  bool session_beside_timing() const;
  void prepare_spare(std::unique_lock<std::mutex>& guard);
  void stop_retired(std::unique_lock<std::mutex>& guard);
  void spawn(std::unique_lock<std::mutex>& guard);
  void serve();

  std::filesystem::path m_binary;
  int m_device;
  ChildStart m_policy;
  CounterSessionAhead m_session_ahead;
  SparePrepare m_prepare;
  mutable std::mutex m_mutex;
  mutable std::condition_variable m_changed;
  std::chrono::milliseconds m_deadline;
  int m_evaluations = 0;                                // evaluations between begin and end
  int m_uncounted = 0;                                  // of those, not past done_counting()
  int m_untimed = 0;                                    // of those, not past done_timing()
  std::chrono::steady_clock::time_point m_idle_since{}; // when m_evaluations last became 0
  bool m_preparing = false;                             // the thread is preparing the spare
  bool m_counter_session_held = false;  // a child holds the GPU's range-profiler session
  bool m_sessions_ahead_allowed = true; // allow_sessions_ahead()
  ChildWorkGate m_gate;                 // m_mutex held
  std::optional<StartedChild> m_spare;
  std::vector<StartedChild> m_retiring;
  bool m_stopping_children = false; // the thread is stopping retired children
  bool m_wanted = false;            // the spawner should start a spare
  bool m_spawning = false;          // the spawner is starting one
  bool m_stopping = false;
  std::thread m_spawner; // last: started after everything it uses
};

// The counter-session right claimed for a scope (waiting at most `patience`) and given back
// when the scope ends, if it was taken. Never construct it with the GPU lock held.
class CounterSessionClaim {
public:
  CounterSessionClaim(SpareChildren& spares, std::chrono::milliseconds patience)
      : m_spares(spares), m_claimed(spares.claim_counter_session(patience)) {}
  ~CounterSessionClaim() {
    if (m_claimed)
      m_spares.release_counter_session();
  }
  CounterSessionClaim(const CounterSessionClaim&) = delete;
  CounterSessionClaim& operator=(const CounterSessionClaim&) = delete;

private:
  SpareChildren& m_spares;
  bool m_claimed;
};

// An evaluation's GPU part for a scope (SpareChildren::begin_evaluation … end_evaluation).
class RunningEvaluation {
public:
  explicit RunningEvaluation(SpareChildren& spares) : m_spares(spares) {
    m_spares.begin_evaluation();
  }
  ~RunningEvaluation() { m_spares.end_evaluation(m_counted, m_timed); }
  RunningEvaluation(const RunningEvaluation&) = delete;
  RunningEvaluation& operator=(const RunningEvaluation&) = delete;
  // The evaluation will not count again (SpareChildren::done_counting); idempotent.
  void done_counting() {
    if (!m_counted)
      m_spares.done_counting();
    m_counted = true;
  }
  // The evaluation's timing phase is over (SpareChildren::done_timing); idempotent.
  void done_timing() {
    if (!m_timed)
      m_spares.done_timing();
    m_timed = true;
  }

private:
  SpareChildren& m_spares;
  bool m_counted = false;
  bool m_timed = false;
};

// A timed window for a scope (SpareChildren::open_timed_window). Open it after taking the GPU
// lock: child work holds no GPU lock, so the order cannot deadlock.
class TimedWindow {
public:
  explicit TimedWindow(SpareChildren& spares) : m_spares(spares) { m_spares.open_timed_window(); }
  ~TimedWindow() { m_spares.close_timed_window(); }
  TimedWindow(const TimedWindow&) = delete;
  TimedWindow& operator=(const TimedWindow&) = delete;

private:
  SpareChildren& m_spares;
};

// A fresh, private log file path for one child.
std::filesystem::path fresh_child_log_path();

} // namespace ptxbench::exec
