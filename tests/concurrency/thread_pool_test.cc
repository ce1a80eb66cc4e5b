#include "parallel/thread_pool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <new>
#include <numeric>
#include <set>
#include <thread>
#include <vector>

namespace kiln::parallel {
namespace {

// `rounds` parallel_fors, each counting every item of `hits` once.
void count_every_item(ThreadPool& pool, std::vector<std::atomic<int>>& hits, int rounds) {
  for (int round = 0; round < rounds; ++round) {
    pool.parallel_for(static_cast<int64_t>(hits.size()), 1, [&](int64_t b, int64_t e) {
      for (int64_t i = b; i < e; ++i) hits[i].fetch_add(1);
    });
  }
}

// The threads that ran a parallel_for of two chunks, each blocking until both have started (so
// one thread cannot run both).
size_t threads_of_two_chunks(ThreadPool& pool) {
  std::mutex m;
  std::set<std::thread::id> ids;
  std::atomic<int> started{0};
  pool.parallel_for(2, 1, [&](int64_t, int64_t) {
    started.fetch_add(1);
    while (started.load() < 2) std::this_thread::yield();
    std::lock_guard<std::mutex> lock(m);
    ids.insert(std::this_thread::get_id());
  });
  return ids.size();
}

TEST(ThreadPool, EveryItemExactlyOnceAcrossManyDispatches) {
  ThreadPool pool(3);
  std::vector<std::atomic<int>> hits(1001);
  count_every_item(pool, hits, 200);
  for (const auto& h : hits) EXPECT_EQ(h.load(), 200);
}

TEST(ThreadPool, UsesMoreThanOneThread) {
  ThreadPool pool(2);
  EXPECT_EQ(threads_of_two_chunks(pool), 2u);
}

TEST(ThreadPool, GrainLimitsChunks) {
  ThreadPool pool(4);
  std::atomic<int> calls{0};
  pool.parallel_for(10, 8, [&](int64_t b, int64_t e) {
    calls.fetch_add(1);
    EXPECT_EQ(b, 0);
    EXPECT_EQ(e, 10);
  });
  EXPECT_EQ(calls.load(), 1);
}

TEST(ThreadPool, NullPoolRunsOnCaller) {
  int64_t sum = 0;
  parallel_for(nullptr, 100, 1, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) sum += i;
  });
  EXPECT_EQ(sum, 4950);
}

TEST(ThreadPool, SleepsAndWakesAfterIdle) {
  ThreadPool pool(2);
  std::atomic<int64_t> sum{0};
  for (int round = 0; round < 3; ++round) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));  // past the spin window
    pool.parallel_for(64, 1, [&](int64_t b, int64_t e) { sum.fetch_add(e - b); });
  }
  EXPECT_EQ(sum.load(), 3 * 64);
}

TEST(ThreadPool, SegmentRunsItsBodyOnTheCallerAndSplitsItsParallelFors) {
  ThreadPool pool(2);
  const std::thread::id caller = std::this_thread::get_id();
  std::vector<std::atomic<int>> hits(1001);
  std::thread::id body_thread;
  size_t threads = 0;
  pool.run_segment([&] {
    body_thread = std::this_thread::get_id();
    count_every_item(pool, hits, 300);
    threads = threads_of_two_chunks(pool);
  });
  EXPECT_EQ(body_thread, caller);
  for (const auto& h : hits) EXPECT_EQ(h.load(), 300);
  EXPECT_EQ(threads, 2u);
}

TEST(ThreadPool, SegmentsFollowEachOtherAndParallelForsOutsideThem) {
  ThreadPool pool(2);
  std::atomic<int64_t> sum{0};
  const auto add = [&](int64_t b, int64_t e) { sum.fetch_add(e - b); };
  for (int round = 0; round < 50; ++round) {
    pool.run_segment([&] {
      pool.parallel_for(64, 1, add);
      if (round % 10 == 0) std::this_thread::sleep_for(std::chrono::milliseconds(2));
      pool.parallel_for(64, 1, add);
      pool.parallel_for(5, 8, add);  // one chunk: on the caller
    });
    pool.parallel_for(64, 1, add);
  }
  EXPECT_EQ(sum.load(), 50 * (3 * 64 + 5));
}

TEST(ThreadPool, SegmentInASegmentRunsInline) {
  ThreadPool pool(2);
  std::atomic<int64_t> sum{0};
  pool.run_segment([&] {
    pool.run_segment(
        [&] { pool.parallel_for(100, 1, [&](int64_t b, int64_t e) { sum.fetch_add(e - b); }); });
    pool.parallel_for(100, 1, [&](int64_t b, int64_t e) { sum.fetch_add(e - b); });
  });
  EXPECT_EQ(sum.load(), 200);
}

// An exception thrown by the body (a std::bad_alloc, which kiln's CLI turns into an error) reaches
// the caller, and the pool works on.
TEST(ThreadPool, SegmentPassesTheBodysExceptionToTheCaller) {
  ThreadPool pool(2);
  std::atomic<int64_t> sum{0};
  const auto add = [&](int64_t b, int64_t e) { sum.fetch_add(e - b); };
  EXPECT_THROW(pool.run_segment([&] {
    pool.parallel_for(10, 1, add);
    throw std::bad_alloc();
  }),
               std::bad_alloc);
  pool.run_segment([&] { pool.parallel_for(10, 1, add); });
  pool.parallel_for(10, 1, add);
  EXPECT_EQ(sum.load(), 30);
}

// More threads than this machine's cores: the threads waiting in a segment must yield the cores
// to the ones they wait for.
TEST(ThreadPool, SegmentWithMoreThreadsThanCores) {
  ThreadPool pool(2 * default_thread_count() + 1);
  std::vector<std::atomic<int>> hits(997);
  pool.run_segment([&] {
    for (int round = 0; round < 20; ++round) {
      pool.parallel_for(static_cast<int64_t>(hits.size()), 1, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) hits[i].fetch_add(1);
        std::this_thread::sleep_for(std::chrono::microseconds(200));
      });
    }
  });
  for (const auto& h : hits) EXPECT_EQ(h.load(), 20);
}

TEST(ThreadPool, DefaultThreadCountIsPositive) { EXPECT_GE(default_thread_count(), 1); }

}  // namespace
}  // namespace kiln::parallel
