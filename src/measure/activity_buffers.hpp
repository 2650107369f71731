// Host buffers for CUPTI's activity records, handed out again instead of allocated per request.
//
// Problem: the strict protocol flushes CUPTI once per timed call (cuptiActivityFlushAll forced,
// cupti_timer.cpp), which hands back the buffer holding that call's few records however empty
// it is. The next record then needs a new buffer, and CUPTI zeroes each buffer it is given in
// the application's thread before filling it. A fresh multi-megabyte allocation is new pages:
// page faults and zeroing on the first CUDA call after every flush, inside the harness's
// per-call overhead (docs/evaluation.md, "Timing": what it measured).
//
// Approach: buffers of one size, small enough that zeroing one costs microseconds and large
// enough for a batched trial's records in a few of them, kept after CUPTI hands them back
// (their pages stay mapped) and handed out again. Past `max_idle` idle buffers a returned one
// is freed, so a burst of records does not pin memory for good.
//
// Invariants: a buffer is either out (CUPTI holds it) or idle here, never both; take() never
// blocks on CUPTI and allocates only when none is idle; thread-safe (CUPTI requests buffers on
// the application's threads and may complete them on its own).
#pragma once

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

namespace ptxbench::measure {

class ActivityBuffers {
public:
  ActivityBuffers(std::size_t buffer_bytes, std::size_t max_idle);
  ~ActivityBuffers();
  ActivityBuffers(const ActivityBuffers&) = delete;
  ActivityBuffers& operator=(const ActivityBuffers&) = delete;

  // An idle buffer, or a new one of buffer_bytes() (aligned for CUPTI's records); nullptr when
  // the allocation fails (CUPTI then drops records and says how many).
  std::uint8_t* take();
  // A buffer take() handed out, idle again (or freed past max_idle).
  void give_back(std::uint8_t* buffer);

  std::size_t buffer_bytes() const { return m_buffer_bytes; }
  std::size_t idle() const;

private:
  const std::size_t m_buffer_bytes;
  const std::size_t m_max_idle;
  mutable std::mutex m_mutex;
  std::vector<std::uint8_t*> m_idle;
};

} // namespace ptxbench::measure
