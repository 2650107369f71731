// When a candidate child's GPU-side work may run beside evaluations (spare_child.hpp).
//
// Problem. A child's preparation (driver, CUPTI, context, the range profiler's session) and a
// retired child's end (its context's teardown) take up to a second each; done only
// while the GPU is idle, back-to-back evaluations never find a child ready, and the start
// sits on every evaluation's critical path. Done at any moment, it would overlap a timed
// trial: driver initialisation alone in another process measurably slowed one
// (bench/results/eval_wall_time_h200.md).
//
// Approach. Evaluations declare their timed windows (the timing phase: preheat and every
// trial); the spare-child thread declares its child work (one `prepare`, one child's stop).
// Child work begins only while no timed window is open or waiting; a timed window opens only
// once no child work is in flight, and from the moment it waits no new child work begins.
// Everything else an evaluation does (inputs, load, correctness, counting, re-check, tool
// passes) may run beside child work. (Under CounterSessionAhead::beside_timing, the opening of
// a prepared spare's counter session is not child work and may overlap a window:
// spare_child.hpp "The counter session".)
//
// Invariant. A timed window and child work are never open at the same time: both transitions
// check the other side's state explicitly and refuse (a bug: util::Fatal) otherwise. The
// gate is a plain state machine; its owner (SpareChildren) guards it with its mutex and waits
// on its condition variable for may_begin_child_work() / may_open_timed_window().
#pragma once

#include "util/error.hpp"

namespace ptxbench::exec {

class ChildWorkGate {
public:
  bool may_begin_child_work() const { return m_open == 0 && m_waiting == 0; }
  bool may_open_timed_window() const { return m_child_work == 0; }
  bool timed_window_open() const { return m_open > 0; }
  int child_work() const { return m_child_work; }

  void begin_child_work() {
    if (!may_begin_child_work())
      throw util::Fatal("child work asked to begin while a timed window is open or waiting");
    ++m_child_work;
  }
  void end_child_work() {
    if (m_child_work == 0)
      throw util::Fatal("child work ended that never began");
    --m_child_work;
  }
  // An evaluation wants a timed window: from now on no child work begins.
  void want_timed_window() { ++m_waiting; }
  void open_timed_window() {
    if (m_waiting == 0)
      throw util::Fatal("a timed window opened that nobody wanted");
    if (!may_open_timed_window())
      throw util::Fatal("a timed window asked to open while child work is in flight");
    --m_waiting;
    ++m_open;
  }
  void close_timed_window() {
    if (m_open == 0)
      throw util::Fatal("a timed window closed that never opened");
    --m_open;
  }

private:
  int m_open = 0;       // timed windows open
  int m_waiting = 0;    // timed windows waiting for child work to end
  int m_child_work = 0; // prepares and child stops in flight
};

} // namespace ptxbench::exec
