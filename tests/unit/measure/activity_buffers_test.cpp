#include "measure/activity_buffers.hpp"

#include <cstring>
#include <gtest/gtest.h>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

namespace ptxbench::measure {
namespace {

TEST(ActivityBuffers, HandsOutAlignedBuffersOfItsSizeRoundedToRecordAlignment) {
  ActivityBuffers buffers(1001, 4);
  EXPECT_EQ(buffers.buffer_bytes(), 1008u);
  std::uint8_t* buffer = buffers.take();
  ASSERT_NE(buffer, nullptr);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(buffer) % 8, 0u);
  std::memset(buffer, 0xAB, buffers.buffer_bytes()); // the whole size is writable
  buffers.give_back(buffer);
}

TEST(ActivityBuffers, ABufferGivenBackIsHandedOutAgainInsteadOfANewOne) {
  ActivityBuffers buffers(std::size_t{256} << 10, 4);
  std::uint8_t* first = buffers.take();
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(buffers.idle(), 0u);
  buffers.give_back(first);
  EXPECT_EQ(buffers.idle(), 1u);
  EXPECT_EQ(buffers.take(), first);
  EXPECT_EQ(buffers.idle(), 0u);
  // One out, so the next is another buffer, never the one CUPTI still holds.
  std::uint8_t* second = buffers.take();
  EXPECT_NE(second, first);
  buffers.give_back(first);
  buffers.give_back(second);
  EXPECT_EQ(buffers.idle(), 2u);
}

TEST(ActivityBuffers, PastItsIdleLimitAReturnedBufferIsFreed) {
  ActivityBuffers buffers(4096, 2);
  std::vector<std::uint8_t*> out;
  for (int i = 0; i < 5; ++i)
    out.push_back(buffers.take());
  for (std::uint8_t* buffer : out)
    buffers.give_back(buffer);
  EXPECT_EQ(buffers.idle(), 2u);
  buffers.give_back(nullptr); // a failed take() handed back: nothing kept
  EXPECT_EQ(buffers.idle(), 2u);

  ActivityBuffers none_kept(4096, 0); // a fresh allocation per buffer
  none_kept.give_back(none_kept.take());
  EXPECT_EQ(none_kept.idle(), 0u);
}

// CUPTI asks on the application's threads and hands back on its own: a buffer is never out
// twice at once.
TEST(ActivityBuffers, ThreadsTakingAndGivingBackNeverHoldTheSameBuffer) {
  ActivityBuffers buffers(4096, 8);
  std::mutex guard;
  std::set<std::uint8_t*> out;
  bool shared = false;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 2000; ++i) {
        std::uint8_t* buffer = buffers.take();
        {
          const std::lock_guard lock(guard);
          shared = shared || !out.insert(buffer).second;
        }
        {
          const std::lock_guard lock(guard);
          out.erase(buffer);
        }
        buffers.give_back(buffer);
      }
    });
  for (std::thread& thread : threads)
    thread.join();
  EXPECT_FALSE(shared);
  EXPECT_LE(buffers.idle(), 4u); // never more idle than were ever out at once
}

} // namespace
} // namespace ptxbench::measure
