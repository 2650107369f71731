// Several threads writing at once, through one shared store or through one connection each.
#include "store/run_store.hpp"
#include "store_test_support.hpp"
#include "util/hash.hpp"

#include <atomic>
#include <functional>
#include <gtest/gtest.h>
#include <thread>
#include <vector>

using namespace ptxbench;
using namespace ptxbench::store;
using namespace ptxbench::store::testing;

namespace {

constexpr int kThreads = 6;
constexpr int kTurnsPerThread = 12;

void write_trajectory(RunStore& store, int sample) {
  auto id = store.open_trajectory(sample_key(sample));
  if (!id)
    throw util::Fatal(id.error().message);
  for (int t = 0; t < kTurnsPerThread; ++t) {
    write_whole_turn(store, *id, t); // the same texts in every thread: dedup under contention
    if (!store.record_source("shared text"))
      throw util::Fatal("record_source failed");
  }
  if (!store.finish_trajectory(*id, ExitReason::turn_budget))
    throw util::Fatal("finish_trajectory failed");
}

void expect_every_trajectory_complete(RunStore& store) {
  auto all = store.trajectories();
  ASSERT_TRUE(all);
  ASSERT_EQ(all->size(), static_cast<std::size_t>(kThreads));
  for (const auto& trajectory : *all) {
    EXPECT_EQ(trajectory.status, TrajectoryStatus::finished);
    auto turns = store.finished_turns(trajectory.id);
    ASSERT_TRUE(turns);
    ASSERT_EQ(turns->size(), static_cast<std::size_t>(kTurnsPerThread));
    for (int t = 0; t < kTurnsPerThread; ++t)
      EXPECT_EQ((*turns)[t].index, t);
  }
}

void run_threads(const std::function<void(int)>& body) {
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int i = 0; i < kThreads; ++i)
    threads.emplace_back([&, i] {
      try {
        body(i);
      } catch (const std::exception& e) {
        ADD_FAILURE() << "thread " << i << ": " << e.what();
        ++failures;
      }
    });
  for (auto& thread : threads)
    thread.join();
  EXPECT_EQ(failures.load(), 0);
}

} // namespace

TEST(RunStoreConcurrency, ThreadsSharingOneStoreAllLand) {
  ScratchDir dir;
  auto store = open_store(dir.path());
  run_threads([&](int i) { write_trajectory(*store, i); });
  expect_every_trajectory_complete(*store);
}

TEST(RunStoreConcurrency, ThreadsWithTheirOwnConnectionsAllLand) {
  ScratchDir dir;
  auto store = open_store(dir.path());
  run_threads([&](int i) {
    auto own = open_store(dir.path());
    write_trajectory(*own, i);
  });
  expect_every_trajectory_complete(*store);
  auto shared = store->source(util::sha256_hex("shared text"));
  ASSERT_TRUE(shared && shared->has_value());
}
