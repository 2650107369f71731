// The reader/writer lock that lets several evaluations share one GPU (evaluator.hpp).
//
// Timing and counting hold it exclusively: nothing else of the supervisor's runs on the GPU
// while a trial is timed or counters are collected. Every other GPU phase (inputs, reference
// outputs, a child's context, correctness, re-check, sanitizer) holds it shared. Writers are
// preferred: once a timing phase waits, new shared holders wait behind it, so a stream of
// short shared phases cannot starve timing. Not recursive: a thread never asks for it twice.
#pragma once

#include <condition_variable>
#include <mutex>

namespace ptxbench::exec {

class GpuLock {
public:
  // Exclusive (std::unique_lock).
  void lock() {
    std::unique_lock guard(m_mutex);
    ++m_waiting_writers;
    m_changed.wait(guard, [&] { return !m_writer && m_readers == 0; });
    --m_waiting_writers;
    m_writer = true;
  }
  void unlock() {
    {
      std::lock_guard guard(m_mutex);
      m_writer = false;
    }
    m_changed.notify_all();
  }
  // Shared (std::shared_lock).
  void lock_shared() {
    std::unique_lock guard(m_mutex);
    m_changed.wait(guard, [&] { return !m_writer && m_waiting_writers == 0; });
    ++m_readers;
  }
  void unlock_shared() {
    bool last = false;
    {
      std::lock_guard guard(m_mutex);
      last = --m_readers == 0;
    }
    if (last)
      m_changed.notify_all();
  }

private:
  std::mutex m_mutex;
  std::condition_variable m_changed;
  int m_readers = 0;
  int m_waiting_writers = 0;
  bool m_writer = false;
};

} // namespace ptxbench::exec
