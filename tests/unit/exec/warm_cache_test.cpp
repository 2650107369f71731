// The Evaluator's warm state without a GPU: leases (one evaluation at a time per entry), the
// budget and least-recently-used eviction, and the reader/writer GPU lock's exclusion and
// writer preference.
#include "exec/gpu_lock.hpp"
#include "exec/warm_cache.hpp"

#include <atomic>
#include <chrono>
#include <gtest/gtest.h>
#include <mutex>
#include <shared_mutex>
#include <thread>
#include <vector>

namespace ptxbench::exec {
namespace {

using namespace std::chrono_literals;

TEST(WarmCache, AnEntryIsLeasedToOneTakerAtATime) {
  WarmCache<int> cache(100);
  cache.give_back("gemm | seed 1", std::make_unique<int>(7), 10);
  auto first = cache.take("gemm | seed 1");
  ASSERT_TRUE(first);
  EXPECT_EQ(*first, 7);
  EXPECT_FALSE(cache.take("gemm | seed 1")); // the second evaluation builds its own
  EXPECT_EQ(cache.idle_cost(), 0u);
  cache.give_back("gemm | seed 1", std::move(first), 10);
  EXPECT_TRUE(cache.contains("gemm | seed 1"));
  EXPECT_EQ(cache.idle_cost(), 10u);
}

TEST(WarmCache, GivingBackEvictsTheLeastRecentlyUsedUntilTheBudgetFits) {
  WarmCache<int> cache(25);
  cache.give_back("a", std::make_unique<int>(1), 10);
  cache.give_back("b", std::make_unique<int>(2), 10);
  cache.give_back("a", cache.take("a"), 10); // a is now the most recently used
  cache.give_back("c", std::make_unique<int>(3), 10);
  EXPECT_TRUE(cache.contains("a"));
  EXPECT_FALSE(cache.contains("b"));
  EXPECT_TRUE(cache.contains("c"));
  EXPECT_EQ(cache.idle_cost(), 20u);
}

TEST(WarmCache, AnEntryLargerThanTheBudgetIsNotKept) {
  WarmCache<int> cache(25);
  cache.give_back("small", std::make_unique<int>(1), 10);
  cache.give_back("huge", std::make_unique<int>(2), 26);
  EXPECT_FALSE(cache.contains("huge"));
  EXPECT_TRUE(cache.contains("small"));
}

TEST(WarmCache, TheNewerOfTwoEntriesForOneKeyStays) {
  WarmCache<int> cache(100);
  cache.give_back("k", std::make_unique<int>(1), 10);
  cache.give_back("k", std::make_unique<int>(2), 10);
  EXPECT_EQ(cache.idle_entries(), 1u);
  EXPECT_EQ(cache.idle_cost(), 10u);
  EXPECT_EQ(*cache.take("k"), 2);
}

TEST(GpuLock, AnExclusiveHolderExcludesSharedHolders) {
  GpuLock lock;
  std::atomic<bool> shared_entered{false};
  std::unique_lock exclusive(lock);
  std::thread reader([&] {
    std::shared_lock shared(lock);
    shared_entered = true;
  });
  std::this_thread::sleep_for(50ms);
  EXPECT_FALSE(shared_entered);
  exclusive.unlock();
  reader.join();
  EXPECT_TRUE(shared_entered);
}

TEST(GpuLock, SharedHoldersRunTogether) {
  GpuLock lock;
  std::shared_lock first(lock);
  std::atomic<bool> second_entered{false};
  std::thread other([&] {
    std::shared_lock second(lock);
    second_entered = true;
  });
  other.join(); // would hang if shared holders excluded each other
  EXPECT_TRUE(second_entered);
}

TEST(GpuLock, AWaitingWriterGoesBeforeNewReaders) {
  GpuLock lock;
  std::vector<int> order;
  std::mutex order_mutex;
  auto record = [&](int who) {
    std::lock_guard guard(order_mutex);
    order.push_back(who);
  };
  std::shared_lock held(lock);
  std::thread writer([&] {
    std::unique_lock exclusive(lock);
    record(1);
  });
  std::this_thread::sleep_for(50ms); // the writer is waiting for `held`
  std::thread reader([&] {
    std::shared_lock shared(lock);
    record(2);
  });
  std::this_thread::sleep_for(50ms);
  held.unlock();
  writer.join();
  reader.join();
  ASSERT_EQ(order.size(), 2u);
  EXPECT_EQ(order[0], 1);
  EXPECT_EQ(order[1], 2);
}

} // namespace
} // namespace ptxbench::exec
